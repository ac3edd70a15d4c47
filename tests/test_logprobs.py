"""`logprobs = true` through both hosted transports against the loopback server, and the
probability of a judge's label read from the label's tokens or a confidence field."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

from assay.core.outcomes import Status, TokenLogprob
from assay.core.records import ItemJudgmentRecord
from assay.errors import ModelConfigError
from assay.judges import LLMJudge
from assay.models import ChatRequest, Decoding, ModelConfig, RetryPolicy, make_client, transport_for
from assay.models._cache import cache_key
from assay.models._types import Message
from assay.parsing import ParsedVerdict
from assay.parsing._confidence import (
    confidence_from_field,
    label_span,
    reparsed_probability,
    span_probability,
)
from assay.prompts import PromptRegistry
from assay.testing import FakeOpenAIServer, reply, tokens

ANSWER = '{"label": "fully_supported", "confidence": 0.8, "rationale": "stated"}'
LABEL_LOGPROB = math.log(0.7)


def _config(server: FakeOpenAIServer, transport: str) -> ModelConfig:
    return ModelConfig(
        model="openai/fake-judge",
        api_base=server.base_url,
        retry=RetryPolicy(max_attempts=1),
        timeout_s=5.0,
        transport=transport,
    )


def _request(**decoding: Any) -> ChatRequest:
    return ChatRequest(
        messages=[Message(role="user", content="judge this")], decoding=Decoding(**decoding)
    )


@pytest.mark.parametrize("transport", ["litellm", "openai"])
def test_logprobs_are_asked_for_and_read_back(server: FakeOpenAIServer, transport: str) -> None:
    server.default = reply(ANSWER, logprobs={"fully_supported": LABEL_LOGPROB})
    raw = asyncio.run(
        transport_for(_config(server, transport)).send(_request(logprobs=True, top_logprobs=2))
    )
    body = server.requests[-1]
    assert body["logprobs"] is True and body["top_logprobs"] == 2
    assert raw.logprobs is not None
    assert "".join(t.token for t in raw.logprobs) == ANSWER
    label = [t for t in raw.logprobs if t.token == "fully_supported"]
    assert label[0].logprob == pytest.approx(LABEL_LOGPROB)
    assert label[0].top == [("fully_supported", pytest.approx(LABEL_LOGPROB))]


@pytest.mark.parametrize("transport", ["litellm", "openai"])
def test_not_asking_sends_nothing_and_gets_nothing(
    server: FakeOpenAIServer, transport: str
) -> None:
    server.default = reply(ANSWER)
    raw = asyncio.run(transport_for(_config(server, transport)).send(_request()))
    assert "logprobs" not in server.requests[-1] and "top_logprobs" not in server.requests[-1]
    assert raw.logprobs is None
    assert "logprobs" not in raw.model_dump()  # cached answers keep their shape


def test_logprobs_are_part_of_the_cache_key_and_default_keys_are_unchanged(
    server: FakeOpenAIServer,
) -> None:
    config = _config(server, "openai")
    plain, asked = cache_key(config, _request()), cache_key(config, _request(logprobs=True))
    assert plain != asked
    assert "logprobs" not in Decoding().model_dump()  # older keys and manifests stay
    assert cache_key(config, _request(logprobs=True, top_logprobs=3)) != asked


def test_top_logprobs_without_logprobs_is_refused() -> None:
    with pytest.raises(ModelConfigError, match="needs logprobs = true"):
        Decoding(top_logprobs=2)


def _judge(server: FakeOpenAIServer, transport: str, **options: Any) -> LLMJudge:
    client = make_client(_config(server, transport), None)
    return LLMJudge(
        client,
        PromptRegistry().get("generic-support@1"),
        decoding=Decoding(logprobs=True),
        use_cache=False,
        **options,
    )


@pytest.mark.parametrize("transport", ["litellm", "openai"])
def test_a_judge_records_its_labels_probability(server: FakeOpenAIServer, transport: str) -> None:
    scripted = {"fully": -9.0, "fully_supported": LABEL_LOGPROB, "label": -5.0}
    server.default = reply(ANSWER, logprobs=scripted)
    judge = _judge(server, transport)
    judgment = asyncio.run(judge.judge_variables({"claim": "c", "evidence": "e"}))
    assert judgment.status is Status.OK
    assert judgment.label_probability == pytest.approx(0.7)  # the label's token only
    record = ItemJudgmentRecord.model_validate(
        {**judgment.model_dump(), "dataset": "d", "item_id": "1", "judge_id": judge.id}
    )
    line = record.model_dump(mode="json")
    assert line["label_probability"] == pytest.approx(0.7)
    assert len(line["logprobs"]) == len(tokens(ANSWER))


def test_a_confidence_field_is_the_probability_when_named(server: FakeOpenAIServer) -> None:
    server.default = reply(ANSWER, logprobs={"fully_supported": LABEL_LOGPROB})
    judge = _judge(server, "openai", confidence_field="confidence")
    judgment = asyncio.run(judge.judge_variables({"claim": "c", "evidence": "e"}))
    assert judgment.label_probability == pytest.approx(0.8)
    assert judge.describe()["confidence_field"] == "confidence"


def test_a_confidence_field_must_be_a_number_of_the_answer(server: FakeOpenAIServer) -> None:
    with pytest.raises(ModelConfigError, match="generic-support.*not a number field"):
        _judge(server, "openai", confidence_field="rationale")


def test_records_without_a_probability_keep_their_shape() -> None:
    record = ItemJudgmentRecord(dataset="d", item_id="1", judge_id="j", status=Status.OK)
    dumped = record.model_dump()
    assert "label_probability" not in dumped and "logprobs" not in dumped


def test_label_span_and_probability_of_multi_token_labels() -> None:
    content = '{"rationale": "x", "label": "partially_supported"}'
    parts = ['{"', "rationale", '":', ' "x', '",', ' "', "label", '":', ' "', "partial"]
    parts += ["ly_supported", '"}']
    logprobs = [TokenLogprob(token=t, logprob=-0.1 * k) for k, t in enumerate(parts)]
    span = label_span(content, "label")
    assert span is not None and content[span[0] : span[1]] == "partially_supported"
    # tokens 9 and 10 spell the value; token 8 (' "') ends before it
    assert span_probability(content, logprobs, span) == pytest.approx(math.exp(-0.9 - 1.0))
    assert label_span('{"score": 4}', "score") is not None
    broken = [TokenLogprob(token="??", logprob=0.0), *logprobs]
    assert span_probability(content, broken, span) is None  # tokens that do not spell it


def test_confidence_scales() -> None:
    assert confidence_from_field({"c": 4}, "c", (1.0, 5.0)) == pytest.approx(0.75)
    assert confidence_from_field({"c": 1.5}, "c", None) is None
    assert confidence_from_field({"c": True}, "c", None) is None
    assert confidence_from_field({"c": 0.25}, "c", None) == 0.25


def test_a_reparse_recomputes_from_tokens_and_drops_failed_verdicts() -> None:
    model = PromptRegistry().get("generic-support@1").output_model
    ok = ParsedVerdict(status=Status.OK, label="fully_supported", parsed={"confidence": 0.8})
    failed = ParsedVerdict(status=Status.PARSE_ERROR, error="no JSON object found")
    logprobs = [TokenLogprob(token=t, logprob=LABEL_LOGPROB) for t in tokens(ANSWER)]
    again = reparsed_probability(ok, ANSWER, logprobs, 0.1, model)
    assert again == pytest.approx(0.7)  # from the tokens, not the recorded 0.1
    assert reparsed_probability(ok, ANSWER, None, 0.8, model) == 0.8  # a confidence field
    assert reparsed_probability(failed, ANSWER, logprobs, 0.7, model) is None
