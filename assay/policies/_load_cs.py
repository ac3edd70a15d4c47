"""Run records -> `claim_selective` inputs (docs/policies-integration.md): one
`ResponseInput` per answer, each claim carrying the chosen verifier's record (status and
scored pairs) or None when it has none; dataset fields of §5.2.5 copied from the
answers dataset row, validated there (a bad value names file, line and field)."""

from __future__ import annotations

from typing import Any

from assay.core.records import ClaimRecord
from assay.policies._cs_cues import passage_info
from assay.policies._cs_inputs import ResponseInput, response_from_row
from assay.policies._load_run import RunAnswer, RunInputs

ROW_FIELDS = (
    "intent",
    "source",
    "source_url",
    "evidence_text",
    "claim_type",
    "split",
    "gold_action",
)


def _claim(run: RunInputs, verifier: str, claim: ClaimRecord) -> dict[str, Any]:
    record = run.verification(verifier, claim)
    verification = (
        None
        if record is None
        else {
            "verifier_id": record.verifier_id,
            "status": record.status.value,
            "pairs": [p.model_dump(mode="python") for p in record.pairs],
        }
    )
    return {"claim_id": claim.claim_id, "claim": claim.claim, "verification": verification}


def _evidence_level(fields: dict[str, Any], passage_id: str) -> str | None:
    """A passage's `evidence_level` as the dataset row gives it (None when absent)."""
    for item in fields.get("evidence") or []:
        if isinstance(item, dict) and str(item.get("id")) == passage_id:
            level = item.get("evidence_level")
            return str(level) if level is not None else None
    return None


def _response_row(run: RunInputs, verifier: str, answer: RunAnswer) -> dict[str, Any]:
    fields = answer.row.fields if answer.row else {}
    passages = answer.row.passages() if answer.row else []
    row: dict[str, Any] = {k: fields[k] for k in ROW_FIELDS if k in fields}
    levels = {p.id: _evidence_level(fields, p.id) for p in passages}
    row.update(
        dataset=answer.dataset,
        answer_id=answer.answer_id,
        question=answer.question if answer.question is not None else fields.get("question"),
        claims=[_claim(run, verifier, c) for c in answer.claims],
        evidence_pool=[p.id for p in passages] if answer.row else None,
        passages=passage_info({p.id: p.text for p in passages}, levels),
    )
    return row


def cs_inputs(run: RunInputs, verifier: str) -> list[ResponseInput]:
    """Every answer of the run as a claim-selective input, in (dataset, answer_id) order."""
    out: list[ResponseInput] = []
    for answer in run.answers:
        row = _response_row(run, verifier, answer)
        file, line = (answer.row.file, answer.row.line) if answer.row else (None, None)
        out.append(response_from_row(row, file=file, line=line))
    return out


__all__ = ["ROW_FIELDS", "cs_inputs"]
