"""The lean transport (`transport = "openai"`) against the real loopback server: the same
request, the same typed failures, the same records and cache entries as the litellm path.
The hosted-client, redaction, connection and fault-storm tests run
over both transports in their own files."""

from __future__ import annotations

import asyncio
import email.utils
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from assay.errors import ModelConfigError
from assay.models import (
    ChatRequest,
    Decoding,
    ModelConfig,
    RawResponse,
    RetryPolicy,
    TransportError,
    make_client,
    transport_for,
)
from assay.models._openai_http import OpenAIHTTPTransport, chat_url
from assay.models._types import Message
from assay.runs import Runner, RunOptions, iter_records, load_spec, read_json
from assay.testing import (
    Behavior,
    FakeOpenAIServer,
    http_error,
    malformed_body,
    refusal,
    reply,
)

ROOT = Path(__file__).resolve().parents[1]
GOOD = '{"label": "fully_supported", "confidence": 0.9, "rationale": "stated"}'
TIMING_FIELDS = ("latency_s", "recorded_at")


def _config(server: FakeOpenAIServer, transport: str, **settings: Any) -> ModelConfig:
    values: dict[str, Any] = {
        "model": "openai/fake-judge",
        "api_base": server.base_url,
        "retry": RetryPolicy(max_attempts=1),
        "timeout_s": 5.0,
        "transport": transport,
    }
    values.update(settings)
    return ModelConfig.model_validate(values)


def _request(text: str, **decoding: Any) -> ChatRequest:
    return ChatRequest(
        messages=[Message(role="system", content="judge"), Message(role="user", content=text)],
        decoding=Decoding(**decoding),
        response_schema={"type": "object", "properties": {"label": {"type": "string"}}},
    )


async def _send(config: ModelConfig, request: ChatRequest) -> RawResponse | TransportError:
    try:
        return await transport_for(config).send(request)
    except TransportError as exc:
        return exc


def _failure(outcome: RawResponse | TransportError) -> tuple[Any, ...]:
    assert isinstance(outcome, TransportError), outcome
    return (outcome.render(), outcome.error_type, outcome.status_code, outcome.retryable)


def test_both_transports_send_the_same_body_and_headers(server: FakeOpenAIServer) -> None:
    extra = {
        "extra_headers": {"X-Gateway": "g1"},
        "extra_body": {"chat_template_kwargs": {"thinking": False}},
        "metadata": {"run": "r"},
        "top_k": 5,
    }
    for transport in ("litellm", "openai"):
        config = _config(server, transport, structured_output="json_schema", extra_body=extra)
        request = _request("same body", top_p=0.5, seed=7, stop=["END"])
        assert isinstance(asyncio.run(_send(config, request)), RawResponse)
    litellm_body, lean_body = server.requests
    assert lean_body == litellm_body
    assert lean_body["model"] == "fake-judge" and lean_body["top_k"] == 5
    assert lean_body["response_format"]["json_schema"]["name"] == "verdict"
    assert "metadata" not in lean_body and lean_body["chat_template_kwargs"] == {"thinking": False}
    litellm_headers, lean_headers = server.headers_seen
    for name in ("authorization", "x-gateway", "content-type"):
        assert lean_headers[name] == litellm_headers[name]


FAILURES = {
    "s400": http_error(400),
    "s401": http_error(401),
    "s404": http_error(404),
    "s408": http_error(408),
    "s409": http_error(409),
    "s422": http_error(422),
    "s429": http_error(429, retry_after=3),
    "s500": http_error(500),
    "s501": http_error(501),
    "s502": http_error(502),
    "s503": http_error(503, retry_after=1.5),
    "s504": http_error(504),
    "text": http_error(500, body="upstream exploded"),
    "nomsg": http_error(500, body={"detail": "oops"}),
    "notjson": malformed_body(),
    "array": malformed_body("[1, 2]"),
    "nochoices": malformed_body('{"id": "x", "object": "chat.completion", "choices": []}'),
}


def test_failures_are_typed_and_worded_as_the_litellm_path_does(server: FakeOpenAIServer) -> None:
    for tag, behavior in FAILURES.items():
        outcomes = []
        for transport in ("litellm", "openai"):
            server.script(tag, [behavior])
            outcome = asyncio.run(_send(_config(server, transport), _request(tag)))
            assert isinstance(outcome, TransportError), (tag, transport)
            outcomes.append((*_failure(outcome), outcome.retry_after_s))
        assert outcomes[1] == outcomes[0], tag
    assert server.pending() == 0


def test_retry_after_as_an_http_date(server: FakeOpenAIServer) -> None:
    when = email.utils.formatdate(time.time() + 3, usegmt=True)
    server.script("dated", [Behavior(kind="error", status=429, headers={"Retry-After": when})])
    outcome = asyncio.run(_send(_config(server, "openai"), _request("dated")))
    assert isinstance(outcome, TransportError) and outcome.retryable
    assert outcome.retry_after_s is not None and 1.0 < outcome.retry_after_s <= 3.0


def test_missing_choices_is_a_retryable_bad_body(server: FakeOpenAIServer) -> None:
    server.script("empty", [malformed_body('{"id": "x", "choices": []}'), reply(GOOD)])
    config = _config(
        server, "openai", retry=RetryPolicy(max_attempts=3, initial_wait_s=0.01, jitter_s=0)
    )
    result = asyncio.run(make_client(config).complete(_request("empty")))
    assert result.error is None and result.attempts == 2
    assert result.response is not None and result.response.content == GOOD


def test_refusal_and_content_filter_reach_the_response(server: FakeOpenAIServer) -> None:
    server.script("refuse", [refusal("No.")])
    raw = asyncio.run(_send(_config(server, "openai"), _request("refuse")))
    assert isinstance(raw, RawResponse)
    assert raw.refusal == "No." and raw.content is None and raw.finish_reason == "content_filter"
    assert not raw.cacheable


def test_usage_and_cost_equal_the_litellm_paths(server: FakeOpenAIServer) -> None:
    server.default = reply(GOOD)
    usages = []
    for transport in ("litellm", "openai"):
        raw = asyncio.run(
            _send(_config(server, transport, model="openai/gpt-4o-mini"), _request("c"))
        )
        assert isinstance(raw, RawResponse)
        usages.append(raw.usage)
    assert usages[1] == usages[0]
    assert usages[1].cost_usd is not None and usages[1].cost_usd > 0
    unknown = asyncio.run(_send(_config(server, "openai"), _request("c")))
    assert isinstance(unknown, RawResponse) and unknown.usage.cost_usd is None
    assert unknown.usage.total_tokens > 0


def test_one_pooled_session_per_loop_closed_with_it(server: FakeOpenAIServer) -> None:
    transport = OpenAIHTTPTransport(_config(server, "openai", max_concurrency=8))

    limits = []

    async def many() -> list[Any]:
        sessions = [await transport.session()]
        await asyncio.gather(*(transport.send(_request(f"p{i}")) for i in range(20)))
        sessions.append(await transport.session())
        assert sessions[0].connector is not None
        limits.append(sessions[0].connector.limit)
        return sessions

    first, last = asyncio.run(many())
    assert first is last and limits == [8]
    assert first.closed  # asyncio.run closed it with its loop
    again = asyncio.run(many())
    assert again[0] is not first and again[0].closed
    assert len(transport._sessions) == 1  # the first loop's closed session was let go
    assert server.stats.total == 40


def test_chat_url_and_provider_refusal() -> None:
    assert chat_url(ModelConfig(model="openai/gpt-4o-mini", transport="openai")) == (
        "https://api.openai.com/v1/chat/completions"
    )
    base = "http://u:p@127.0.0.1:8000/v1/?api-version=1"
    lean = ModelConfig(model="openai/m", api_base=base, transport="openai")
    assert chat_url(lean) == "http://127.0.0.1:8000/v1/chat/completions?api-version=1"
    assert lean.model_dump(exclude={"transport"}) == ModelConfig(
        model="openai/m", api_base=base
    ).model_dump(exclude={"transport"})
    with pytest.raises(ModelConfigError, match='needs transport = "litellm"'):
        ModelConfig(model="anthropic/claude-3-5-haiku-latest", transport="openai")
    with pytest.raises(ModelConfigError, match="instructor"):
        ModelConfig(model="openai/m", transport="openai", structured_output="instructor")


def write_mini_pairs(tmp: Path) -> None:
    """pairs.jsonl: the first four ForceBench demo pairs, a run of seconds (also
    test_batch_mode's)."""
    pairs = (ROOT / "assay" / "data" / "forcebench_demo.jsonl").read_text(encoding="utf-8")
    (tmp / "pairs.jsonl").write_text("".join(pairs.splitlines(True)[:4]), encoding="utf-8")


def _spec(tmp: Path, name: str, base_url: str, transport: str) -> Path:
    write_mini_pairs(tmp)
    spec = tmp / f"{name}.toml"
    spec.write_text(
        f"""
name = "{name}"
bootstrap = 0
[[datasets]]
name = "mini"
path = "pairs.jsonl"
[defaults]
max_attempts = 2
timeout_s = 5
transport = "{transport}"
[[judges]]
models = ["openai/gpt-4o-mini"]
prompts = ["generic-support@1", "force-aware@1"]
api_base = "{base_url}"
""",
        encoding="utf-8",
    )
    return spec


def _run(spec: Path, out: Path, cache: Path) -> list[dict[str, Any]]:
    outcome = Runner(
        load_spec(spec), RunOptions(output_dir=str(out), progress=False, cache_dir=str(cache))
    ).run()
    assert outcome.status == "complete"
    records = [r.model_dump(mode="json") for r in iter_records(out / "judgments.jsonl")]
    for record in records:
        for name in TIMING_FIELDS:
            record.pop(name, None)
    return sorted(records, key=lambda r: json.dumps(r, sort_keys=True))


def test_records_cache_and_manifest_do_not_depend_on_the_transport(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        runs = {}
        for transport in ("litellm", "openai"):
            spec = _spec(tmp_path, transport, server.base_url, transport)
            runs[transport] = _run(spec, tmp_path / transport, tmp_path / f"cache-{transport}")
        sent = server.stats.total
        spec = _spec(tmp_path, "again", server.base_url, "openai")
        again = _run(spec, tmp_path / "again", tmp_path / "cache-litellm")
        assert server.stats.total == sent  # fully served from the litellm run's cache
    assert runs["openai"] == runs["litellm"] and len(runs["openai"]) == 16
    assert all(r["cache_hit"] for r in again) and len(again) == 16
    judges = {t: read_json(tmp_path / t / "manifest.json")["judges"][0] for t in runs}
    clients = {t: judges[t].pop("client") for t in runs}
    assert [c.pop("transport") for c in clients.values()] == ["litellm", "openai"]
    assert {c.pop("transport_reason") for c in clients.values()} == {
        f'transport = "{t}" in the spec' for t in runs
    }
    assert clients["openai"] == clients["litellm"]
    stats = {t: judges[t].pop("stats") for t in runs}
    assert judges["openai"] == judges["litellm"]
    for counter in ("requests_sent", "by_status", "tokens", "cost_usd"):
        assert stats["openai"].get(counter) == stats["litellm"].get(counter), counter


def test_spec_key_is_checked_and_dry_run_accepts_it(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from assay.cli import main

    def dry_run(spec: Path) -> tuple[int, str]:
        capfd.readouterr()
        monkeypatch.setattr("sys.argv", ["assay", "run", str(spec), "--dry-run"])
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
        out, err = capfd.readouterr()
        return code, out + err

    monkeypatch.chdir(tmp_path)
    spec = _spec(tmp_path, "dry", "http://127.0.0.1:9/v1", "openai")
    code, output = dry_run(spec)
    assert code == 0 and "nothing sent" in output, output
    spec.write_text(spec.read_text().replace('"openai/gpt-4o-mini"', '"anthropic/x"'))
    code, output = dry_run(spec)
    lines = output.strip().splitlines()
    assert code == 2 and len(lines) == 1, output
    where = rf"error: {re.escape(str(spec))}:\d+: field 'judges\[0\]': transport = \"openai\""
    assert re.match(where, lines[0]), lines[0]
    spec.write_text(spec.read_text().replace('transport = "openai"', 'transport = "http"'))
    code, output = dry_run(spec)
    assert code == 2 and "field 'defaults.transport'" in output, output
