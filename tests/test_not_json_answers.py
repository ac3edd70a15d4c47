"""A server answering 200 with a page instead of JSON: on both
transports the record and the run's failure line say "response is not JSON
(content-type text/html)", not `InternalServerError 500`, and the request is not retried
(the same URL answers the same page). JSON under another label is still read."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke

from assay.models import (
    ChatRequest,
    Decoding,
    ModelConfig,
    RawResponse,
    RetryPolicy,
    TransportError,
    transport_for,
)
from assay.models._types import Message
from assay.testing import FakeOpenAIServer, malformed_body

PAGE = "<!DOCTYPE html>\n<html><body><h1>Sign in</h1></body></html>"
GOOD = '{"label": "fully_supported", "confidence": 0.9, "rationale": "ok"}'
TRANSPORTS = ("litellm", "openai")


@pytest.fixture(scope="module")
def server() -> Any:
    with FakeOpenAIServer() as s:
        yield s


def _send(server: FakeOpenAIServer, transport: str, tag: str) -> RawResponse | TransportError:
    config = ModelConfig(
        model="openai/fake-judge",
        api_base=server.base_url,
        retry=RetryPolicy(max_attempts=1),
        timeout_s=5.0,
        transport=transport,
    )
    request = ChatRequest(messages=[Message(role="user", content=tag)], decoding=Decoding())
    try:
        return asyncio.run(transport_for(config).send(request))
    except TransportError as exc:
        return exc


@pytest.mark.parametrize(
    ("body", "content_type", "named"),
    [
        (PAGE, "text/html; charset=utf-8", "text/html"),
        ("upstream says hello", "text/plain", "text/plain"),
    ],
)
def test_a_page_is_named_not_json_on_both_transports(
    server: FakeOpenAIServer, body: str, content_type: str, named: str
) -> None:
    rendered = []
    for transport in TRANSPORTS:
        tag = f"{named}-{transport}"
        server.script(tag, [malformed_body(body, content_type=content_type)])
        outcome = _send(server, transport, tag)
        assert isinstance(outcome, TransportError), (transport, outcome)
        assert f"response is not JSON (content-type {named})" in outcome.message
        assert "InternalServerError" not in outcome.render()
        assert outcome.status_code == 200 and not outcome.retryable
        rendered.append(outcome.render())
    assert rendered[0] == rendered[1]


def test_json_under_another_label_is_still_read(server: FakeOpenAIServer) -> None:
    completion = {
        "id": "x",
        "object": "chat.completion",
        "model": "fake-judge",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": GOOD}}],
    }
    for transport in TRANSPORTS:
        tag = f"labelled-{transport}"
        server.script(tag, [malformed_body(json.dumps(completion), content_type="text/plain")])
        outcome = _send(server, transport, tag)
        assert isinstance(outcome, RawResponse), (transport, outcome)
        assert outcome.content == GOOD


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_record_and_the_failure_line_say_not_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, server: FakeOpenAIServer, transport: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("COLUMNS", "400")
    server.reset()
    server.default = malformed_body(PAGE, content_type="text/html")
    spec = tmp_path / "spec.toml"
    spec.write_text(
        f'name = "html"\noutput_dir = "{tmp_path / "out"}"\nbootstrap = 0\n'
        '[[datasets]]\npath = "builtin:forcebench-demo"\n'
        '[[judges]]\nmodels = ["openai/x"]\nprompts = ["force-aware@1"]\n'
        f'api_base = "{server.base_url}"\ntransport = "{transport}"\nmax_attempts = 3\n'
    )
    code, _, err = invoke(["run", str(spec), "--no-progress", "--no-cache"])
    assert code == 1
    failure = [line for line in err.splitlines() if "run failed" in line]
    assert len(failure) == 1 and "response is not JSON (content-type text/html)" in failure[0]
    record = json.loads((tmp_path / "out" / "judgments.jsonl").read_text().splitlines()[0])
    assert record["status"] == "api_error" and record["attempts"] == 1
    assert record["error"].startswith("InvalidResponse 200: response is not JSON")
    assert "InternalServerError" not in err + record["error"]


def test_a_factuality_stage_failure_line_quotes_its_first_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The decompose stage's failure line (as the judge stage's) says what went wrong."""
    from test_factuality_run import write_spec

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("COLUMNS", "400")
    with FakeOpenAIServer() as page_server:
        page_server.default = malformed_body(PAGE, content_type="text/html")
        spec = write_spec(tmp_path, page_server.base_url)
        out_dir = tmp_path / "run"
        code, _, err = invoke(["run", str(spec), "--output-dir", str(out_dir), "--no-progress"])
    assert code == 1
    failure = [line for line in err.splitlines() if "run failed" in line]
    assert len(failure) == 1 and failure[0].count("decompose: ") == 1
    assert "first error: InvalidResponse 200: response is not JSON" in failure[0]


def test_a_batch_endpoint_answering_a_page_says_not_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`mode = "batch"`: the files/batches endpoints are worded the same way."""
    from test_batch_mode import SECRET, _cli_run, _spec

    monkeypatch.setenv("ASSAY_BATCH_TEST_KEY", SECRET)
    monkeypatch.setenv("COLUMNS", "400")
    with FakeOpenAIServer() as batch_server:
        batch_server.batches.fail("create", [malformed_body(PAGE, content_type="text/html")])
        code, _, err = _cli_run(_spec(tmp_path, batch_server.base_url), tmp_path)
    assert code == 2, err
    assert "response is not JSON (content-type text/html)" in err
