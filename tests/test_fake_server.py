"""Tests of the fake OpenAI server itself: wire shape, behaviors, scripting, lifecycle.

The litellm tests pin down which exception types (and attributes) the real client stack
produces for each failure, because the judges' error handling is written against them.
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import asyncio  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from typing import Any  # noqa: E402

import httpx  # noqa: E402
import litellm  # noqa: E402
import pytest  # noqa: E402

from assay.testing import (  # noqa: E402
    DEFAULT_CONTENT,
    Behavior,
    FakeOpenAIServer,
    FakeServerClient,
    delay,
    http_error,
    malformed_body,
    refusal,
    reply,
    truncated,
)

litellm.suppress_debug_info = True


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


def _chat(url: str, text: str = "hello world", **extra: Any) -> httpx.Response:
    body = {"model": "fake-model", "messages": [{"role": "user", "content": text}], **extra}
    return httpx.post(
        url + "/v1/chat/completions",
        json=body,
        headers={"Authorization": "Bearer sk-test"},
        timeout=5,
    )


def _content(resp: httpx.Response) -> str | None:
    content: str | None = resp.json()["choices"][0]["message"]["content"]
    return content


def _acompletion(base: str, text: str = "hello world", **kw: Any) -> Any:
    """One litellm call on a fresh loop, no retries: what the judges do, minus the loop."""
    coro = litellm.acompletion(
        model="openai/fake-model",
        api_base=base,
        api_key="sk-test",
        messages=[{"role": "user", "content": text}],
        max_retries=0,
        **kw,
    )
    return asyncio.run(coro)


# --------------------------------------------------------------------------- wire shape


def test_good_reply_has_chat_completion_shape(server: FakeOpenAIServer) -> None:
    assert server.url.startswith("http://127.0.0.1:")
    resp = _chat(server.url, "three words here")
    assert resp.status_code == 200
    data = resp.json()
    assert data["id"].startswith("chatcmpl-")
    assert data["object"] == "chat.completion"
    assert isinstance(data["created"], int)
    assert data["model"] == "fake-model"
    choice = data["choices"][0]
    assert choice["index"] == 0
    assert choice["finish_reason"] == "stop"
    assert choice["message"] == {"role": "assistant", "content": DEFAULT_CONTENT, "refusal": None}
    usage = data["usage"]
    assert usage["prompt_tokens"] == 3
    assert usage["completion_tokens"] == len(DEFAULT_CONTENT.split())
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def test_model_returned_override_and_alias_path(server: FakeOpenAIServer) -> None:
    server.script(None, [reply("x", model_returned="gpt-4o-2024-08-06")])
    resp = httpx.post(
        server.url + "/chat/completions",
        json={"model": "asked", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert resp.json()["model"] == "gpt-4o-2024-08-06"
    assert server.stats.by_path == {"/chat/completions": 1}


def test_stream_true_is_rejected(server: FakeOpenAIServer) -> None:
    resp = _chat(server.url, stream=True)
    assert resp.status_code == 400
    assert resp.json()["error"]["code"] == "stream_unsupported"


def test_unknown_path_is_404_and_counted(server: FakeOpenAIServer) -> None:
    resp = httpx.post(server.url + "/v2/chat", json={})
    assert resp.status_code == 404
    assert server.stats.by_path == {"/v2/chat": 1}
    assert server.stats.by_status == {404: 1}


# --------------------------------------------------------------------------- behaviors


def test_429_carries_retry_after(server: FakeOpenAIServer) -> None:
    server.script(None, [http_error(429, retry_after=7)])
    resp = _chat(server.url)
    assert resp.status_code == 429
    assert resp.headers["retry-after"] == "7"
    err = resp.json()["error"]
    assert err["code"] == "rate_limit_exceeded"
    assert set(err) >= {"message", "type", "code"}


def test_500_and_custom_body(server: FakeOpenAIServer) -> None:
    server.script(None, [http_error(500), http_error(400, body={"error": {"message": "no"}})])
    first = _chat(server.url)
    assert first.status_code == 500
    assert first.json()["error"]["type"] == "server_error"
    second = _chat(server.url)
    assert second.status_code == 400
    assert second.json() == {"error": {"message": "no"}}


def test_malformed_body_is_not_json(server: FakeOpenAIServer) -> None:
    server.script(None, [malformed_body()])
    resp = _chat(server.url)
    assert resp.status_code == 200
    assert resp.headers["content-type"].startswith("application/json")
    with pytest.raises(ValueError):
        resp.json()


def test_refusal(server: FakeOpenAIServer) -> None:
    server.script(None, [refusal()])
    choice = _chat(server.url).json()["choices"][0]
    assert choice["finish_reason"] == "content_filter"
    assert choice["message"]["content"] is None
    assert choice["message"]["refusal"] == "I can't help with that."


def test_truncated(server: FakeOpenAIServer) -> None:
    server.script(None, [truncated('{"label": "fully')])
    choice = _chat(server.url).json()["choices"][0]
    assert choice["finish_reason"] == "length"
    assert choice["message"]["content"] == '{"label": "fully'


def test_delay_and_latency_are_applied() -> None:
    with FakeOpenAIServer(latency_s=0.05) as srv:
        srv.script(None, [delay(0.15)])
        t0 = time.monotonic()
        resp = _chat(srv.url)
        assert time.monotonic() - t0 >= 0.2
        assert _content(resp) == DEFAULT_CONTENT  # delay() without `then` -> default


def test_behavior_round_trips_through_json() -> None:
    b = delay(1.5, then=http_error(429, retry_after=2))
    assert Behavior.model_validate(b.model_dump()) == b
    assert b.delay_s == 1.5 and b.status == 429


# --------------------------------------------------------------------------- scripting


def test_script_is_fifo_then_falls_back_to_default(server: FakeOpenAIServer) -> None:
    server.script("claim-A", [reply("a1"), http_error(500), reply("a2")])
    server.script(None, [reply("any1")])
    assert server.pending() == 4
    assert _content(_chat(server.url, "about claim-A")) == "a1"
    assert _chat(server.url, "about claim-A").status_code == 500
    assert _content(_chat(server.url, "unrelated")) == "any1"
    assert _content(_chat(server.url, "about claim-A")) == "a2"
    # both queues exhausted -> default
    assert _content(_chat(server.url, "about claim-A")) == DEFAULT_CONTENT
    assert _content(_chat(server.url, "unrelated")) == DEFAULT_CONTENT
    server.default = reply("new default")
    assert _content(_chat(server.url)) == "new default"
    assert server.pending() == 0


def test_responder_computes_replies() -> None:
    def echo(body: dict[str, Any]) -> Behavior | None:
        text = body["messages"][-1]["content"]
        return reply(text.upper()) if text.startswith("echo") else None

    with FakeOpenAIServer(responder=echo) as srv:
        assert _content(_chat(srv.url, "echo me")) == "ECHO ME"
        assert _content(_chat(srv.url, "other")) == DEFAULT_CONTENT


def test_stats_headers_and_reset(server: FakeOpenAIServer) -> None:
    server.script(None, [http_error(429)])
    _chat(server.url, "one")
    _chat(server.url, "two")
    stats = server.stats
    assert stats.total == 2
    assert stats.by_path == {"/v1/chat/completions": 2}
    assert stats.by_status == {429: 1, 200: 1}
    assert [r["messages"][0]["content"] for r in server.requests] == ["one", "two"]
    assert server.headers_seen[0]["authorization"] == "Bearer sk-test"
    server.script("x", [reply("y")])
    server.reset()
    assert server.stats.total == 0 and server.requests == [] and server.pending() == 0


def test_control_api(server: FakeOpenAIServer) -> None:
    with httpx.Client(base_url=server.url) as c:
        behaviors = [reply("ctl-1").model_dump(), {"kind": "error", "status": 503}]
        r = c.post("/_control/script", json={"match": "ctl", "behaviors": behaviors})
        assert r.json() == {"ok": True, "queued": 2}
        assert c.post("/_control/script", json={"behaviors": [{"kind": "nope"}]}).status_code == 400
        assert _content(_chat(server.url, "ctl")) == "ctl-1"
        assert _chat(server.url, "ctl").status_code == 503
        stats = c.get("/_control/stats").json()
        assert stats["total"] == 2
        assert stats["by_status"] == {"200": 1, "503": 1}
        assert stats["headers"][0]["authorization"] == "<redacted>"  # never echoed
        assert "sk-test" not in str(stats)
        c.post("/_control/default", json={"behavior": reply("ctl-default").model_dump()})
        assert _content(_chat(server.url)) == "ctl-default"
        assert c.post("/_control/reset").json() == {"ok": True}
        assert c.get("/_control/stats").json()["total"] == 0


def test_async_context_manager() -> None:
    async def go() -> str:
        async with FakeOpenAIServer() as srv, httpx.AsyncClient() as client:
            body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
            resp = await client.post(srv.base_url + "/chat/completions", json=body)
            content: str = resp.json()["choices"][0]["message"]["content"]
            return content

    assert asyncio.run(go()) == DEFAULT_CONTENT


# --------------------------------------------------------------------------- lifecycle


def test_stop_is_bounded_with_in_flight_slow_request() -> None:
    srv = FakeOpenAIServer().start()
    srv.script(None, [delay(30)])
    outcome: list[object] = []

    def client() -> None:
        try:
            outcome.append(_chat(srv.url).status_code)
        except httpx.HTTPError as exc:
            outcome.append(exc)

    t = threading.Thread(target=client)
    t.start()
    deadline = time.monotonic() + 2
    while srv.stats.total == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    t0 = time.monotonic()
    srv.stop()
    assert time.monotonic() - t0 < 2.0
    t.join(3)
    assert not t.is_alive()
    assert outcome and (outcome[0] == 503 or isinstance(outcome[0], httpx.HTTPError))
    with pytest.raises(RuntimeError):
        _ = srv.url


def test_spawned_process_serves_and_is_scriptable() -> None:
    proc, url = FakeOpenAIServer.spawn_process(content="from process", latency_s=0.02)
    try:
        assert url.startswith("http://127.0.0.1:")
        assert _content(_chat(url)) == "from process"
        client = FakeServerClient(url)
        client.script("boom", [http_error(429, retry_after=1)])
        assert _chat(url, "boom").status_code == 429
        stats = client.stats()
        assert stats.total == 2 and stats.by_status == {200: 1, 429: 1}
        client.close()
    finally:
        proc.terminate()
        proc.wait(5)
    assert proc.returncode is not None


# --------------------------------------------------------------------------- via litellm


def test_litellm_acompletion_returns_content(server: FakeOpenAIServer) -> None:
    resp = _acompletion(server.base_url, "judge this claim")
    assert resp.choices[0].message.content == DEFAULT_CONTENT
    assert resp.choices[0].finish_reason == "stop"
    assert resp.usage.prompt_tokens == 3
    assert server.headers_seen[-1]["authorization"] == "Bearer sk-test"
    assert server.requests[-1]["model"] == "fake-model"


def test_litellm_429_is_rate_limit_error_with_retry_after(server: FakeOpenAIServer) -> None:
    server.script(None, [http_error(429, retry_after=7)])
    with pytest.raises(litellm.exceptions.RateLimitError) as info:
        _acompletion(server.base_url)
    err = info.value
    assert err.status_code == 429
    # litellm rebuilds `err.response` without the provider's headers; the real ones,
    # Retry-After included, are on `litellm_response_headers` (an httpx.Headers).
    # The attribute is set dynamically (not declared on the class), hence getattr.
    headers = getattr(err, "litellm_response_headers", None)
    assert isinstance(headers, httpx.Headers)
    assert headers["retry-after"] == "7"
    assert "retry-after" not in err.response.headers


def test_litellm_error_mapping(server: FakeOpenAIServer) -> None:
    server.script(None, [http_error(500), malformed_body(), refusal(), delay(5)])
    with pytest.raises(litellm.exceptions.InternalServerError):
        _acompletion(server.base_url)
    with pytest.raises(litellm.exceptions.InternalServerError):  # body not JSON -> 500-class error
        _acompletion(server.base_url)
    msg = _acompletion(server.base_url).choices[0].message
    assert msg.content is None
    assert msg.provider_specific_fields["refusal"] == "I can't help with that."
    with pytest.raises(litellm.exceptions.Timeout):
        _acompletion(server.base_url, timeout=0.3)


def test_litellm_connection_refused() -> None:
    with FakeOpenAIServer() as srv:
        base = srv.base_url
    # litellm 1.106 maps openai's "Connection error." to InternalServerError, not
    # APIConnectionError; accept both so an upgrade does not silently change meaning.
    with pytest.raises(
        (litellm.exceptions.APIConnectionError, litellm.exceptions.InternalServerError)
    ) as info:
        _acompletion(base)
    assert "Connection error" in str(info.value)
