"""Builders for claim-selective policy inputs and fixture S-1 (responses R1-R4 with their expected
decisions)."""

from __future__ import annotations

from typing import Any

from assay.policies.claim_selective._inputs import ClaimInput, ResponseInput

Triple = tuple[float, float, float]


def pairs(*triples: Triple, prefix: str = "p") -> list[dict[str, Any]]:
    """Scored pairs p0, p1, ... with (s_support, s_conflict, s_limitation)."""
    return [
        {
            "passage_id": f"{prefix}{i}",
            "doc_id": f"doc-{prefix}{i}",
            "page": i + 1,
            "s_support": s,
            "s_conflict": c,
            "s_limitation": lim,
            "relation_source": "nli",
        }
        for i, (s, c, lim) in enumerate(triples)
    ]


def claim(
    claim_id: str,
    *triples: Triple,
    status: str = "ok",
    gold: str | None = None,
    **fields: Any,
) -> ClaimInput:
    verification = {"verifier_id": "nli", "status": status, "pairs": pairs(*triples)}
    return ClaimInput.model_validate(
        {
            "claim_id": claim_id,
            "claim": f"claim {claim_id}",
            "gold_status": gold,
            "verification": verification,
            **fields,
        }
    )


def response(answer_id: str, claims: list[ClaimInput], **fields: Any) -> ResponseInput:
    return ResponseInput.model_validate({"answer_id": answer_id, "claims": claims, **fields})


def s1() -> list[ResponseInput]:
    """Fixture S-1 (all claims critical)."""
    return [
        response(
            "R1",
            [
                claim("c1", (0.80, 0.05, 0.10), (0.20, 0.00, 0.40), gold="certified"),
                claim("c2", (0.50, 0.10, 0.20), gold="certified"),
            ],
            gold_action="full",
        ),
        response(
            "R2",
            [
                claim("c1", (0.90, 0.00, 0.70), gold="condition_limited"),
                claim("c2", (0.10, 0.00, 0.00), gold="omitted"),
            ],
            gold_action="partial",
        ),
        response(
            "R3",
            [
                claim("c1", (0.60, 0.55, 0.00), gold="conflicting"),
                claim("c2", (0.40, 0.10, 0.10), gold="certified"),
            ],
            gold_action="conflict",
        ),
        response(
            "R4",
            [
                claim("c1", (0.20, 0.30, 0.00), gold="omitted"),
                claim("c2", (0.99, 0.00, 0.00), status="parse_error", gold="certified"),
            ],
            gold_action="abstain",
        ),
        response(
            "R5", [claim("c1", (0.34, 0.00, 0.00), gold="conflicting")], gold_action="conflict"
        ),
        response("R6", [], gold_action="abstain"),
        response(
            "R7",
            [claim("c1", (0.90, 0.00, 0.00), status="api_error", gold="omitted")],
            gold_action="abstain",
        ),
    ]
