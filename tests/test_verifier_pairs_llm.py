"""LLM verifiers record the context they were shown as one scored pair, against the
real loopback server; verdicts stay those of v0.1; the verify stage writes the pairs."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from test_factuality_run import responder, run, write_spec
from test_verifier_pairs import record_json, v0_1_inputs, verdict_json

from assay.core.answers import Passage
from assay.core.outcomes import Status
from assay.core.records import VerificationRecord
from assay.models import ModelConfig, ResponseCache, RetryPolicy, make_client
from assay.prompts import PromptRegistry
from assay.retrieval import BM25Retriever, Corpus
from assay.testing import Behavior, FakeOpenAIServer, reply
from assay.verifiers import ClaimToVerify, EvidenceUse, LLMVerifier, Verdict, VerdictLabel
from assay.verifiers._relations import claim_tokens, lexicon_limitation

PROMPTS = {"internal": "verify-internal", "nli": "nli-entailment"}


def _verifier(
    srv: FakeOpenAIServer,
    kind: str,
    *,
    model: str = "openai/fake",
    cache: ResponseCache | None = None,
    **kw: Any,
) -> LLMVerifier:
    config = ModelConfig(
        model=model,
        api_base=srv.base_url,
        retry=RetryPolicy(max_attempts=2, initial_wait_s=0.01, max_wait_s=0.1),
    )
    prompt = PromptRegistry().get(PROMPTS.get(kind, "verify-context"))
    return LLMVerifier(make_client(config, cache), prompt, kind=kind, **kw)  # type: ignore[arg-type]


def _verify(verifier: LLMVerifier, item: ClaimToVerify) -> Verdict:
    return asyncio.run(verifier.verify(item))


CLAIM = "Aspirin thins the blood"
ONE = [Passage(id="p1", text="Aspirin thins blood only if taken daily.", doc_id="L1", page=2)]
TWO = [*ONE, Passage(id="p2", text="Adults should avoid aspirin.")]


def _item(evidence: list[Passage]) -> ClaimToVerify:
    return ClaimToVerify(claim_id="c", claim=CLAIM, evidence=evidence)


def test_a_true_false_answer_is_a_label_with_confidence(server: FakeOpenAIServer) -> None:
    server.script(None, [reply("Answer: True"), reply("Answer: False")])
    v = _verifier(server, "context")
    supported, unsupported = _verify(v, _item(ONE)), _verify(v, _item(ONE))
    for verdict, probs in ((supported, (1.0, 0.0, 0.0)), (unsupported, (0.0, 0.0, 1.0))):
        (pair,) = verdict.pairs
        assert (pair.p_entail, pair.p_contradict, pair.p_neutral) == probs
        assert (pair.s_support, pair.s_conflict) == probs[:2]
        assert (pair.relation_source, pair.score_source) == ("llm", "label_confidence")
        assert (pair.passage_id, pair.doc_id, pair.page, pair.context) == ("p1", "L1", 2, None)
        # the limitation score is the lexicon's: the claim's tokens all occur, "only if"
        assert pair.s_limitation == 1.0 and pair.limitation_source == "lexicon"
    assert supported.label is VerdictLabel.SUPPORTED
    assert supported.evidence == [EvidenceUse(passage_id="p1")]


def test_several_passages_are_one_pair_listing_its_context(server: FakeOpenAIServer) -> None:
    server.default = reply("Answer: True")
    (pair,) = _verify(_verifier(server, "context"), _item(TWO)).pairs
    assert pair.passage_id is None and pair.doc_id is None
    assert [(c.passage_id, c.doc_id, c.page) for c in pair.context or []] == [
        ("p1", "L1", 2),
        ("p2", None, None),
    ]
    premise = "\n".join(p.text for p in TWO)
    assert pair.s_limitation == lexicon_limitation(claim_tokens(CLAIM), premise) == 1.0


def test_stated_relation_scores_become_the_triple(server: FakeOpenAIServer) -> None:
    answer = {"label": "true", "support": 0.9, "conflict": 0.2, "limitation": 0.4}
    server.default = reply(json.dumps(answer))
    verdict = _verify(_verifier(server, "context"), _item(ONE))
    (pair,) = verdict.pairs
    assert verdict.label is VerdictLabel.SUPPORTED and verdict.score == 1.0
    assert (pair.s_support, pair.s_conflict, pair.s_limitation) == (0.9, 0.2, 0.4)
    assert (pair.relation_source, pair.limitation_source) == ("llm", "llm")
    assert pair.p_entail == 1.0  # the label still gives the probabilities


def test_nli_prompt_probabilities(server: FakeOpenAIServer) -> None:
    full = {
        "label": "contradiction",
        "entailment_probability": 0.05,
        "contradiction_probability": 0.9,
        "neutral_probability": 0.05,
    }
    server.script(None, [reply(json.dumps(full)), reply('{"label": "neutral", "score": 0.3}')])
    v = _verifier(server, "nli")
    verdict, partial = _verify(v, _item(ONE)), _verify(v, _item(ONE))
    (pair,) = verdict.pairs
    assert verdict.label is VerdictLabel.CONTRADICTED and verdict.score == 0.05
    assert (pair.p_entail, pair.p_contradict, pair.p_neutral) == (0.05, 0.9, 0.05)
    assert (pair.s_support, pair.s_conflict) == (0.05, 0.9)
    assert (pair.relation_source, pair.score_source) == ("nli", "llm_probability")
    (half,) = partial.pairs
    assert (half.p_entail, half.p_contradict, half.p_neutral, half.s_conflict) == (
        0.3,
        None,
        None,
        None,
    )


def test_failures_internal_and_empty_context_record_no_pair(server: FakeOpenAIServer) -> None:
    server.script(None, [reply("I think it might be"), reply("Answer: True")])
    failed = _verify(_verifier(server, "context"), _item(ONE))
    assert failed.status is Status.PARSE_ERROR and failed.pairs == []
    internal = _verify(_verifier(server, "internal"), _item(ONE))
    assert internal.label is VerdictLabel.SUPPORTED and internal.pairs == []
    empty = _verify(_verifier(server, "context"), _item([]))
    assert empty.error == "no evidence passages" and empty.pairs == []


def _bm25() -> BM25Retriever:
    rows = [
        ("d1", "The Eiffel Tower is in Paris and opened in 1889."),
        ("d2", "Bananas are rich in potassium."),
        ("d3", "Paris is the capital of France; the tower opened to visitors in 1889."),
    ]
    return BM25Retriever(Corpus.from_passages(Passage(id=i, text=t) for i, t in rows))


def test_retrieved_context_keeps_ranks_raw_and_normalised_scores(
    server: FakeOpenAIServer,
) -> None:
    server.default = reply("Answer: True")
    claim = "The Eiffel Tower opened in 1889"
    bm25 = _bm25()
    hits = bm25.search(claim, k=2)
    verdict = _verify(
        _verifier(server, "retrieval", retriever=bm25, top_k=2),
        ClaimToVerify(claim_id="c", claim=claim),
    )
    (pair,) = verdict.pairs
    assert pair.retrieval_normalization == "query_max"
    context = pair.context or []
    assert [c.passage_id for c in context] == [h.passage.id for h in hits] == ["d1", "d3"]
    assert [c.retrieval_rank for c in context] == [1, 2]
    assert [c.retrieval_score_raw for c in context] == [h.score for h in hits]
    assert [c.retrieval_score for c in context] == [h.score / hits[0].score for h in hits]
    # the verdict's evidence is what it was: ids with raw retrieval scores
    assert verdict.evidence == [EvidenceUse(passage_id=h.passage.id, score=h.score) for h in hits]
    (single,) = _verify(
        _verifier(server, "retrieval", retriever=bm25, top_k=1),
        ClaimToVerify(claim_id="c", claim=claim),
    ).pairs
    assert (single.passage_id, single.retrieval_rank, single.retrieval_score) == ("d1", 1, 1.0)
    assert single.retrieval_score_raw == hits[0].score and single.context is None


def test_the_request_and_its_cache_entry_are_unchanged(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    server.default = reply("Answer: True")
    cache = ResponseCache(tmp_path / "cache")
    first_verifier = _verifier(server, "context", cache=cache)
    request, _ = first_verifier.request_for(_item(TWO))
    first = _verify(first_verifier, _item(TWO))
    assert request is not None
    assert server.requests[-1]["messages"] == [m.model_dump() for m in request.messages]
    sent = server.stats.total
    again = _verify(_verifier(server, "context", cache=cache), _item(TWO))
    assert again.cache_hit and server.stats.total == sent  # same key: served from cache
    assert again.pairs == first.pairs and again.label == first.label


def test_context_verdicts_are_byte_for_byte_those_of_v0_1(server: FakeOpenAIServer) -> None:
    records, item_of = v0_1_inputs("hosted")
    mine = [r for r in records if r["verifier_id"].startswith("context:")]
    raw = {r["claim"]: r["raw_output"] for r in mine}

    def answer(body: dict[str, Any]) -> Behavior:
        text = "\n".join(str(m.get("content")) for m in body["messages"])
        statement = re.search(r'Statement:\n"""\n(.*?)\n"""', text, re.S)
        assert statement is not None
        return reply(raw[statement.group(1)])

    server.responder = answer
    verifier = _verifier(server, "context", model="openai/gpt-4o-mini")
    assert verifier.describe()["prompt"]["sha256"] == mine[0]["prompt_sha256"]
    assert len(mine) == 25 and {r["status"] for r in mine} == {"ok", "parse_error"}
    for record in mine:
        verdict = _verify(verifier, item_of(record))
        assert verdict_json(verdict) == record_json(record), record["claim"]
        assert len(verdict.pairs) == (1 if record["status"] == "ok" else 0)


def test_the_verify_stage_writes_every_pair(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=responder) as srv:
        out = tmp_path / "run"
        assert run(write_spec(tmp_path, srv.base_url), out).status == "complete"
    lines = (out / "verifications.jsonl").read_text(encoding="utf-8").splitlines()
    records = [VerificationRecord.model_validate_json(line) for line in lines]
    # a record with scored pairs lists them; one without (a failed verdict) has no key
    assert all(
        ("pairs" in json.loads(line)) == bool(r.pairs)
        for line, r in zip(lines, records, strict=True)
    )
    for r in records:
        evidence_ids = [e["passage_id"] for e in r.evidence]
        if r.verifier_id == "baseline:overlap":
            assert [p.relation_source for p in r.pairs] == ["lexical"] * len(r.pairs)
            assert [p.passage_id for p in r.pairs] == (["p1"] if r.answer_id == "a1" else ["p2"])
        elif r.status is Status.OK:
            (pair,) = r.pairs
            assert [pair.passage_id] == evidence_ids and pair.score_source == "label_confidence"
        else:
            assert r.pairs == []
    assert sum(len(r.pairs) for r in records) == 5 + 4  # 5 overlap, 4 parsed LLM verdicts
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    described = {v["kind"]: v for v in manifest["factuality"]["verifiers"]}
    assert described["baseline-overlap"]["pairs"]["lexicons"]["relation-cues@1"]
    assert described["llm-context"]["pairs"]["relation_source"] == "llm"


@pytest.mark.parametrize("kind", ["context", "nli", "retrieval"])
def test_describe_names_the_lexicons(server: FakeOpenAIServer, kind: str) -> None:
    extra: dict[str, Any] = {"retriever": _bm25()} if kind == "retrieval" else {}
    info = _verifier(server, kind, **extra).describe()["pairs"]
    assert info["relation_source"] == ("nli" if kind == "nli" else "llm")
    assert set(info["lexicons"]) == {"relation-cues@1", "tokens@1"}
