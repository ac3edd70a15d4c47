"""The hosted client against a real loopback HTTP server, through each hosted transport:
litellm and the lean OpenAI-compatible one must behave the same."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest

from assay.judges import JudgeItem, LLMJudge, Status
from assay.models import Model, ModelConfig, ResponseCache, RetryPolicy, make_client
from assay.models._hosted import litellm_module
from assay.models._types import ChatRequest, RawResponse
from assay.prompts import PromptRegistry
from assay.testing import (
    FakeOpenAIServer,
    delay,
    http_error,
    malformed_body,
    refusal,
    reply,
    truncated,
)

GOOD = '{"label": "fully_supported", "confidence": 0.9, "rationale": "stated"}'
FAST_RETRY = RetryPolicy(max_attempts=4, initial_wait_s=0.01, max_wait_s=2.0, jitter_s=0.01)
TRANSPORT = "litellm"  # every test runs once per transport (the autouse fixture below)


@pytest.fixture(autouse=True, params=["litellm", "openai"])
def transport(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(sys.modules[__name__], "TRANSPORT", request.param)
    return str(request.param)


def _client(
    server: FakeOpenAIServer, cache: ResponseCache | None, **config: object
) -> Model[ChatRequest, RawResponse]:
    """A client of the fake server with fast retries, over the transport under test."""
    settings: dict[str, object] = {
        "model": "openai/fake-judge",
        "api_base": server.base_url,
        "retry": FAST_RETRY,
        "timeout_s": 5.0,
        "transport": TRANSPORT,
    }
    settings.update(config)
    return make_client(ModelConfig.model_validate(settings), cache)


def _judge(server: FakeOpenAIServer, cache: ResponseCache | None, **config: object) -> LLMJudge:
    return LLMJudge(_client(server, cache, **config), PromptRegistry().get("generic-support@1"))


def _item(tag: str) -> JudgeItem:
    return JudgeItem(claim=f"claim {tag}", evidence=f"evidence {tag}")


def _run(judge: LLMJudge, item: JudgeItem):  # type: ignore[no-untyped-def]
    return asyncio.run(judge(item))


def test_good_answer_is_parsed_and_cached(server: FakeOpenAIServer, tmp_path: Path) -> None:
    server.default = reply(GOOD)
    cache = ResponseCache(tmp_path / "c")
    judge = _judge(server, cache)
    first = _run(judge, _item("a"))
    assert first.status is Status.OK and first.label == "fully_supported" and first.score == 1.0
    assert first.attempts == 1 and not first.cache_hit
    assert first.usage.total_tokens > 0
    second = _run(judge, _item("a"))
    assert second.cache_hit and second.attempts == 0 and second.label == "fully_supported"
    assert server.stats.total == 1  # the cached call never reached the server


def test_429_with_retry_after_is_honoured(server: FakeOpenAIServer, tmp_path: Path) -> None:
    server.script("claim r429", [http_error(429, retry_after=0.5), reply(GOOD)])
    judge = _judge(server, ResponseCache(tmp_path / "c"))
    started = time.perf_counter()
    result = _run(judge, _item("r429"))
    elapsed = time.perf_counter() - started
    assert result.status is Status.OK
    assert result.attempts == 2
    assert elapsed >= 0.45  # waited what the server asked, not the 10 ms backoff
    assert server.stats.by_status[429] == 1 and server.stats.by_status[200] == 1


@pytest.mark.parametrize(
    ("retry_after", "waits"),
    [("soon", False), ("1m", False), ("Wed, 21 Oct 2015 07:28:00 GMT", False)],
)
def test_an_unreadable_or_past_retry_after_falls_back_to_the_backoff(
    server: FakeOpenAIServer, retry_after: str, waits: bool
) -> None:
    """A Retry-After that is neither seconds nor a future HTTP date asks for no wait: the
    request is retried after the backoff (it raised ValueError out of both transports)."""
    asked = http_error(429).model_copy(update={"headers": {"Retry-After": retry_after}})
    server.script("claim odd", [asked, reply(GOOD)])
    judge = _judge(server, None)
    if TRANSPORT == "litellm":
        litellm_module()  # its import is not what this times
    started = time.perf_counter()
    result = _run(judge, _item("odd"))
    assert result.status is Status.OK and result.attempts == 2
    assert (time.perf_counter() - started >= 1.0) is waits


def test_500_is_retried_then_succeeds(server: FakeOpenAIServer) -> None:
    server.script("claim r500", [http_error(500), http_error(503), reply(GOOD)])
    result = _run(_judge(server, None), _item("r500"))
    assert result.status is Status.OK and result.attempts == 3
    assert server.stats.total == 3


def test_retries_are_finite(server: FakeOpenAIServer) -> None:
    server.script("claim always500", [http_error(500)] * 10)
    result = _run(_judge(server, None), _item("always500"))
    assert result.status is Status.API_ERROR
    assert result.attempts == FAST_RETRY.max_attempts == server.stats.total
    assert "500" in (result.error or "")


@pytest.mark.parametrize("code", [400, 401, 403, 404])
def test_client_errors_are_not_retried(server: FakeOpenAIServer, code: int) -> None:
    server.script(f"claim c{code}", [http_error(code)] * 3)
    result = _run(_judge(server, None), _item(f"c{code}"))
    assert result.status is Status.API_ERROR
    assert result.attempts == 1 and server.stats.total == 1


def test_timeout_is_retried_and_counted(server: FakeOpenAIServer) -> None:
    server.script("claim slow", [delay(3.0, reply(GOOD)), reply(GOOD)])
    result = _run(_judge(server, None, timeout_s=0.3), _item("slow"))
    assert result.status is Status.OK and result.attempts == 2


def test_malformed_json_content_is_a_parse_error_and_cached(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    server.script("claim junk", [reply("The claim seems fine {label: fully")])
    cache = ResponseCache(tmp_path / "c")
    result = _run(_judge(server, cache), _item("junk"))
    assert result.status is Status.PARSE_ERROR and result.label is None and result.score is None
    assert result.raw_output == "The claim seems fine {label: fully"
    assert len(cache) == 1  # the raw response is kept: a fixed parser can re-read it


def test_malformed_http_body_is_retried(server: FakeOpenAIServer) -> None:
    server.script("claim badbody", [malformed_body(), reply(GOOD)])
    result = _run(_judge(server, None), _item("badbody"))
    assert result.status is Status.OK and result.attempts == 2


def test_refusal_is_recorded_and_not_cached(server: FakeOpenAIServer, tmp_path: Path) -> None:
    server.script("claim refuse", [refusal("I can't help with that.")])
    cache = ResponseCache(tmp_path / "c")
    result = _run(_judge(server, cache), _item("refuse"))
    assert result.status is Status.REFUSAL
    assert result.refusal == "I can't help with that."
    assert len(cache) == 0


def test_truncation_is_recorded_and_not_cached(server: FakeOpenAIServer, tmp_path: Path) -> None:
    server.script("claim cut", [truncated('{"label": "fully_sup')])
    cache = ResponseCache(tmp_path / "c")
    result = _run(_judge(server, cache), _item("cut"))
    assert result.status is Status.TRUNCATED and len(cache) == 0


def test_label_outside_the_label_set_is_a_parse_error(server: FakeOpenAIServer) -> None:
    server.script("claim odd", [reply('{"label": "mostly_true", "confidence": 0.5}')])
    result = _run(_judge(server, None), _item("odd"))
    assert result.status is Status.PARSE_ERROR and result.label is None
    assert "mostly_true" in (result.error or "")


def test_connection_refused_is_an_api_error_after_retries() -> None:
    with FakeOpenAIServer() as srv:
        base = srv.base_url
    config = ModelConfig(
        model="openai/fake", api_base=base, retry=FAST_RETRY, timeout_s=2.0, transport=TRANSPORT
    )
    judge = LLMJudge(make_client(config, None), PromptRegistry().get("generic-support"))
    result = asyncio.run(judge(_item("x")))
    assert result.status is Status.API_ERROR and result.attempts == FAST_RETRY.max_attempts


def test_concurrency_is_bounded(server: FakeOpenAIServer) -> None:
    server.default = delay(0.1, reply(GOOD))
    judge = _judge(server, None, max_concurrency=3)
    in_flight = 0
    peak = 0
    transport = judge.client.transport
    original = transport.send

    async def counting(request):  # type: ignore[no-untyped-def]
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        try:
            return await original(request)
        finally:
            in_flight -= 1

    transport.send = counting

    async def many() -> list[Status]:
        results = await asyncio.gather(*(judge(_item(str(i))) for i in range(12)))
        return [r.status for r in results]

    assert asyncio.run(many()) == [Status.OK] * 12
    assert peak == 3


def test_api_key_goes_to_the_server_only(
    server: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-SECRET-abc123"
    monkeypatch.setenv("MY_JUDGE_KEY", secret)
    server.default = reply(GOOD)
    cache = ResponseCache(tmp_path / "c")
    judge = _judge(server, cache, api_key_env="MY_JUDGE_KEY")
    result = _run(judge, _item("k"))
    assert result.status is Status.OK
    assert server.headers_seen[-1]["authorization"] == f"Bearer {secret}"
    assert secret not in str(judge.describe())
    cache.close()
    for path in (tmp_path / "c").rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes()


def test_cost_comes_from_litellm_offline_cost_map(server: FakeOpenAIServer) -> None:
    server.default = reply(GOOD)
    judge = _judge(server, None, model="openai/gpt-4o-mini")
    result = _run(judge, _item("cost"))
    assert result.status is Status.OK
    assert result.usage.cost_usd is not None and result.usage.cost_usd > 0


def test_refresh_cache_calls_again_and_overwrites(server: FakeOpenAIServer, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c")
    server.script("claim fresh", [reply(GOOD)])
    _run(_judge(server, cache), _item("fresh"))
    server.script("claim fresh", [reply('{"label": "unsupported", "confidence": 0.2}')])
    client = _client(server, cache)
    prompt = PromptRegistry().get("generic-support@1")
    refreshed = asyncio.run(LLMJudge(client, prompt, refresh_cache=True)(_item("fresh")))
    assert refreshed.label == "unsupported" and not refreshed.cache_hit
    again = asyncio.run(LLMJudge(client, prompt)(_item("fresh")))
    assert again.cache_hit and again.label == "unsupported"
    assert server.stats.total == 2


def test_sampling_without_seed_warns_and_samples_have_distinct_cache_keys(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    from assay.models import Decoding

    cache = ResponseCache(tmp_path / "c")
    client = _client(server, cache)
    prompt = PromptRegistry().get("generic-support@1")
    hot = Decoding(temperature=0.7)
    j0 = LLMJudge(client, prompt, decoding=hot, sample_index=0)
    j1 = LLMJudge(client, prompt, decoding=hot, sample_index=1)
    assert j0.warnings() and "seed" in j0.warnings()[0]
    assert not LLMJudge(client, prompt, decoding=Decoding(temperature=0.7, seed=1)).warnings()
    asyncio.run(j0(_item("s")))
    asyncio.run(j1(_item("s")))
    assert server.stats.total == 2 and len(cache) == 2
