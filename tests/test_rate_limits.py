"""Rate limits on the loopback server: rpm/tpm windows shared per endpoint, adaptive
concurrency (AIMD), and the headers both transports hand to the rate layer.

The fake server enforces OpenAI-style windows (`RateWindows`: even refill, 429 with
Retry-After past a limit, x-ratelimit-* on every answer). A window of 120 requests a
minute (2 a second) over 126 requests makes a run take >= 3 s whatever the client does;
the tests check how many 429s it took to get there, and that every answer arrived.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

import pytest
from aiolimiter import AsyncLimiter

from assay.core.outcomes import Usage
from assay.models import ModelConfig, make_client
from assay.models._aimd import AdaptiveLimit
from assay.models._config import Decoding, RetryPolicy
from assay.models._hosted import litellm_module
from assay.models._ratelimit import Window60, endpoint_for, rate_limits_of
from assay.models._ratelimit_headers import lowered, parse_duration, read_window, watching
from assay.models._transport import TransportError
from assay.models._types import ChatRequest, ModelResult, RawResponse
from assay.prompts._prompt import Message
from assay.testing import FakeOpenAIServer, RateWindows

RPM = 120  # 2 a second: a run of N > RPM requests takes >= (N - RPM) / 2 seconds
TRANSPORTS = ("openai", "litellm")


def about(allowed_s: float) -> float:
    """The most a paced run may take: the window's time, with room for a loaded machine
    (the litellm path's own CPU time per request can approach the window's pace)."""
    return allowed_s * 2 + 4.0


def _requests(n: int, tag: str = "q", max_tokens: int = 8) -> list[ChatRequest]:
    d = Decoding(max_tokens=max_tokens)
    return [
        ChatRequest(messages=[Message(role="user", content=f"{tag} {i} hello there")], decoding=d)
        for i in range(n)
    ]


def _model(server: FakeOpenAIServer, transport: str, **settings: Any) -> Any:
    if transport == "litellm":
        litellm_module()  # its import is not what these tests time
    config = ModelConfig(
        model="openai/fake", api_base=server.base_url, transport=transport, **settings
    )
    return make_client(config)


async def _gather(pairs: Sequence[tuple[Any, list[ChatRequest]]]) -> list[ModelResult[Any]]:
    calls = [m.complete_many(r, use_cache=False) for m, r in pairs]
    return [result for batch in await asyncio.gather(*calls) for result in batch]


def _timed(pairs: Sequence[tuple[Any, list[ChatRequest]]]) -> tuple[float, list[Any]]:
    started = time.perf_counter()
    results = asyncio.run(_gather(pairs))
    return time.perf_counter() - started, results


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_rpm_shared_by_two_models_paces_the_run_with_few_429s(transport: str) -> None:
    """A judge and a verifier on one endpoint share its window: together they finish in
    about the time the window allows, with at most a handful of 429s."""
    with FakeOpenAIServer(rate_limits=RateWindows(rpm=RPM)) as server:
        judge = _model(server, transport, rpm=RPM)
        verifier = _model(server, transport, rpm=RPM, max_concurrency=4)
        assert judge.rate.endpoint is verifier.rate.endpoint
        wall, results = _timed([(judge, _requests(63, "a")), (verifier, _requests(63, "b"))])
        refused = server.stats.by_status.get(429, 0)
    allowed_s = (126 - RPM) / (RPM / 60)
    assert all(r.error is None for r in results) and len(results) == 126
    assert refused <= 3, refused
    assert allowed_s * 0.9 <= wall <= about(allowed_s), wall
    assert judge.accounting.rate_limited + verifier.accounting.rate_limited == refused
    [entry] = rate_limits_of([judge, verifier])
    assert (entry["rpm"], entry["tpm"], entry["rate_limited"]) == (RPM, None, refused)


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("kind", ["requests", "tokens"])
def test_without_limits_adaptive_concurrency_still_finishes(transport: str, kind: str) -> None:
    """No rpm or tpm given: 429s and the x-ratelimit headers cut concurrency and pause
    the endpoint; every request is answered, none fails on exhausted retries. Both
    windows allow 10 requests a second (each answer reports 10 tokens): faster than any
    client's own pace on a loaded machine."""
    window = (
        RateWindows(rpm=10, period_s=1.0)
        if kind == "requests"
        else RateWindows(tpm=100, period_s=1.0)
    )
    with FakeOpenAIServer(rate_limits=window) as server:
        model = _model(server, transport)
        wall, results = _timed([(model, _requests(40))])
        refused = server.stats.by_status.get(429, 0)
    assert all(r.error is None for r in results), [r.error for r in results if r.error]
    assert wall >= (40 - 10) / 10 * 0.9
    assert model.accounting.rate_limited == refused
    assert model.limit.lowest < model.limit.maximum == 16  # it backed off


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_tpm_holds_estimates_and_is_corrected_by_usage(transport: str) -> None:
    """Each request holds prompt estimate + max_tokens; the reported usage (smaller)
    gives the rest back, so the run goes at the server's token rate, not slower."""
    tpm = 1200  # 20 tokens a second; each answer reports 10 (4 prompt + 6 completion)
    with FakeOpenAIServer(rate_limits=RateWindows(tpm=tpm)) as server:
        model = _model(server, transport, tpm=tpm)
        wall, results = _timed([(model, _requests(128))])
        refused = server.stats.by_status.get(429, 0)
    used = sum(r.response.usage.total_tokens for r in results)
    allowed_s = (used - tpm) / (tpm / 60)
    assert all(r.error is None for r in results) and used == 128 * 10
    assert refused <= 3, refused
    assert allowed_s * 0.9 <= wall <= about(allowed_s), (wall, allowed_s)


def test_a_request_bigger_than_the_token_window_counts_what_it_used() -> None:
    """A request whose worst case exceeds `tpm` holds the whole window (all it can) and
    its usage is corrected against what it held: the window then counts the 257 tokens it
    used, so the next request waits for them. (Corrected against its worst case, 511,
    the window was emptied and a small `tpm` paced nothing.)"""
    model = make_client(ModelConfig(model="openai/m", api_base="http://h:3/v1", tpm=100))
    request = _requests(1, max_tokens=500)[0]
    answer = RawResponse(
        content="{}", usage=Usage(prompt_tokens=250, completion_tokens=7, total_tokens=257)
    )

    async def send(_: ChatRequest) -> RawResponse:
        return answer

    async def level_after_one() -> float:
        await model.rate.send(send, request)
        _, tokens = model.rate.endpoint._windows()
        assert tokens is not None and not tokens.has_capacity(1)
        return float(tokens._level)

    assert asyncio.run(level_after_one()) == pytest.approx(257, abs=1)


def test_the_rate_layer_reads_the_headers_of_both_transports() -> None:
    """A 429's Retry-After pauses the endpoint for every model calling it."""
    for transport in TRANSPORTS:
        with FakeOpenAIServer(rate_limits=RateWindows(rpm=1, period_s=1.0)) as server:
            retry = RetryPolicy(max_attempts=3, initial_wait_s=0.0, jitter_s=0.0)
            model = _model(server, transport, retry=retry)
            wall, results = _timed([(model, _requests(2))])
        assert [r.error for r in results] == [None, None]
        assert model.accounting.rate_limited >= 1 and wall >= 0.9, transport
        assert model.rate.endpoint.paused_until > 0, transport


def test_endpoints_are_shared_by_api_base_and_model_and_keep_the_strictest_limit() -> None:
    a = make_client(ModelConfig(model="openai/m", api_base="http://h:1/v1", rpm=100))
    b = make_client(ModelConfig(model="openai/m", api_base="http://h:1/v1", rpm=50, tpm=9))
    other = make_client(ModelConfig(model="openai/n", api_base="http://h:1/v1"))
    assert a.rate.endpoint is b.rate.endpoint is not other.rate.endpoint
    assert (a.rate.endpoint.rpm, a.rate.endpoint.tpm) == (50, 9)
    assert other.rate.endpoint is endpoint_for(other.config)
    del b  # a model no longer used no longer counts
    make_client(ModelConfig(model="openai/m", api_base="http://h:1/v1"))
    assert a.rate.endpoint.rpm == 100


def test_window_correction_agrees_with_the_library() -> None:
    """Taking 50 and correcting by -40 leaves the bucket as aiolimiter's own after 10."""

    async def levels() -> tuple[bool, bool]:
        ours, theirs = Window60(60), AsyncLimiter(60, 60.0)
        await ours.take(50)
        ours.correct(-40)
        await theirs.acquire(10)
        return ours.has_capacity(50), theirs.has_capacity(50)

    assert asyncio.run(levels()) == (True, True)

    async def over() -> tuple[bool, bool]:
        ours, theirs = Window60(60), AsyncLimiter(60, 60.0)
        await ours.take(10)
        ours.correct(+45)  # used more than it held
        await theirs.acquire(55)
        return ours.has_capacity(10), theirs.has_capacity(10)

    assert asyncio.run(over()) == (False, False)


def test_aimd_halves_once_per_overload_and_grows_by_one_per_window() -> None:
    limit = AdaptiveLimit(16)
    started = time.monotonic()
    assert limit.backoff(started) and limit.limit == 8
    assert not limit.backoff(started)  # sent before the cut: same news, no second cut
    assert limit.backoff(time.monotonic()) and limit.limit == 4 and limit.lowest == 4
    for _ in range(4):
        limit.succeeded()
    assert limit.limit == 5
    for _ in range(3):
        assert limit.backoff(time.monotonic())
    assert limit.limit == 1 == limit.lowest
    fixed = AdaptiveLimit(3, adaptive=False)
    assert not fixed.backoff(time.monotonic()) and fixed.limit == 3


def test_aimd_bounds_requests_in_flight() -> None:
    async def run() -> int:
        limit = AdaptiveLimit(8)
        limit.backoff(time.monotonic())  # 4
        in_flight = peak = 0

        async def one() -> None:
            nonlocal in_flight, peak
            async with limit:
                in_flight += 1
                peak = max(peak, in_flight)
                await asyncio.sleep(0.01)
                in_flight -= 1

        await asyncio.gather(*(one() for _ in range(20)))
        return peak

    assert asyncio.run(run()) == 4


def test_headers_are_read_as_openai_writes_them() -> None:
    assert parse_duration("6m0s") == 360.0 and parse_duration("120ms") == pytest.approx(0.12)
    assert parse_duration("1.5s") == 1.5 and parse_duration("2") == 2.0
    assert parse_duration("soon") is None and parse_duration(None) is None
    headers = lowered(
        {
            "llm_provider-x-ratelimit-limit-requests": "60",
            "X-RateLimit-Remaining-Requests": "0",
            "x-ratelimit-reset-requests": "30s",
        }
    )
    window = read_window(headers, "requests")
    assert window is not None and (window.limit, window.remaining) == (60.0, 0.0)
    assert window.refill_s(1) == pytest.approx(0.5)  # 30 s for 60: one every 0.5 s
    assert read_window(headers, "tokens") is None


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_each_transport_hands_the_answer_headers_to_the_rate_layer(transport: str) -> None:
    """Successes and 429s alike: the sink of the send sees x-ratelimit-* (and, on a
    429, Retry-After); a spent window pauses the endpoint before any 429."""
    with FakeOpenAIServer(rate_limits=RateWindows(rpm=2, period_s=2.0)) as server:
        model = _model(server, transport, retry=RetryPolicy(max_attempts=1))

        async def sends() -> list[dict[str, str]]:
            seen = []
            for request in _requests(3):
                with watching() as sink, contextlib.suppress(TransportError):
                    await model.transport.send(request)
                seen.append(dict(sink.headers))
            return seen

        first, second, third = asyncio.run(sends())
        [answer] = asyncio.run(model.complete_many(_requests(1, "late"), use_cache=False))
    assert first["x-ratelimit-remaining-requests"] == "1" and "retry-after" not in first
    assert second["x-ratelimit-remaining-requests"] == "0"
    assert "retry-after" in third and parse_duration(third["x-ratelimit-reset-requests"])
    assert answer.error is not None and model.accounting.rate_limited == 1
    assert model.limit.limit == 8 and model.rate.endpoint.paused_until > 0


def test_a_spent_window_pauses_the_endpoint_before_any_429() -> None:
    with FakeOpenAIServer(rate_limits=RateWindows(rpm=2, period_s=1.0)) as server:
        model = _model(server, "openai", max_concurrency=2)
        wall, results = _timed([(model, _requests(3))])
        refused = server.stats.by_status.get(429, 0)
    assert [r.error for r in results] == [None] * 3
    assert refused == 0 and model.limit.lowest == 1  # fewer left than in flight: cut
    assert wall >= 0.4  # the third waited for the window (one request per 0.5 s)


def test_the_server_process_enforces_a_window_from_its_command_line() -> None:
    """`python -m assay.testing --rpm 1`: the second request in a minute is a 429."""
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
    answers = []
    with FakeOpenAIServer.spawned(extra_args=["--rpm", "1"]) as client:
        for _ in range(2):
            request = urllib.request.Request(
                client.url + "/v1/chat/completions",
                data=body,
                headers={"Content-Type": "application/json"},
            )
            try:
                with urllib.request.urlopen(request) as response:
                    answers.append((response.status, response.headers.get("retry-after")))
            except urllib.error.HTTPError as exc:
                answers.append((exc.code, exc.headers.get("retry-after")))
    assert answers[0] == (200, None)
    assert answers[1][0] == 429 and 59 < float(answers[1][1]) <= 60


def test_a_window_outlives_the_event_loop_that_filled_it() -> None:
    """A run's next `asyncio.run` (or the next run in the process) to the same endpoint
    starts from what the window had counted, not from a full window."""
    model = make_client(ModelConfig(model="openai/m", api_base="http://h:2/v1", rpm=60))
    endpoint = model.rate.endpoint
    asyncio.run(endpoint.admit(0))
    for _ in range(59):
        asyncio.run(endpoint.admit(0))  # each on a new loop: 60 taken in all

    async def full() -> bool:
        requests, _ = endpoint._windows()
        return requests is not None and not requests.has_capacity(1)

    assert asyncio.run(full())
