"""Verifier parsing (strict vs legacy), the overlap baseline and LLM verifier kinds."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from assay.core.outcomes import Status
from assay.datasets import Passage
from assay.models import ModelConfig, RetryPolicy, make_client
from assay.prompts import PromptRegistry
from assay.testing import FakeOpenAIServer, refusal, reply, truncated
from assay.verifiers import (
    ClaimToVerify,
    LLMVerifier,
    OverlapVerifier,
    VerdictLabel,
    parse_nli,
    parse_true_false,
    parse_true_false_legacy,
)

S, U = VerdictLabel.SUPPORTED, VerdictLabel.UNSUPPORTED


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("Answer: True", S),
        ("The passage says so.\nAnswer: False", U),
        ("**Final answer:** True.", S),
        ("True", S),
        ("false.", U),
        ('{"label": "true", "rationale": "ok"}', S),
        ('{"answer": false}', U),
    ],
)
def test_strict_reads_clear_answers(text: str, label: VerdictLabel) -> None:
    parsed = parse_true_false(text)
    assert parsed.status is Status.OK and parsed.label is label


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "It is untrue.",
        "Probably true, but I am not sure",
        "True or False: False or True",
        "Answer: True or False",
        "maybe",
    ],
)
def test_strict_never_guesses(text: str) -> None:
    parsed = parse_true_false(text)
    assert parsed.status is Status.PARSE_ERROR and parsed.label is None


def test_strict_reports_refusal_and_truncation() -> None:
    assert parse_true_false("I'm sorry, I can't help with that.").status is Status.REFUSAL
    assert parse_true_false("x", refusal="no").status is Status.REFUSAL
    assert parse_true_false("Answer: Tr", finish_reason="length").status is Status.TRUNCATED


def test_legacy_quirks_are_reproduced() -> None:
    # "untrue" contains "true": supported under the legacy rule
    assert parse_true_false_legacy("It is untrue.").label is S
    # an empty or keyword-free hedge is supported; a "not" makes it unsupported
    assert parse_true_false_legacy("").label is S
    assert parse_true_false_legacy("I think it might be").label is S
    assert parse_true_false_legacy("I do not know").label is U
    # both words: FActScore compares first occurrences, MedScore last occurrences
    text = "True at first sight, but false on reflection; overall true."
    assert parse_true_false_legacy(text, rule="factscore").label is U
    assert parse_true_false_legacy(text, rule="medscore").label is S
    assert parse_true_false(text).status is Status.PARSE_ERROR


def test_nli_threshold_and_labels() -> None:
    ok = parse_nli('{"label": "entailment", "entailment_probability": 0.93}')
    assert ok.label is S and ok.score == pytest.approx(0.93)
    weak = parse_nli('{"label": "entailment", "entailment_probability": 0.7}')
    assert weak.label is U
    assert (
        parse_nli('{"label": "entailment", "entailment_probability": 0.7}', threshold=0.5).label
        is S
    )
    contra = parse_nli('{"label": "contradiction", "entailment_probability": 0.02}')
    assert contra.label is VerdictLabel.CONTRADICTED
    for bad in (
        '{"label": "yes", "entailment_probability": 0.9}',
        '{"label": "entailment", "entailment_probability": 1.7}',
        '{"label": "entailment"}',
        "entailment",
    ):
        assert parse_nli(bad).status is Status.PARSE_ERROR


def test_overlap_verifier() -> None:
    v = OverlapVerifier(threshold=0.6)
    item = ClaimToVerify(
        claim_id="c",
        claim="Aspirin thins blood",
        evidence=[Passage(id="a", text="Unrelated."), Passage(id="b", text="Aspirin thins blood.")],
    )
    verdict = asyncio.run(v.verify(item))
    assert verdict.label is S and verdict.evidence[0].passage_id == "b"
    none = asyncio.run(v.verify(ClaimToVerify(claim_id="c", claim="Aspirin thins blood")))
    assert none.status is Status.OK and none.label is U and none.error


def _verifier(srv: FakeOpenAIServer, kind: str, **kw: object) -> LLMVerifier:
    config = ModelConfig(
        model="openai/fake",
        api_base=srv.base_url,
        retry=RetryPolicy(max_attempts=2, initial_wait_s=0.01, max_wait_s=0.1),
    )
    prompt = {"internal": "verify-internal", "nli": "nli-entailment"}.get(kind, "verify-context")
    return LLMVerifier(make_client(config, None), PromptRegistry().get(prompt), kind=kind, **kw)  # type: ignore[arg-type]


def test_internal_verifier_sends_no_evidence(server: FakeOpenAIServer) -> None:
    server.default = reply("Answer: True")
    item = ClaimToVerify(
        claim_id="c", claim="Paris is in France", evidence=[Passage(id="x", text="SECRET-PASSAGE")]
    )
    verdict = asyncio.run(_verifier(server, "internal").verify(item))
    assert verdict.label is S and verdict.attempts == 1
    assert "SECRET-PASSAGE" not in json.dumps(server.requests[-1])


def test_context_verifier_statuses(server: FakeOpenAIServer) -> None:
    item = ClaimToVerify(claim_id="c", claim="X", evidence=[Passage(id="p", text="X is so.")])
    server.script("X is so.", [refusal(), truncated("Answer: Tr"), reply("")])
    v = _verifier(server, "context")
    assert asyncio.run(v.verify(item)).status is Status.REFUSAL
    assert asyncio.run(v.verify(item)).status is Status.TRUNCATED
    empty = asyncio.run(v.verify(item))
    assert empty.status is Status.PARSE_ERROR and empty.label is None


def test_retrieval_verifier_uses_top_k_passages(server: FakeOpenAIServer, tmp_path: Path) -> None:
    from assay.retrieval import BM25Retriever, load_corpus

    corpus = tmp_path / "corpus.jsonl"
    rows = [
        {"id": "d1", "text": "The Eiffel Tower is in Paris and opened in 1889."},
        {"id": "d2", "text": "Bananas are rich in potassium."},
        {"id": "d3", "text": "Paris is the capital of France."},
    ]
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    server.default = reply("Answer: True")
    v = _verifier(server, "retrieval", retriever=BM25Retriever(load_corpus(corpus)), top_k=2)
    verdict = asyncio.run(
        v.verify(ClaimToVerify(claim_id="c", claim="The Eiffel Tower opened in 1889"))
    )
    assert verdict.label is S
    assert verdict.evidence[0].passage_id == "d1" and len(verdict.evidence) <= 2
    sent = json.dumps(server.requests[-1])
    assert "Eiffel Tower is in Paris" in sent and "Bananas" not in sent
    assert v.describe()["retriever"]["kind"]


def test_nli_prompt_verifier(server: FakeOpenAIServer) -> None:
    server.default = reply('{"label": "entailment", "entailment_probability": 0.95}')
    item = ClaimToVerify(claim_id="c", claim="X", evidence=[Passage(id="p", text="X.")])
    verdict = asyncio.run(_verifier(server, "nli").verify(item))
    assert verdict.label is S and verdict.score == pytest.approx(0.95)
