"""The Model layers (cache, concurrency bound, retries, accounting) over the mock transport,
and the transport registry behind `make_client`. No server, no model: every layer is
exercised on scripted responses and counted calls."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from assay.core.outcomes import Usage
from assay.core.registry import TRANSPORTS
from assay.errors import ModelConfigError
from assay.models import (
    Accounting,
    ChatRequest,
    ConcurrencyLimit,
    LiteLLMTransport,
    MockHTTPError,
    MockTransport,
    Model,
    ModelConfig,
    RawResponse,
    ResponseCache,
    Retrier,
    RetryPolicy,
    TransportError,
    make_client,
)
from assay.prompts import Message

FAST = RetryPolicy(max_attempts=4, initial_wait_s=0.01, max_wait_s=2.0, jitter_s=0.0)


def _config(**changes: object) -> ModelConfig:
    return ModelConfig.model_validate({"model": "mock/judge", "retry": FAST, **changes})


def _request(text: str = "hello") -> ChatRequest:
    return ChatRequest(messages=[Message(role="user", content=text)])


def _raw(text: str, prompt: int = 10, completion: int = 5, cost: float = 0.25) -> RawResponse:
    usage = Usage(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=prompt + completion,
        cost_usd=cost,
    )
    return RawResponse(content=text, finish_reason="stop", usage=usage)


# ---- cache -------------------------------------------------------------------------------


def test_cache_miss_then_hit_and_refresh(tmp_path: Path) -> None:
    transport = MockTransport(_config(), script=[_raw("first"), _raw("second")])
    model = Model(transport, ResponseCache(tmp_path / "c"))
    miss = asyncio.run(model.complete(_request()))
    hit = asyncio.run(model.complete(_request()))
    assert not miss.cache_hit and miss.attempts == 1 and miss.response is not None
    assert hit.cache_hit and hit.attempts == 0 and hit.response == miss.response
    assert transport.calls == 1  # the hit never reached the transport
    refreshed = asyncio.run(model.complete(_request(), refresh_cache=True))
    assert refreshed.response is not None and refreshed.response.content == "second"
    again = asyncio.run(model.complete(_request()))
    assert again.cache_hit and again.response == refreshed.response and transport.calls == 2


def test_no_cache_use_neither_reads_nor_writes(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c")
    transport = MockTransport(_config())
    model = Model(transport, cache)
    asyncio.run(model.complete(_request("a"), use_cache=False))
    asyncio.run(model.complete(_request("a"), use_cache=False))
    assert transport.calls == 2 and len(cache) == 0


def test_truncated_responses_are_not_cached(tmp_path: Path) -> None:
    cut = RawResponse(content="partial", finish_reason="length")
    transport = MockTransport(_config(), script=[cut, cut])
    model = Model(transport, ResponseCache(tmp_path / "c"))
    asyncio.run(model.complete(_request()))
    second = asyncio.run(model.complete(_request()))
    assert not second.cache_hit and transport.calls == 2


def test_mock_keys_follow_the_hosted_rules(tmp_path: Path) -> None:
    model = Model(MockTransport(_config()), ResponseCache(tmp_path / "c"))
    assert model.cache_key(_request("a")) == model.cache_key(_request("a"))
    assert model.cache_key(_request("a")) != model.cache_key(_request("b"))


# ---- retries -----------------------------------------------------------------------------


def test_429_with_retry_after_is_retried_after_the_asked_wait() -> None:
    transport = MockTransport(_config(), script=[MockHTTPError(429, retry_after=0.3), _raw("ok")])
    model = Model(transport)
    started = time.perf_counter()
    result = asyncio.run(model.complete(_request()))
    elapsed = time.perf_counter() - started
    assert result.response is not None and result.response.content == "ok"
    assert result.attempts == 2 and transport.calls == 2
    assert elapsed >= 0.28  # the server's Retry-After, not the 10 ms backoff
    assert result.latency_s >= 0.28  # latency includes the wait


def test_400_is_not_retried_and_becomes_a_recorded_error() -> None:
    transport = MockTransport(_config(), script=[MockHTTPError(400), _raw("never sent")])
    result = asyncio.run(Model(transport).complete(_request()))
    assert result.response is None and result.attempts == 1 and transport.calls == 1
    assert result.error_type == "MockHTTPError" and result.error == "MockHTTPError 400: HTTP 400"


def test_retries_are_finite_and_counted() -> None:
    transport = MockTransport(_config(), script=[MockHTTPError(503)] * 10)
    result = asyncio.run(Model(transport).complete(_request()))
    assert result.response is None and result.attempts == FAST.max_attempts == transport.calls


def test_a_fatal_error_is_raised_not_recorded() -> None:
    class Broken(MockTransport):
        async def send(self, request: ChatRequest) -> RawResponse:
            raise ModelConfigError("model 'mock/judge': cannot load")

    with pytest.raises(ModelConfigError, match="cannot load"):
        asyncio.run(Model(Broken(_config())).complete(_request()))


def test_retrier_alone_retries_only_retryable_transport_errors() -> None:
    calls = 0

    async def flaky() -> str:
        nonlocal calls
        calls += 1
        if calls < 3:
            raise TransportError("busy", error_type="Busy", retryable=True, retry_after_s=0.0)
        return "done"

    assert asyncio.run(Retrier(FAST).call(flaky)) == ("done", 3)

    async def final() -> str:
        raise TransportError("bad request", error_type="Bad")

    with pytest.raises(TransportError) as info:
        asyncio.run(Retrier(FAST).call(final))
    assert info.value.attempts == 1


# ---- concurrency -------------------------------------------------------------------------


def test_concurrency_is_bounded_by_the_config() -> None:
    transport = MockTransport(_config(max_concurrency=3), delay_s=0.05)
    model = Model(transport)

    async def many() -> None:
        await asyncio.gather(*(model.complete(_request(str(i))) for i in range(12)))

    asyncio.run(many())
    assert transport.calls == 12
    assert transport.peak_in_flight == 3 and model.limit.peak == 3


def test_concurrency_limit_survives_a_new_event_loop() -> None:
    limit = ConcurrencyLimit(1)

    async def contend() -> None:
        async def hold() -> None:
            async with limit:
                await asyncio.sleep(0.01)

        await asyncio.gather(hold(), hold())

    asyncio.run(contend())
    asyncio.run(contend())  # a semaphore bound to the first loop would raise here
    assert limit.peak == 1 and limit.in_flight == 0


# ---- accounting --------------------------------------------------------------------------


def test_accounting_sums_tokens_cost_attempts_hits_and_errors(tmp_path: Path) -> None:
    script: list[RawResponse | str | Exception] = [
        _raw("a", prompt=10, completion=5, cost=0.25),
        MockHTTPError(429, retry_after=0.0),
        _raw("b", prompt=20, completion=7, cost=0.5),
        MockHTTPError(404),
    ]
    transport = MockTransport(_config(), script=script)
    model = Model(transport, ResponseCache(tmp_path / "c"))

    async def calls() -> None:
        await model.complete(_request("a"))
        await model.complete(_request("b"))  # 429, then b
        await model.complete(_request("a"))  # cache hit
        await model.complete(_request("c"))  # 404

    asyncio.run(calls())
    totals = model.accounting
    assert (totals.results, totals.cache_hits, totals.errors) == (4, 1, 1)
    assert totals.attempts == 1 + 2 + 0 + 1 == transport.calls
    assert (totals.prompt_tokens, totals.completion_tokens) == (30, 12)  # hits not re-counted
    assert totals.cost_usd == pytest.approx(0.75)
    assert totals.latency_s > 0
    assert Accounting().snapshot()["results"] == 0


def test_complete_many_without_batching_is_concurrent_completes(tmp_path: Path) -> None:
    transport = MockTransport(_config(max_concurrency=2), delay_s=0.02)
    model = Model(transport, ResponseCache(tmp_path / "c"))
    requests = [_request(str(i)) for i in range(5)]
    first = asyncio.run(model.complete_many(requests))
    second = asyncio.run(model.complete_many(requests))
    assert [r.response.content for r in first if r.response] == [str(i) for i in range(5)]
    assert all(r.cache_hit for r in second) and transport.calls == 5
    assert transport.peak_in_flight == 2


def test_lookup_many_answers_hits_and_hands_misses_to_complete_keyed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stage's cache-first pass: hits are results at once (counted once), a miss is
    sent by `complete` with the lookup's key (not computed again) and then cached."""
    transport = MockTransport(_config(), script=[_raw("a"), _raw("b")])
    keyed: list[ChatRequest] = []
    real_key = transport.cache_key
    monkeypatch.setattr(transport, "cache_key", lambda r: keyed.append(r) or real_key(r))
    model = Model(transport, ResponseCache(tmp_path / "c"))
    asyncio.run(model.complete(_request("a")))
    keyed.clear()
    hit, miss = model.lookup_many([_request("a"), _request("b")])
    assert hit.result is not None and hit.result.cache_hit and hit.result.request_key == hit.key
    assert hit.result.response is not None and hit.result.response.content == "a"
    assert miss.result is None and len(keyed) == 2
    time.sleep(0.3)  # prepared well before a worker takes it: not part of its latency
    sent = asyncio.run(model.complete(_request("b"), lookup=miss))
    assert sent.latency_s < 0.3
    assert len(keyed) == 2 and transport.calls == 2  # sent once, keyed once
    assert sent.request_key == miss.key and not sent.cache_hit
    assert model.accounting.cache_hits == 1 and model.accounting.results == 3
    again = model.lookup(_request("b"))
    assert again.result is not None and again.result.response == sent.response


def test_lookup_reads_nothing_when_told_not_to(tmp_path: Path) -> None:
    transport = MockTransport(_config(), script=[_raw("a")])
    model = Model(transport, ResponseCache(tmp_path / "c"))
    asyncio.run(model.complete(_request("a")))
    assert model.lookup(_request("a"), use_cache=False).result is None
    assert model.lookup(_request("a"), refresh_cache=True).result is None
    assert Model(transport).lookup(_request("a")).result is None  # no cache at all
    assert model.lookup(_request("a")).key == Model(transport).lookup(_request("a")).key


# ---- registry and make_client ------------------------------------------------------------


def test_make_client_picks_the_transport_by_prefix() -> None:
    assert {"litellm", "hf", "hf-nli", "mock"} <= set(TRANSPORTS.names())
    assert isinstance(make_client(ModelConfig(model="mock/x")).transport, MockTransport)
    lean = make_client(ModelConfig(model="openai/x")).transport  # transport = "auto"
    assert type(lean).__name__ == "OpenAIHTTPTransport"
    litellm = ModelConfig(model="openai/x", transport="litellm")
    assert isinstance(make_client(litellm).transport, LiteLLMTransport)
    assert isinstance(make_client(ModelConfig(model="acme/x")).transport, LiteLLMTransport)
    with pytest.raises(ModelConfigError, match="hf-nli models are verifiers, not chat models"):
        make_client(ModelConfig(model="hf-nli/some/dir"))
    assert TRANSPORTS.info("hf").package == "assay"


def test_a_registered_transport_serves_its_prefix() -> None:
    class Shouting(MockTransport):
        """Replies in capitals (a plugin's transport)."""

        async def send(self, request: ChatRequest) -> RawResponse:
            return _raw(request.messages[-1].content.upper())

    TRANSPORTS.add("shout", Shouting, description="test transport")
    try:
        client = make_client(ModelConfig(model="shout/any"))
        result = asyncio.run(client.complete(_request("quiet")))
        assert result.response is not None and result.response.content == "QUIET"
        assert client.accounting.results == 1
    finally:
        TRANSPORTS._entries.pop("shout", None)
