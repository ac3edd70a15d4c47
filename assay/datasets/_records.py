"""Released verdicts as core verification records: the fields that say whose verdict."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from assay.core.records import VerificationRecord


@dataclass(frozen=True)
class VerdictFields:
    """Which claim of which answer a released verdict is on, and which verifier gave it.

    The names are `VerificationRecord`'s; `verification_record` adds the outcome.
    """

    dataset: str
    answer_id: str
    claim_id: str
    claim: str
    verifier_id: str
    model: str | None
    sentence_id: int | None = None
    gold_label: str | None = None


def verification_record(fields: VerdictFields, **outcome: Any) -> VerificationRecord:
    """The record of one verdict: `fields` plus status, label, score, evidence, parsed..."""
    return VerificationRecord(**asdict(fields), **outcome)
