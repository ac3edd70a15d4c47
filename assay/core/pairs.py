"""ForceBench pairs: a passage, a claim it warrants, and a single force increase of it."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from assay.core.ids import ItemId


class Axis(StrEnum):
    RELATION = "relation"
    MODALITY = "modality"
    SCOPE = "scope"
    TEMPORAL = "temporal"
    NUMERIC = "numeric"


class Member(StrEnum):
    """Which claim of a pair a judgment is about."""

    CALIBRATED = "calibrated"
    RAISED = "raised"


class ForcePair(BaseModel):
    """One ForceBench pair. `raised_claim` overstates what `evidence` warrants on `axis`."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    id: ItemId = Field(min_length=1)
    question: str | None = None
    evidence: str = Field(min_length=1, description="The cited passage.")
    evidence_span: str | None = None
    calibrated_claim: str = Field(min_length=1)
    raised_claim: str = Field(min_length=1)
    axis: Axis
    severity: int | None = Field(default=None, ge=1, le=3)
    repair: str | None = None
    source: str | None = None
    domain: str | None = None

    def claim(self, member: Member) -> str:
        return self.calibrated_claim if member is Member.CALIBRATED else self.raised_claim
