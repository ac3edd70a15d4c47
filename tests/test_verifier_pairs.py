"""Scored pairs without a model: record contract, retrieval normalisation, the cue
lexicon, sentence spans, and the overlap verifier's pairs."""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from scipy.special import expit

from assay.core.answers import Passage
from assay.core.records import ClaimRecord, VerificationRecord
from assay.core.verification import ScoredPair, SentenceSpan, SetScore
from assay.decomposers import split_sentences
from assay.judges._baseline_text import content_tokens
from assay.policies.engine._canonical import write_canonical_jsonl
from assay.retrieval import (
    BM25Retriever,
    Corpus,
    DenseRetriever,
    HybridRetriever,
    normalise_scores,
    reciprocal_rank_fusion,
)
from assay.runs.stages._verify import claim_inputs
from assay.verifiers import ClaimToVerify, OverlapVerifier
from assay.verifiers._pairs import LEXICAL_LABELS, lexical_probabilities
from assay.verifiers._relations import claim_tokens, cue, describe_relations, lexical_triple
from assay.verifiers._spans import sentence_spans

V0_1 = Path(__file__).parent / "fixtures" / "runs_v0_1"
DOCS = [
    ("d1", "The Eiffel Tower is in Paris and opened in 1889."),
    ("d2", "Bananas are rich in potassium."),
    ("d3", "Paris is the capital of France; the tower opened to visitors in 1889."),
]


def _corpus() -> Corpus:
    return Corpus.from_passages(Passage(id=i, text=t) for i, t in DOCS)


# ---- normalisation of retrieval scores ---------------------------------------------------


def test_sigmoid_maps_logits_as_the_spec_says() -> None:
    got = normalise_scores([-2.0, 0.0, 2.0], "sigmoid")
    assert [round(v, 4) for v in got] == [0.1192, 0.5, 0.8808]
    for logit, value in zip([-2.0, 0.0, 2.0], got, strict=True):
        assert value == float(expit(np.float64(logit)))
        assert math.isclose(value, 1 / (1 + math.exp(-logit)), rel_tol=1e-15)


def test_cosine_is_shifted_onto_the_unit_interval() -> None:
    raw = [-1.0, -0.2, 0.0, 0.6, 1.0]
    assert normalise_scores(raw, "cosine") == [(c + 1) / 2 for c in raw]
    assert normalise_scores([1.0000001], "cosine") == [1.0]  # float noise, not a score


def test_bm25_scores_are_divided_by_the_query_max() -> None:
    hits = BM25Retriever(_corpus()).search("Eiffel Tower opened 1889", k=3)
    raw = [h.score for h in hits]
    assert len(raw) >= 2 and raw[0] > raw[-1] > 0
    assert normalise_scores(raw, "query_max") == [s / raw[0] for s in raw]
    assert normalise_scores([0.0, 0.0], "query_max") == [0.0, 0.0]
    assert normalise_scores([], "query_max") == []


def test_fused_scores_are_divided_by_the_best_fused_score() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["b", "c", "a"]], rrf_k=60)
    raw = [s for _, s in fused]
    assert normalise_scores(raw, "best_fused") == [s / max(raw) for s in raw]


def test_identity_needs_probabilities_and_bad_methods_fail() -> None:
    assert normalise_scores([0.0, 0.25, 1.0], "identity") == [0.0, 0.25, 1.0]
    with pytest.raises(ValueError, match="identity.*1.2"):
        normalise_scores([0.3, 1.2], "identity")
    with pytest.raises(ValueError, match="unknown score normalization"):
        normalise_scores([0.3], "minmax")
    with pytest.raises(ValueError, match="not a finite number"):
        normalise_scores([0.3, math.nan], "query_max")


_finite = st.floats(-50, 50, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(
    method=st.sampled_from(["cosine", "query_max", "best_fused", "sigmoid"]),
    raw=st.lists(_finite, max_size=12),
)
def test_normalised_scores_lie_in_unit_interval_and_keep_the_order(
    method: str, raw: list[float]
) -> None:
    if method == "cosine":
        raw = [max(-1.0, min(1.0, v / 50)) for v in raw]
    elif method in ("query_max", "best_fused"):
        raw = [abs(v) for v in raw]  # BM25 and fused scores are never negative
    out = normalise_scores(raw, method)
    assert len(out) == len(raw) and all(0.0 <= v <= 1.0 for v in out)
    order = np.argsort(raw, kind="stable")
    for i, j in zip(order, order[1:], strict=False):
        assert out[i] <= out[j]


class _HashEmbedder:
    """Deterministic toy embeddings: enough for a DenseRetriever to exist."""

    def embed(self, texts: list[str]) -> Any:
        rows = [[(hash(w) % 7) - 3.0 for w in (t + " pad pad pad").split()[:4]] for t in texts]
        return np.asarray(rows, dtype=np.float32) + 0.5

    def describe(self) -> dict[str, Any]:
        return {"kind": "hash"}


def test_every_retriever_names_its_normalization() -> None:
    corpus = _corpus()
    bm25, dense = BM25Retriever(corpus), DenseRetriever(corpus, _HashEmbedder())
    hybrid = HybridRetriever(bm25, dense)
    for retriever, method in ((bm25, "query_max"), (dense, "cosine"), (hybrid, "best_fused")):
        assert retriever.score_normalization == method
        assert retriever.describe()["score_normalization"]["method"] == method


# ---- the cue lexicon -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "cues", "expected"),
    [
        ("Do NOT\n  use it in children.", "conflict", 1),  # any case, any whitespace
        ("Avoidance of salt helps.", "conflict", 0),  # word boundaries
        ("It is contraindicated.", "conflict", 1),
        ("A life-threatening reaction.", "conflict", 1),
        ("Take it only if needed.", "limitation", 1),
        ("An iffy claim, only iffy.", "limitation", 0),
        ("UNLESS told otherwise", "limitation", 1),
        ("Do not exceed 4 g a day.", "limitation", 1),
        ("Walking lowers blood pressure.", "limitation", 0),
    ],
)
def test_cues_match_whole_phrases_case_insensitively(text: str, cues: Any, expected: int) -> None:
    assert cue(text, cues) == expected


def test_the_lexicon_holds_the_spec_examples_and_its_hash_is_the_files() -> None:
    from assay.judges._baseline_lexicons import lexicon

    lex = lexicon("relation-cues@1")
    limitation, conflict = set(lex.words("limitation")), set(lex.words("conflict"))
    assert {"only if", "unless", "in patients with", "do not exceed", "reduce the dose"} <= (
        limitation
    )
    assert {"contraindicated", "do not use", "avoid", "not recommended", "risk of"} <= conflict
    raw = resources.files("assay.judges").joinpath("lexicons", "relation-cues@1.toml").read_bytes()
    described = OverlapVerifier().describe()["pairs"]
    assert described["lexicons"]["relation-cues@1"] == hashlib.sha256(raw).hexdigest()
    assert described == {
        "relation_source": "lexical",
        "score_source": "label_confidence",
        "labels": LEXICAL_LABELS,
        **describe_relations(),
    }


def test_lexical_triple_is_overlap_times_cues() -> None:
    tokens = claim_tokens("Aspirin thins the blood in adults")  # aspirin, thin, blood, adult
    assert len(tokens) == 4
    only_if = lexical_triple(tokens, "Aspirin thins blood only if taken daily.")
    assert (only_if.support, only_if.conflict, only_if.limitation) == (0.75, 0.0, 0.75)
    avoid = lexical_triple(tokens, "Adults should avoid aspirin.")
    assert (avoid.support, avoid.conflict, avoid.limitation) == (0.5, 0.5, 0.0)
    none = lexical_triple(claim_tokens("It is."), "Avoid it unless needed.")
    assert (none.support, none.conflict, none.limitation) == (0.0, 0.0, 0.0)


# ---- sentence spans --------------------------------------------------------------------


def test_sentence_spans_are_code_point_offsets() -> None:
    text = "Café 😀 opens at 9 a.m. daily. It closes at 5! Über alles?"
    assert len(text.encode("utf-16-le")) // 2 != len(text)  # the emoji is 2 UTF-16 units
    spans = sentence_spans("p", text)
    assert [s.span_id for s in spans] == ["p#s0", "p#s1", "p#s2"]
    assert [text[s.start : s.end] for s in spans] == [s.text for s in split_sentences(text)]
    assert spans[1].start == text.index("It closes")


_PIECES = [*"ab C.!?\n 😀é", "Dr. ", "e.g. ", " 3.5 ", "It "]
_TEXT = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)


@settings(max_examples=80, deadline=None)
@given(text=_TEXT)
def test_spans_cover_each_sentence_in_order(text: str) -> None:
    spans = sentence_spans("x", text)
    sentences = split_sentences(text)
    assert [text[s.start : s.end] for s in spans] == [s.text for s in sentences]
    for a, b in zip(spans, spans[1:], strict=False):
        assert a.end <= b.start
    for s in spans:
        assert 0 <= s.start < s.end <= len(text) and text[s.start : s.end].strip()


def test_span_and_set_score_models_validate() -> None:
    with pytest.raises(ValidationError):
        SentenceSpan(span_id="p#s0", passage_id="p", start=5, end=2)
    assert SetScore(span_ids=["p#s2", "p#s10", "a#s0"]).span_ids == ["a#s0", "p#s10", "p#s2"]
    # a score outside [0, 1] loads: a policy must see it to withhold the claim
    pair = ScoredPair(s_support=1.5, relation_source="llm", score_source="label_confidence")
    assert pair.s_support == 1.5


# ---- the overlap verifier ----------------------------------------------------------------


def _verify(verifier: OverlapVerifier, item: ClaimToVerify) -> Any:
    return asyncio.run(verifier.verify(item))


def test_overlap_verifier_records_a_lexical_pair_per_passage() -> None:
    claim = "Aspirin thins the blood in adults"
    passages = [
        Passage(id="a", text="Unrelated text about bananas."),
        Passage(id="b", text="Adults should avoid aspirin.", doc_id="label-7", page=3),
        Passage(id="c", text="Aspirin thins blood only if taken daily."),
    ]
    verdict = _verify(
        OverlapVerifier(threshold=0.6), ClaimToVerify(claim_id="c1", claim=claim, evidence=passages)
    )
    tokens = set(content_tokens(claim))
    expected_support = [len(tokens & set(content_tokens(p.text))) / len(tokens) for p in passages]
    assert [p.passage_id for p in verdict.pairs] == ["a", "b", "c"]
    assert [p.s_support for p in verdict.pairs] == expected_support == [0.0, 0.5, 0.75]
    assert [p.s_conflict for p in verdict.pairs] == [0.0, 0.5, 0.0]
    assert [p.s_limitation for p in verdict.pairs] == [0.0, 0.0, 0.75]
    assert (verdict.pairs[1].doc_id, verdict.pairs[1].page) == ("label-7", 3)
    for pair in verdict.pairs:
        assert (pair.relation_source, pair.score_source) == ("lexical", "label_confidence")
        assert pair.chunk_id is None and pair.retrieval_rank is None
    # label_confidence: a neutral (1 - 0); b neutral (1 - 0.5): its ov and its
    # conflict cue's score 0.5 are under the threshold 0.6; c entailment at ov 0.75
    triples = [(p.p_entail, p.p_contradict, p.p_neutral) for p in verdict.pairs]
    assert triples == [(0.0, 0.0, 1.0), (0.0, 0.0, 0.5), (0.75, 0.0, 0.0)]
    # the verdict is still the best passage's overlap
    assert verdict.score == round(max(expected_support), 6) and verdict.label.value == "supported"
    assert verdict.evidence[0].passage_id == "c"


@pytest.mark.parametrize(
    ("threshold", "expected"),
    [
        (0.5, (0.0, 0.5, 0.0)),  # ov 0.5 and "avoid": s_conflict reaches it (a tie counts)
        (0.6, (0.0, 0.0, 0.5)),  # below it: neutral with confidence 1 - ov
        (0.4, (0.0, 0.5, 0.0)),
    ],
)
def test_a_conflict_cue_with_enough_overlap_is_a_contradiction(
    threshold: float, expected: tuple[float, float, float]
) -> None:
    item = ClaimToVerify(
        claim_id="c",
        claim="Aspirin thins the blood in adults",
        evidence=[Passage(id="b", text="Adults should avoid aspirin.")],
    )
    (pair,) = _verify(OverlapVerifier(threshold=threshold), item).pairs
    assert (pair.p_entail, pair.p_contradict, pair.p_neutral) == expected
    assert (pair.s_support, pair.s_conflict) == (0.5, 0.5)  # the triple does not move


@settings(max_examples=200, deadline=None)
@given(
    ov=st.sampled_from([0.0, 0.25, 0.5, 0.7, 1.0]) | st.floats(0.0, 1.0),
    has_cue=st.booleans(),
    threshold=st.sampled_from([0.0, 0.5, 0.7, 1.0]) | st.floats(0.0, 1.0),
)
def test_lexical_label_is_the_argmax_and_carries_its_confidence(
    ov: float, has_cue: bool, threshold: float
) -> None:
    conflict = ov if has_cue else 0.0
    probs = lexical_probabilities(ov, conflict, threshold)
    nonzero = [i for i, p in enumerate(probs) if p]
    assert all(0.0 <= p <= 1.0 for p in probs) and len(nonzero) <= 1
    if has_cue and 0.0 < ov >= threshold:
        assert probs == (0.0, ov, 0.0)
    elif ov >= threshold:
        assert probs == (ov, 0.0, 0.0)
    else:
        assert probs == (0.0, 0.0, 1.0 - ov)


def test_a_claim_without_content_tokens_scores_zero_everywhere() -> None:
    item = ClaimToVerify(claim_id="c", claim="It is.", evidence=[Passage(id="p", text="Avoid.")])
    verdict = _verify(OverlapVerifier(), item)
    assert verdict.error == "no content tokens" and verdict.score == 0.0
    (pair,) = verdict.pairs
    assert (pair.s_support, pair.s_conflict, pair.s_limitation) == (0.0, 0.0, 0.0)
    nothing = _verify(OverlapVerifier(), ClaimToVerify(claim_id="c", claim="Aspirin works"))
    assert nothing.pairs == []


def _claims(run: str) -> dict[tuple[str, str, str], ClaimRecord]:
    lines = (V0_1 / run / "claims.jsonl").read_text(encoding="utf-8").splitlines()
    claims = [ClaimRecord.model_validate_json(line) for line in lines]
    return {c.key: c for c in claims}


def v0_1_inputs(run: str) -> tuple[list[dict[str, Any]], Any]:
    """The v0.1 run's verification lines and today's claim -> ClaimToVerify mapping."""
    from assay.datasets import load_answers

    lines = (V0_1 / run / "verifications.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    dataset = load_answers("builtin:factuality-demo")
    to_verify = claim_inputs([(records[0]["dataset"], a) for a in dataset.items])
    claims = _claims(run)

    def item_of(record: dict[str, Any]) -> ClaimToVerify:
        key = (record["dataset"], record["answer_id"], record["claim_id"])
        return to_verify(claims[key])

    return records, item_of


VERDICT_FIELDS = ("status", "label", "score", "evidence", "parsed", "error")


def verdict_json(verdict: Any) -> dict[str, str]:
    """The verdict's own fields as the record writes them (JSON text, byte for byte)."""
    dumped = json.loads(verdict.model_dump_json())
    return {k: json.dumps(dumped[k]) for k in VERDICT_FIELDS}


def record_json(record: dict[str, Any]) -> dict[str, str]:
    return {k: json.dumps(record[k]) for k in VERDICT_FIELDS}


@pytest.mark.parametrize("run", ["demo", "hosted"])
def test_overlap_verdicts_are_byte_for_byte_those_of_v0_1(run: str) -> None:
    records, item_of = v0_1_inputs(run)
    mine = [r for r in records if r["verifier_id"] == "baseline:overlap"]
    assert len(mine) >= 25
    verifier = OverlapVerifier(threshold=0.7)
    for record in mine:
        verdict = _verify(verifier, item_of(record))
        assert verdict_json(verdict) == record_json(record), record["claim"]
        assert len(verdict.pairs) == len(item_of(record).evidence)


@pytest.mark.parametrize("run", ["demo", "hosted"])
def test_old_verification_records_load_with_no_pairs(run: str) -> None:
    lines = (V0_1 / run / "verifications.jsonl").read_text(encoding="utf-8").splitlines()
    for line in lines:
        record = VerificationRecord.model_validate_json(line)
        assert record.pairs == [] and record.set_scores == []


def test_pairs_are_canonical_json_ready(tmp_path: Path) -> None:
    item = ClaimToVerify(
        claim_id="c",
        claim="Aspirin thins blood",
        evidence=[Passage(id="é", text="Aspirin thins blood only if needed.", page="iv")],
    )
    pairs = _verify(OverlapVerifier(), item).pairs
    path = tmp_path / "pairs.jsonl"
    write_canonical_jsonl(path, [p.model_dump() for p in pairs])
    back = [ScoredPair.model_validate_json(line) for line in path.read_text("utf-8").splitlines()]
    assert back == pairs
