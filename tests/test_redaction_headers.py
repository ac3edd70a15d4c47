"""Header values are credentials by default: redaction by name
patterns let `X-Custom-Auth`, `Private-Token`, `X-Amz-Security-Token`, `X-Access-Key`
through. Only a short allow-list of harmless headers keeps its value; every other header
keeps its name and loses its value, wherever a headers mapping sits. What is *sent* is
unchanged, and the cache never makes two different header sets share an entry wrongly.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from assay.models import ChatRequest, ModelConfig, cache_key, make_client
from assay.models._config import Decoding
from assay.prompts._prompt import Message
from assay.redaction import (
    MARKER,
    SAFE_HEADERS,
    redact,
    redact_for_cache_key,
    redact_with_paths,
    scrub_text,
    secret_values,
)
from assay.testing import FakeOpenAIServer, http_error, reply
from tests._cli import invoke

GOOD = '{"label": "fully_supported", "confidence": 0.9, "rationale": "stated"}'
PLANTED = {
    "X-Custom-Auth": "planted-custom-auth-3f9a1c",
    "Private-Token": "planted-private-token-8d2e4b",
    "X-Amz-Security-Token": "planted-amz-token-5c7a9e",
    "X-Access-Key": "planted-access-key-1b3d5f",
    "X-Tenant": "planted-tenant-value-6e8a0c",
}
REQUEST = ChatRequest(messages=[Message(role="user", content="hi")], decoding=Decoding())


@pytest.mark.parametrize("container", ["extra_headers", "headers", "default_headers"])
def test_every_header_value_is_redacted_unless_allow_listed(container: str) -> None:
    harmless = {"User-Agent": "assay-test/1", "Accept": "application/json"}
    value = {"extra_body": {container: {**PLANTED, **harmless, "Empty": ""}}}
    clean, paths = redact_with_paths(value)
    headers = clean["extra_body"][container]
    assert {k: headers[k] for k in PLANTED} == dict.fromkeys(PLANTED, MARKER)
    assert {k: headers[k] for k in harmless} == harmless and headers["Empty"] == ""
    assert sorted(paths) == sorted(f"extra_body.{container}.{k}" for k in PLANTED)
    assert redact(clean) == clean


def test_allow_list_is_short_and_matched_without_case() -> None:
    assert {"user_agent", "accept", "content_type"} <= SAFE_HEADERS and len(SAFE_HEADERS) < 12
    clean = redact({"extra_headers": {"user-agent": "ua", "CONTENT-TYPE": "application/json"}})
    assert clean == {"extra_headers": {"user-agent": "ua", "CONTENT-TYPE": "application/json"}}
    # OpenAI-Organization: a name only, its value names the paying account
    org = redact({"extra_headers": {"OpenAI-Organization": "org-abc123"}})
    assert org == {"extra_headers": {"OpenAI-Organization": MARKER}}


def test_header_values_are_registered_for_free_text() -> None:
    found = secret_values({"extra_headers": {**PLANTED, "User-Agent": "assay-test/1"}})
    assert set(PLANTED.values()) <= set(found) and "assay-test/1" not in found


def test_cache_key_tells_headers_apart_but_not_rotated_credentials() -> None:
    """A routing header (`X-Tenant`) changes the answer: it is part of the key, by a
    digest. A header whose name says credential (`X-Custom-Auth`) is not: a new token
    keeps the cache, as `Authorization` does. No header value appears in the key parts."""

    def key(headers: dict[str, str]) -> str:
        config = ModelConfig(model="openai/m", extra_body={"extra_headers": headers})
        return cache_key(config, REQUEST)

    assert key({"X-Tenant": "a"}) != key({"X-Tenant": "b"})
    assert key({"X-Custom-Auth": "tok-aaaaaaaa"}) == key({"X-Custom-Auth": "tok-bbbbbbbb"})
    assert key({"X-Access-Key": "aaaaaaaaaa"}) == key({"X-Access-Key": "bbbbbbbbbb"})
    parts = json.dumps(redact_for_cache_key({"extra_headers": PLANTED}))
    assert not any(v in parts for v in PLANTED.values())


@pytest.mark.parametrize("transport", ["litellm", "openai"])
def test_redaction_does_not_change_what_is_sent(server: FakeOpenAIServer, transport: str) -> None:
    server.default = reply(GOOD)
    config = ModelConfig.model_validate(
        {
            "model": "openai/fake",
            "api_base": server.base_url,
            "extra_body": {"extra_headers": PLANTED},
            "transport": transport,
        }
    )
    client = make_client(config, None)
    result = asyncio.run(client.complete(REQUEST))
    assert result.error is None
    seen = server.headers_seen[-1]
    assert {k: seen.get(k.lower()) for k in PLANTED} == PLANTED
    assert client.describe()["extra_body"]["extra_headers"] == dict.fromkeys(PLANTED, MARKER)


def _spec(tmp: Path, base: str, transport: str) -> Path:
    headers = ", ".join(f'{k} = "{v}"' for k, v in PLANTED.items())
    pairs = Path(__file__).resolve().parents[1] / "assay" / "data" / "forcebench_demo.jsonl"
    lines = pairs.read_text(encoding="utf-8").splitlines(True)[:2]
    (tmp / "pairs.jsonl").write_text("".join(lines), encoding="utf-8")
    spec = tmp / "spec.toml"
    spec.write_text(
        f"""name = "headers"
bootstrap = 0
[failure]
max_failed_fraction = 1.0
[[datasets]]
name = "mini"
path = "{tmp / "pairs.jsonl"}"
[defaults]
max_attempts = 1
transport = "{transport}"
[[judges]]
models = ["openai/fake-judge"]
prompts = ["generic-support@1"]
api_base = "{base}"
extra_body = {{ extra_headers = {{ {headers} }} }}
""",
        encoding="utf-8",
    )
    return spec


def _leaks(text: str) -> list[str]:
    return [v for v in PLANTED.values() if v in text]


@pytest.mark.parametrize("transport", ["litellm", "openai"])
def test_no_header_value_reaches_run_files_or_output(
    tmp_path: Path, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, transport: str
) -> None:
    """The server echoes every header value in an error body once."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-unused-for-a-local-server")
    echoed = {"error": {"message": "bad headers: " + " ".join(PLANTED.values())}}
    server.script(None, [http_error(500, body=echoed)])
    server.default = reply(GOOD)
    spec = _spec(tmp_path, server.base_url, transport)
    out_dir = tmp_path / "out"
    outputs = []
    for argv in (
        ["validate", str(spec)],
        ["run", str(spec), "--dry-run"],
        ["run", str(spec), "--dry-run", "-f", "json"],
        ["run", str(spec), "--output-dir", str(out_dir), "--no-progress"],
        ["report", str(out_dir), "-f", "json"],
        ["report", str(out_dir), "-f", "html", "-o", str(tmp_path / "r.html")],
    ):
        code, out, err = invoke(argv)
        assert code == 0, (argv, out, err)
        outputs.append(out + err)
    assert [_leaks(o) for o in outputs] == [[]] * len(outputs)
    seen = server.headers_seen
    assert all(h.get("x-custom-auth") == PLANTED["X-Custom-Auth"] for h in seen)
    files = {p: _leaks(p.read_text(errors="replace")) for p in tmp_path.rglob("*") if p.is_file()}
    assert {str(p): hit for p, hit in files.items() if hit and p.name != "spec.toml"} == {}
    manifest = json.loads((out_dir / "manifest.json").read_text(encoding="utf-8"))
    sent = manifest["judges"][0]["client"]["extra_body"]["extra_headers"]
    assert sent == dict.fromkeys(PLANTED, MARKER)
    assert "spec.judges[0].extra_body.extra_headers.X-Custom-Auth" in manifest["redacted_fields"]
    records = (out_dir / "judgments.jsonl").read_text(encoding="utf-8")
    assert "bad headers" in records and MARKER in records  # the echo, scrubbed


def test_scrub_text_keeps_harmless_text() -> None:
    assert scrub_text("X-Tenant header missing") == "X-Tenant header missing"


@pytest.mark.parametrize("transport", ["litellm", "openai"])
def test_headers_key_travels_as_headers_on_both_transports(
    server: FakeOpenAIServer, transport: str
) -> None:
    """litellm sends `extra_body.headers` as HTTP headers; the lean transport sent them
    in the JSON body (a credential in a request body the server may log)."""
    server.default = reply(GOOD)
    config = ModelConfig.model_validate(
        {
            "model": "openai/fake",
            "api_base": server.base_url,
            "extra_body": {"headers": {"X-Custom-Auth": PLANTED["X-Custom-Auth"]}},
            "transport": transport,
        }
    )
    result = asyncio.run(make_client(config, None).complete(REQUEST))
    assert result.error is None
    assert server.headers_seen[-1].get("x-custom-auth") == PLANTED["X-Custom-Auth"]
    assert "headers" not in server.requests[-1]


def test_ping_line_never_shows_a_header_value(
    tmp_path: Path, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`validate --ping` prints the server's error, which here echoes every header."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-unused-for-a-local-server")
    echoed = {"error": {"message": "bad headers: " + " ".join(PLANTED.values())}}
    server.default = http_error(400, body=echoed)
    code, out, err = invoke(["validate", str(_spec(tmp_path, server.base_url, "openai")), "--ping"])
    assert code == 1 and "FAIL" in out + err and "bad headers" in out + err
    assert _leaks(out + err) == []


def test_fake_server_stats_show_no_header_value(server: FakeOpenAIServer) -> None:
    """`GET /_control/stats` (and `.stats`) redact headers by the same rule."""
    server.default = reply(GOOD)
    config = ModelConfig.model_validate(
        {"model": "openai/fake", "api_base": server.base_url, "extra_body": {"headers": PLANTED}}
    )
    assert asyncio.run(make_client(config, None).complete(REQUEST)).error is None
    shown = server.stats.headers[-1]
    assert {k: shown[k.lower()] for k in PLANTED} == dict.fromkeys(PLANTED, MARKER)
    assert _leaks(json.dumps(server.stats.headers)) == []
    assert server.headers_seen[-1]["x-custom-auth"] == PLANTED["X-Custom-Auth"]
