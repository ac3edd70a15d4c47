"""Run records -> `claim_selective` inputs (docs/reference/policies/integration.md): one
`ResponseInput` per answer, each claim carrying the chosen verifier's record (status, scored pairs,
and how many pairs a cost cap dropped) or None when it has none. The dataset fields
(docs/reference/policies/integration.md#dataset-fields) come from the run's records (answers.jsonl,
claims.jsonl), falling back to the answers dataset row for runs recorded before the records carried
them; passages (ids, `evidence_level`, the dosage cue) come from that row. A bad value names file,
line and field."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.core.answer_fields import RESPONSE_FIELDS, claim_fields_of, response_fields_of
from assay.core.records import ClaimRecord
from assay.policies.claim_selective._cues import passage_info
from assay.policies.claim_selective._inputs import ResponseInput, response_from_row
from assay.policies.engine._run_inputs import RunAnswer, RunInputs

ROW_FIELDS = (*RESPONSE_FIELDS, "source")


def _claim(run: RunInputs, verifier: str, claim: ClaimRecord) -> dict[str, Any]:
    record = run.verification(verifier, claim)
    verification = (
        None
        if record is None
        else {
            "verifier_id": record.verifier_id,
            "status": record.status.value,
            "pairs": [p.model_dump(mode="python") for p in record.pairs],
            "pairs_dropped_by_cap": record.pairs_dropped_by_cap,
        }
    )
    fields = claim_fields_of(claim)  # critical, required, gold_status... as recorded
    return {
        **fields,
        "claim_id": claim.claim_id,
        "claim": claim.claim,
        "verification": verification,
    }


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
    if answer.record is not None:  # the run's record wins over the dataset file
        row.update(response_fields_of(answer.record))
        if answer.record.source is not None:
            row["source"] = answer.record.source
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


def cs_inputs(
    run: RunInputs, verifier: str, links: Mapping[tuple[str, str], dict[str, Any]] | None = None
) -> list[ResponseInput]:
    """Every answer of the run as a claim-selective input, in (dataset, answer_id) order;
    `links` (chained behind a gate) gives each answer its gate decision."""
    out: list[ResponseInput] = []
    for answer in run.answers:
        row = _response_row(run, verifier, answer)
        if links is not None:
            row["gate"] = links.get((answer.dataset, answer.answer_id))
        file, line = (answer.row.file, answer.row.line) if answer.row else (None, None)
        out.append(response_from_row(row, file=file, line=line))
    return out


__all__ = ["ROW_FIELDS", "cs_inputs"]
