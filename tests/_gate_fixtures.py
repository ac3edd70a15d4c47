"""Gate records and questions for the evidence-gate tests, built from the fixture tables
G-1 to G-3: each question's scores become real `gates.jsonl` records whose candidates have the
stated maxima over retrieval ranks <= 50 (s_init) and <= 100 (s_exp)."""

from __future__ import annotations

from typing import Any

from scipy.special import logit

from assay.core.outcomes import Status
from assay.core.records import GateCandidate, GateRecord, GateReranker, GateRetriever
from assay.policies.evidence_gate._config import GateQuestion

DATASET = "g2"


def candidate(
    passage_id: str, rank: int, score: float, doc: str | None = "d1", page: int | None = 1
) -> GateCandidate:
    """A scored candidate; the logit is informational (the policy reads rerank_score)."""
    return GateCandidate(
        passage_id=passage_id,
        doc_id=doc,
        page=page,
        retrieval_rank=rank,
        retrieval_score=0.5,
        rerank_logit=float(logit(score)) if 0 < score < 1 else None,
        rerank_score=score,
    )


def gate_record(
    question_id: str,
    candidates: list[GateCandidate],
    *,
    status: Status = Status.OK,
    dataset: str = DATASET,
    **overrides: Any,
) -> GateRecord:
    """A gate record with the recorded maxima the gate stage would write."""
    initial = [c.rerank_score for c in candidates if c.retrieval_rank <= 50]
    expanded = [c.rerank_score for c in candidates if c.retrieval_rank <= 100]
    fields: dict[str, Any] = {
        "dataset": dataset,
        "question_id": question_id,
        "gate_id": "ce-tiny",
        "status": status,
        "reranker": GateReranker(model="hf-ce/tiny", model_sha256="ab" * 32),
        "retriever": GateRetriever(kind="bm25", config_sha256="cd" * 32),
        "k1_initial": 50,
        "k1_expanded": 100,
        "top_k": 12,
        "candidates": candidates,
        "s_initial": max((s for s in initial if s is not None), default=None),
        "s_expanded": max((s for s in expanded if s is not None), default=None),
        "latency_s": 0.25,
    }
    fields.update(overrides)
    return GateRecord(**fields)


def scored_record(question_id: str, s_init: float | None, s_exp: float | None) -> GateRecord:
    """Candidates realising the maxima: the best initial passage (rank 1), a weaker one on
    the same page (rank 2), one on another document (rank 3), and when s_exp > s_init the
    expanded pool's best at rank 70."""
    if s_init is None:
        return gate_record(question_id, [])
    candidates = [
        candidate(f"{question_id}-p1", 1, s_init, "d1", 1),
        candidate(f"{question_id}-p2", 2, s_init / 2, "d1", 1),
        candidate(f"{question_id}-p3", 3, s_init / 4, "d2", 4),
    ]
    if s_exp is not None and s_exp > s_init:
        candidates.append(candidate(f"{question_id}-p70", 70, s_exp, "d3", 2))
    return gate_record(question_id, candidates)


# fixture G-2: q, s_init, s_exp, label, expected outcome, rule, support (passed only)
G2 = [
    ("q01", 0.92, 0.92, "has_evidence", "pass", "4a_sufficient", "1"),
    ("q02", None, None, "no_evidence", "abstain", "1_no_candidates", None),
    ("q03", 0.08, 0.09, "no_evidence", "abstain", "2_below_min", None),
    ("q04", 0.25, 0.45, "has_evidence", "pass", "4b_sufficient_after_reassess", "1"),
    ("q05", 0.22, 0.22, "no_evidence", "abstain", "3_insufficient_after_reassess", None),
    ("q06", 0.30, 0.30, "has_evidence", "pass", "4a_sufficient", "0.5"),
    ("q07", 0.10, 0.10, "has_evidence", "abstain", "3_insufficient_after_reassess", None),
    ("q08", 0.55, 0.60, "no_evidence", "pass", "4a_sufficient", "0"),
    ("q09", 0.18, 0.35, "has_evidence", "pass", "4b_sufficient_after_reassess", "1"),
    ("q10", 0.12, 0.31, "no_evidence", "pass", "4b_sufficient_after_reassess", "0"),
]


def g2_questions() -> list[GateQuestion]:
    return [
        GateQuestion(
            dataset=DATASET,
            question_id=q,
            record=scored_record(q, s_init, s_exp),
            label=label,
            support=support,
        )
        for q, s_init, s_exp, label, _, _, support in G2
    ]
