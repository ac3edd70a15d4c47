"""Credentials never reach a file or a terminal (issue #7, part 1).

End to end: distinct secrets are planted in the provider's variable, an `api_key_env`
variable, an `api_base` (userinfo and query) and `extra_body` headers; judges and a
verifier succeed and fail (the server echoes secrets in error bodies); then every CLI
command that reads or writes the run is executed and no byte anywhere holds a secret.
Unit tests pin the redaction rules themselves.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from assay.errors import ModelConfigError
from assay.models import ChatRequest, ModelConfig, cache_key, make_client
from assay.models._config import Decoding
from assay.models._types import Message
from assay.redaction import (
    MARKER,
    credential_shapes,
    is_secret_key,
    redact,
    redact_url,
    redact_with_paths,
    register_secrets,
    scrub_text,
    secret_values,
)
from assay.testing import Behavior, FakeOpenAIServer, http_error, reply

ROOT = Path(__file__).resolve().parents[1]
GOOD = '{"label": "fully_supported", "confidence": 0.9, "rationale": "stated"}'

PROVIDER = "sk-planted-PROVIDER-7f3a91c2e5d4"  # OPENAI_API_KEY
KEY_ENV = "planted-KEYENV-2b8d4e6f1a3c"  # the variable named by api_key_env
USER = "planted-USER-5e7a9c1b3d"  # api_base userinfo
PASSWORD = "planted-PASS-9c1e3b5d7f"
QUERY_API_KEY = "planted-QUERY-APIKEY-4d2f6a8c"  # api_base ?api-key=
QUERY_KEY = "planted-QUERY-KEY-1e3a5c7b9d"  # api_base &key=
HEADER = "planted-HEADER-8a6c4e2f0b"  # extra_body.extra_headers
SECRETS = (PROVIDER, KEY_ENV, USER, PASSWORD, QUERY_API_KEY, QUERY_KEY, HEADER)
KEY_VAR = "ASSAY_REDACTION_TEST_KEY"

ANSWERS = [
    {
        "id": "a1",
        "question": "q1",
        "answer": "Aspirin thins the blood. Aspirin cures colds.",
        "evidence": [{"id": "p1", "text": "Aspirin thins the blood."}],
    },
    {
        "id": "a2",
        "question": "q2",
        "answer": "Water boils at 100 C at sea level.",
        "evidence": [{"id": "p2", "text": "At sea level water boils at 100 C."}],
    },
]


def _echo_error(status: int, *secrets: str) -> Behavior:
    """A provider error whose body quotes credentials back, as real providers do."""
    message = "Incorrect API key provided: " + " / ".join(secrets)
    body = {"error": {"message": message, "type": "invalid_request_error", "code": None}}
    return http_error(status, body=body)


def _responder() -> Any:
    """Per model: the judge's and verifier's first request fail (echoing secrets), the
    rest succeed; the provider-key judge always gets a 401 echoing its key."""
    counters = {"fake-judge": itertools.count(), "fake-verifier": itertools.count()}
    lock = threading.Lock()

    def respond(body: dict[str, Any]) -> Behavior:
        model = body.get("model")
        if model == "fake-provider":
            return _echo_error(401, PROVIDER)
        with lock:
            n = next(counters[str(model)])
        if model == "fake-judge":
            return _echo_error(500, KEY_ENV, HEADER) if n == 0 else reply(GOOD)
        return _echo_error(400, HEADER, KEY_ENV) if n == 0 else reply("Answer: True")

    return respond


def _write_inputs(tmp: Path, server: FakeOpenAIServer, transport: str = "litellm") -> Path:
    pairs = (ROOT / "assay" / "data" / "forcebench_demo.jsonl").read_text(encoding="utf-8")
    (tmp / "pairs.jsonl").write_text("".join(pairs.splitlines(True)[:2]), encoding="utf-8")
    (tmp / "answers.jsonl").write_text(
        "".join(json.dumps(a) + "\n" for a in ANSWERS), encoding="utf-8"
    )
    base = server.base_url
    with_creds = base.replace("http://", f"http://{USER}:{PASSWORD}@")
    query = f"?api-key={QUERY_API_KEY}&key={QUERY_KEY}"
    headers = f'extra_headers = {{ Authorization = "Bearer {HEADER}" }}'
    spec = tmp / "spec.toml"
    spec.write_text(
        f"""
name = "redaction"
bootstrap = 0
[failure]
max_failed_fraction = 1.0
[[datasets]]
name = "mini"
path = "pairs.jsonl"
[defaults]
max_attempts = 1
timeout_s = 5
max_concurrency = 2
transport = "{transport}"
[[judges]]
models = ["openai/fake-judge"]
prompts = ["generic-support@1"]
api_base = "{base}"
api_key_env = "{KEY_VAR}"
extra_body = {{ {headers}, metadata = {{ run = "redaction" }} }}
[[judges]]
models = ["openai/fake-provider"]
prompts = ["generic-support@1"]
api_base = "{base}"
[[judges]]
models = ["openai/fake-urlcreds"]
prompts = ["generic-support@1"]
api_base = "{with_creds}{query}"
[[judges]]
models = ["openai/fake-query"]
prompts = ["generic-support@1"]
api_base = "{base}{query}"
[factuality]
datasets = [{{ path = "answers.jsonl", format = "jsonl" }}]
[factuality.decomposer]
kind = "sentence"
[[factuality.verifiers]]
kind = "context"
model = "openai/fake-verifier"
api_base = "{base}"
api_key_env = "{KEY_VAR}"
extra_body = {{ extra_headers = {{ x-api-key = "{HEADER}" }} }}
""",
        encoding="utf-8",
    )
    return spec


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ASSAY_"))}
    env.update(
        HOME=str(tmp / "home"),
        XDG_CACHE_HOME=str(tmp / "home" / ".cache"),
        ASSAY_CACHE_DIR=str(tmp / "cache"),
        OPENAI_API_KEY=PROVIDER,
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        NO_COLOR="1",
        COLUMNS="200",
    )
    env[KEY_VAR] = KEY_ENV
    return env


def _assay(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "assay", *args],
        cwd=tmp,
        env=_env(tmp),
        capture_output=True,
        text=True,
        timeout=180,
    )


def _cli(capfd: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """An `assay` command in this process (as `main()` runs it): exit status and output."""
    from assay.cli import main

    capfd.readouterr()
    saved = sys.argv
    sys.argv = ["assay", *args]
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    finally:
        sys.argv = saved
    out, err = capfd.readouterr()
    return code, out + err


def _leaks(data: bytes | str) -> list[str]:
    raw = data.encode() if isinstance(data, str) else data
    return [s for s in SECRETS if s.encode() in raw]


def _file_leaks(*roots: Path) -> dict[str, list[str]]:
    found = {}
    for root in roots:
        for path in root.rglob("*"):
            if path.is_file() and (hit := _leaks(path.read_bytes())):
                found[str(path)] = hit
    return found


@pytest.mark.parametrize("transport", ["litellm", "openai"])
def test_no_planted_secret_reaches_any_file_or_terminal(
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    transport: str,
) -> None:
    """`assay run` in its own process with the secrets in its environment; the commands
    that only read the run directory in this process, which never saw the secrets."""
    (tmp_path / "home").mkdir()
    (tmp_path / "reports").mkdir()
    run_dir, reports = tmp_path / "out", tmp_path / "reports"
    with FakeOpenAIServer(responder=_responder()) as server:
        spec = _write_inputs(tmp_path, server, transport)
        runs = [_assay(tmp_path, "run", "spec.toml", "--output-dir", "out", "--no-progress")]
        headers = server.headers_seen
        by_path = server.stats.by_path
        stats_http = httpx.get(server.url + "/_control/stats").text
    # the credentials did reach the server, where they belong
    assert any(h.get("authorization") == f"Bearer {HEADER}" for h in headers)
    assert any(h.get("authorization") == f"Bearer {PROVIDER}" for h in headers)
    assert any(h.get("x-api-key") == HEADER for h in headers)
    # the api_base with a query reached the server (litellm appends the path after the
    # query; the lean transport keeps the query after /chat/completions)
    assert by_path.get("/v1" if transport == "litellm" else "/v1/chat/completions", 0) >= 1
    assert _leaks(stats_http) == []  # the stats endpoint echoes no credential header
    assert runs[0].returncode == 0, runs[0].stdout + runs[0].stderr
    assert _leaks(runs[0].stdout + runs[0].stderr) == []
    for name, value in _env(tmp_path).items():
        if name in ("HOME", "XDG_CACHE_HOME", "ASSAY_CACHE_DIR"):
            monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    commands = [["report", "out", "--detail"], ["recompute", "out"], ["reparse", "out"]]
    for fmt in ("table", "json", "csv", "markdown", "html"):
        commands += [
            ["report", "out", "-f", fmt],
            ["report", "out", "-f", fmt, "-o", f"reports/r.{fmt}"],
        ]
    commands.append(["cache", "info"])
    # last: building the clients teaches this process the spec's secrets (scrub_text)
    plan = ["run", "spec.toml", "--dry-run", "--output-dir", "plan"]
    commands += [plan, [*plan, "-f", "json"]]
    for args in commands:
        code, output = _cli(capfd, *args)
        assert code == 0, (args, output)
        assert _leaks(output) == [], args
    assert (run_dir / "report.html").exists() and (reports / "r.html").exists()
    home = tmp_path / "home"
    assert _file_leaks(run_dir, tmp_path / "cache", reports, home) == {}
    assert any((tmp_path / "cache").rglob("*.db"))  # the cache was written and scanned

    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    _check_manifest(manifest)
    records = (run_dir / "judgments.jsonl").read_text(encoding="utf-8")
    assert MARKER in records  # the echoed secrets were there, and were replaced
    assert spec.exists()


def _check_manifest(manifest: dict[str, Any]) -> None:
    fields = manifest["redacted_fields"]
    assert "spec.judges[0].extra_body.extra_headers.Authorization" in fields
    assert "spec.judges[2].api_base" in fields and "spec.judges[3].api_base" in fields
    assert "judges[0].client.extra_body.extra_headers.Authorization" in fields
    client = manifest["judges"][0]["client"]
    # litellm adds its own fields to `metadata`; they must not come back into the manifest
    assert client["extra_body"]["metadata"] == {"run": "redaction"}
    assert client["extra_body"]["extra_headers"]["Authorization"] == MARKER
    assert manifest["judges"][2]["client"]["api_base"].endswith("/v1")
    assert "@" not in manifest["judges"][2]["client"]["api_base"]
    verifier = manifest["factuality"]["verifiers"][0]["client"]
    assert verifier["extra_body"]["extra_headers"]["x-api-key"] == MARKER
    assert manifest["spec"]["judges"][0]["api_key_env"] == KEY_VAR  # a name, kept


# ---------------------------------------------------------------- client-level checks


@pytest.mark.parametrize("transport", ["litellm", "openai"])
def test_user_dicts_are_copied_before_litellm(server: FakeOpenAIServer, transport: str) -> None:
    server.default = reply(GOOD)
    metadata = {"run": "copy"}
    config = ModelConfig.model_validate(
        {
            "model": "openai/fake",
            "api_base": server.base_url,
            "extra_body": {"metadata": metadata},
            "transport": transport,
        }
    )
    client = make_client(config, None)
    request = ChatRequest(messages=[Message(role="user", content="hi")], decoding=Decoding())
    result = asyncio.run(client.complete(request))
    assert result.error is None
    assert metadata == {"run": "copy"} and config.extra_body == {"metadata": {"run": "copy"}}
    assert client.describe()["extra_body"] == {"metadata": {"run": "copy"}}


@pytest.mark.parametrize("transport", ["litellm", "openai"])
def test_error_records_do_not_echo_the_key(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, transport: str
) -> None:
    key = "planted-client-key-0a1b2c3d4e"
    monkeypatch.setenv("ASSAY_REDACTION_CLIENT_KEY", key)
    server.default = _echo_error(401, key)
    config = ModelConfig.model_validate(
        {
            "model": "openai/fake",
            "api_base": server.base_url,
            "api_key_env": "ASSAY_REDACTION_CLIENT_KEY",
            "retry": {"max_attempts": 1},
            "transport": transport,
        }
    )
    client = make_client(config, None)
    request = ChatRequest(messages=[Message(role="user", content="hi")], decoding=Decoding())
    result = asyncio.run(client.complete(request))
    assert result.error is not None and "Incorrect API key provided" in result.error
    assert key not in result.error and MARKER in result.error


def test_cache_key_ignores_credentials_but_not_settings() -> None:
    request = ChatRequest(messages=[Message(role="user", content="hi")], decoding=Decoding())

    def key(extra: dict[str, Any], base: str = "http://h:1/v1") -> str:
        return cache_key(ModelConfig(model="openai/m", api_base=base, extra_body=extra), request)

    one = key({"extra_headers": {"Authorization": "Bearer aaaaaaaaaaaa"}, "top_k": 5})
    two = key({"extra_headers": {"Authorization": "Bearer bbbbbbbbbbbb"}, "top_k": 5})
    assert one == two
    assert key({"top_k": 5}) != key({"top_k": 6})
    assert key({}, "http://u:p@h:1/v1?key=a") == key({}, "http://h:1/v1")


def test_assay_errors_never_print_credentials() -> None:
    register_secrets([PASSWORD])  # as after a run that used it: the URL must still parse
    err = ModelConfigError(
        f"cannot reach http://me:{PASSWORD}@127.0.0.1:9/v1?api-key={QUERY_API_KEY}",
        field="api_base",
    )
    assert PASSWORD not in str(err) and QUERY_API_KEY not in err.render()
    assert "http://127.0.0.1:9/v1" in err.render()


# ---------------------------------------------------------------------------- rules


@pytest.mark.parametrize(
    "name",
    [
        "Authorization",
        "proxy-authorization",
        "API-Key",
        "api_key",
        "apikey",
        "X-Api-Key",
        "token",
        "access_token",
        "Refresh-Token",
        "secret",
        "client_secret",
        "password",
        "passwd",
        "credentials",
        "Cookie",
        "set-cookie",
        "private_key",
        "aws_secret",
        "openai_api_key",
        "x-goog-api-key",
    ],
)
def test_credential_keys_are_recognised(name: str) -> None:
    assert is_secret_key(name)


@pytest.mark.parametrize(
    "name", ["api_key_env", "tokens", "max_tokens", "prompt_tokens", "model", "key_order", "id"]
)
def test_ordinary_keys_are_kept(name: str) -> None:
    assert not is_secret_key(name)


def test_redact_url_keeps_scheme_host_port_path() -> None:
    url = "https://user:pw@api.example.com:8443/v1/?api-key=abc&key=def#frag"
    assert redact_url(url) == "https://api.example.com:8443/v1"
    assert redact_url("http://[::1]:8000/v1") == "http://[::1]:8000/v1"
    assert redact_url(None) is None


def test_redact_with_paths_deep_and_recorded() -> None:
    value = {
        "spec": {
            "judges": [
                {
                    "api_base": "http://u:secretpw@h:1/v1?key=abcdef",
                    "api_key_env": "MY_KEY",
                    "extra_body": {"extra_headers": {"Authorization": "Bearer zz"}, "n": 1},
                }
            ]
        },
        "usage": {"prompt_tokens": 3, "tokens": {"total": 4}},
        "flag": {"token": True},
    }
    clean, paths = redact_with_paths(value)
    judge = clean["spec"]["judges"][0]
    assert judge["api_base"] == "http://h:1/v1" and judge["api_key_env"] == "MY_KEY"
    assert judge["extra_body"] == {"extra_headers": {"Authorization": MARKER}, "n": 1}
    assert clean["usage"] == value["usage"] and clean["flag"] == {"token": True}
    assert paths == [
        "spec.judges[0].api_base",
        "spec.judges[0].extra_body.extra_headers.Authorization",
    ]
    assert value["spec"]["judges"][0]["api_base"].startswith("http://u:")  # input untouched
    assert redact(clean) == clean  # idempotent


def test_scrub_text_removes_registered_and_shaped_secrets() -> None:
    register_secrets(["planted-registered-value-77", "short"])
    text = (
        "401 for http://u:pw@host:1/v1?api-key=abcd1234: key planted-registered-value-77; "
        "Authorization: Bearer abcdefghijkl; api_key=zzzz9999; sk-abcdefghijklmnopqrstuv; "
        '{"api-key": "qqqq8888"} short'
    )
    out = scrub_text(text)
    for gone in ("pw@", "abcd1234", "planted-registered", "abcdefghijkl", "zzzz9999"):
        assert gone not in out
    assert "sk-abcdefghijklmnopqrstuv" not in out and "qqqq8888" not in out
    assert "http://host:1/v1" in out and out.endswith("short")  # short values are not scrubbed
    assert scrub_text(out) == out
    assert scrub_text("see https://example.com/docs and max_tokens=5") == (
        "see https://example.com/docs and max_tokens=5"
    )


def test_scrub_text_query_without_scheme() -> None:
    text = "api_base '127.0.0.1:8000/v1?key=abcdef&api-key=ghijkl' is not an http(s) URL"
    out = scrub_text(text)
    assert "abcdef" not in out and "ghijkl" not in out
    assert out.startswith(f"api_base '127.0.0.1:8000/v1?key={MARKER}&api-key={MARKER}'")
    ids = "judge openai/fake::generic-support@1 failed? yes: 3=3"
    assert scrub_text(ids) == ids


def test_secret_values_finds_credentials_to_register() -> None:
    found = secret_values(
        {"api_base": "http://u:pw@h/v1?api-key=AAAA", "h": {"Authorization": "Bearer tok"}}
    )
    assert set(found) == {"u", "pw", "AAAA", "Bearer tok", "tok"}


def test_write_manifest_redacts_what_an_older_manifest_carried(tmp_path: Path) -> None:
    """reparse/recompute/import rewrite manifests; a credential an older version wrote
    must not be carried forward, and earlier redactions stay listed."""
    from assay.core.manifest import Manifest
    from assay.runs.store._store import write_manifest

    leaked = {
        "spec": {"judges": [{"api_base": "https://u:hunter2secret@h.example/v1?key=qq9secret"}]},
        "judges": [{"client": {"extra_body": {"extra_headers": {"Authorization": "Bearer zz"}}}}],
        "redacted_fields": ["spec.defaults.token"],
    }
    path = tmp_path / "manifest.json"
    write_manifest(path, Manifest.model_validate(leaked))
    text = path.read_text(encoding="utf-8")
    for secret in ("hunter2secret", "qq9secret", "Bearer zz"):
        assert secret not in text
    fields = json.loads(text)["redacted_fields"]
    assert "spec.defaults.token" in fields
    assert "judges[0].client.extra_body.extra_headers.Authorization" in fields or any(
        f.endswith("extra_headers.Authorization") for f in fields
    )


@pytest.mark.parametrize(
    ("text", "shapes"),
    [
        ("answer: sk-" + "abcdefghijklmnopqrstuv", ["sk-... API key"]),
        ("see https://ann:" + "pw123456@h.example.org/x", ["URL with user:password"]),
        ("see https://tok" + "en123@h.example.org/x", ["URL with a user name"]),
        (
            "https://h.example.org/x?api_key=" + "abc123",
            ["URL query api_key=...", "api_key=... pair"],
        ),
        ("Authorization: Bearer " + "abcdefghijkl", ["Bearer token"]),
        ("password=" + "hunter2x", ["password=... pair"]),
        # what redaction leaves, and what is not a credential
        ('"api_key": "<redacted>", "Authorization": "Bearer <redacted>"', []),
        ('"api_key_env": "OPENAI_API_KEY"', []),
        ("https://h.example.org/runs?page=2&sort=asc", []),
        ("the token count was 12345", []),
    ],
)
def test_credential_shapes_name_what_scrub_text_would_remove(text: str, shapes: list[str]) -> None:
    """The question form of the rules (`assay pack` refuses on it): each answer names the
    kind of credential, never its value, and text scrub_text leaves alone has none."""
    assert credential_shapes(text) == shapes
    if not shapes:
        assert scrub_text(text) == text or "?" in text  # a query is scrubbed, not refused
