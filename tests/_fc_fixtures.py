"""Builders for the fail-closed policy tests: chunks with exact span offsets, pairs from
(span, p_entail, p_contradict) as the tables write them, and fixture C-1."""

from __future__ import annotations

from typing import Any

from assay.policies.fail_closed import FCResponse

# fixture C-1: claim -> (verification status, pairs, set scores, gold)
C1: dict[
    str, tuple[str, list[tuple[str, float, float]], list[tuple[tuple[str, ...], float]], str]
] = {
    "c1": ("ok", [("s1", 0.91, 0.02), ("s2", 0.40, 0.10)], [], "supported"),
    "c2": ("ok", [("s3", 0.86, 0.04), ("s4", 0.05, 0.80)], [], "contradicted"),
    "c3": ("ok", [("s5", 0.85, 0.05)], [], "unsupported"),
    "c4": ("ok", [("s6", 0.90, 0.00), ("s7", 0.20, 0.70)], [], "supported"),
    "c5": ("ok", [("s8", 0.60, 0.10), ("s9", 0.55, 0.05)], [(("s8", "s9"), 0.88)], "supported"),
    "c6": ("ok", [], [], "unsupported"),
    "c7": ("parse_error", [("s10", 0.99, 0.00)], [], "supported"),
    "c8": ("ok", [("s11", 0.70, 0.10)], [], "supported"),
}
# the retrieval set of C-1: four chunks (rank 1..4), sentences s1..s11
C1_CHUNKS = {
    "k1": ["s1", "s2", "s3"],
    "k2": ["s4", "s5", "s6"],
    "k3": ["s7", "s8", "s9"],
    "k4": ["s10", "s11"],
}


def chunk(
    chunk_id: str,
    sentences: list[tuple[str, str]],
    *,
    rank: int,
    doc_id: str | None = None,
    page: int | None = None,
) -> dict[str, Any]:
    """A chunk whose text is its sentences joined by one space, spans at exact offsets."""
    text, spans = "", []
    for span_id, sentence in sentences:
        if text:
            text += " "
        spans.append(
            {
                "span_id": span_id,
                "start": len(text),
                "end": len(text) + len(sentence),
                "text": sentence,
            }
        )
        text += sentence
    return {
        "chunk_id": chunk_id,
        "doc_id": doc_id or f"doc-{chunk_id}",
        "page": page,
        "text": text,
        "retrieval_rank": rank,
        "retrieval_score_raw": 10.0 - rank,
        "retrieval_score": round(1 / (1 + rank), 4),
        "spans": spans,
    }


def pair(
    span_id: str, p_entail: float | None, p_contradict: float | None, **extra: Any
) -> dict[str, Any]:
    """A pair as the fixture tables write it: p_neutral = 1 - both."""
    neutral = None if p_entail is None or p_contradict is None else 1 - p_entail - p_contradict
    return {
        "span_id": span_id,
        "p_entail": p_entail,
        "p_contradict": p_contradict,
        "p_neutral": neutral,
        **extra,
    }


def set_score(
    span_ids: tuple[str, ...], p_entail: float, p_contradict: float = 0.02
) -> dict[str, Any]:
    return {
        "span_ids": list(span_ids),
        "p_entail": p_entail,
        "p_contradict": p_contradict,
        "p_neutral": 1 - p_entail - p_contradict,
    }


def c1_claims() -> list[dict[str, Any]]:
    return [
        {
            "claim_id": claim_id,
            "text": f"Claim {claim_id}.",
            "verification_status": status,
            "pairs": [pair(*p) for p in pairs],
            "set_scores": [set_score(ids, e) for ids, e in sets],
            "gold": gold,
        }
        for claim_id, (status, pairs, sets, gold) in C1.items()
    ]


def c1_chunks() -> list[dict[str, Any]]:
    return [
        chunk(chunk_id, [(s, f"Sentence {s} of the evidence.") for s in spans], rank=rank)
        for rank, (chunk_id, spans) in enumerate(C1_CHUNKS.items(), start=1)
    ]


def c1_response(**changes: Any) -> FCResponse:
    data = {
        "dataset": "c1",
        "answer_id": "a1",
        "question_id": "q1",
        "question": "What does the evidence say?",
        "claims": c1_claims(),
        "chunks": c1_chunks(),
        **changes,
    }
    return FCResponse.model_validate(data)


def response(claims: list[dict[str, Any]], **fields: Any) -> FCResponse:
    """An answer with the given claims and no recorded retrieval set."""
    data = {"dataset": "t", "answer_id": "a", "question_id": "q", "claims": claims, **fields}
    return FCResponse.model_validate(data)


def claim(claim_id: str, pairs: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    return {"claim_id": claim_id, "verification_status": "ok", "pairs": pairs, **fields}
