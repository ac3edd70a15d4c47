"""MedScore's per-claim verdicts as verification records, read strictly from the raw text."""

from __future__ import annotations

import math
from typing import Any

from assay.core.outcomes import Status
from assay.core.records import VerificationRecord
from assay.core.verification import VerdictLabel
from assay.datasets._records import VerdictFields, verification_record
from assay.parsing._verification import parse_true_false

MEDSCORE_PARSER_VERSION = "medscore-import/1"


def read_true_false(raw: str) -> tuple[bool | None, str]:
    """Strict reading of a True/False verifier output: (verdict, rule) or (None, why).

    The same rules as assay's own strict verifier parser (`parse_true_false`): anything
    unreadable (empty output, prose, both answers on the final line) is never coerced.
    """
    parsed = parse_true_false(raw)
    if parsed.label is None:
        return None, parsed.error or parsed.status.value
    rule = str((parsed.parsed or {}).get("rule", ""))
    return parsed.label is VerdictLabel.SUPPORTED, rule


def medscore_verdict(
    row: dict[str, Any], claim: VerdictFields, evidence: object
) -> VerificationRecord:
    """Status from the raw text (strictly read); MedScore's score is kept in `parsed`.

    - `raw` present: it decides. Empty or unreadable -> parse_error, whatever MedScore's
      score says (MedScore scores an empty output as 1.0). A readable `raw` with no
      usable MedScore score -> parse_error too (the row is incomplete).
    - `raw` absent or null: MedScore's score (0/1) decides; none -> parse_error.
    """
    raw = row.get("raw")
    verdict, problem, parsed = _read_verdict(row)
    outcome: dict[str, Any] = {"status": Status.PARSE_ERROR, "error": problem}
    if verdict is not None and problem is None:
        label, score = ("supported", 1.0) if verdict else ("unsupported", 0.0)
        outcome = {"status": Status.OK, "label": label, "score": score}
    return verification_record(
        claim,
        parser_version=MEDSCORE_PARSER_VERSION,
        evidence=_medscore_evidence(evidence, claim.answer_id),
        raw_output=raw if isinstance(raw, str) else None,
        parsed=parsed,
        **outcome,
    )


def _read_verdict(row: dict[str, Any]) -> tuple[bool | None, str | None, dict[str, Any]]:
    """(verdict, the problem that makes it unusable, what was read) for one row."""
    raw = row.get("raw")
    medscore_verdict, score_problem = _medscore_score(row)
    parsed: dict[str, Any] = {"medscore_score": row.get("score"), "score_present": "score" in row}
    if raw is None:
        parsed["rule"] = "medscore-score"
        return medscore_verdict, score_problem, parsed
    if not isinstance(raw, str):
        return None, f"raw is {type(raw).__name__}, not text", parsed
    verdict, rule = read_true_false(raw)
    if verdict is None:
        return None, rule, parsed
    parsed["rule"] = rule
    if medscore_verdict is not None:
        parsed["agrees_with_medscore"] = verdict == medscore_verdict
    return verdict, score_problem, parsed


def _medscore_score(row: dict[str, Any]) -> tuple[bool | None, str | None]:
    """MedScore's own per-claim score as a verdict, or why it is not one."""
    if "score" not in row or row["score"] is None:
        return None, "MedScore row has no score"
    value = row["score"]
    if isinstance(value, bool):
        return value, None
    if isinstance(value, int | float) and not math.isnan(value) and value in (0, 1):
        return value == 1, None
    return None, f"MedScore score {value!r} is not 0 or 1"


def _medscore_evidence(value: object, answer_id: str) -> list[dict[str, Any]]:
    if value is None:  # internal-knowledge verification
        return []
    if isinstance(value, str):  # provided evidence: the same passage id as medscore-input
        return [{"passage_id": f"{answer_id}:ctx", "text": value}]
    out: list[dict[str, Any]] = []
    if isinstance(value, list):  # MedRAG: retrieved {id, title, text, score}
        for k, entry in enumerate(value):
            if isinstance(entry, dict):
                pid = entry.get("id")
                out.append({**entry, "passage_id": str(pid) if pid is not None else f"r{k}"})
    return out
