"""Long-form answers to check claim by claim (the factuality pipeline's input)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from assay.core.ids import ItemId


class Passage(BaseModel):
    """A piece of evidence: a provided document, a retrieved passage, a doctor's answer."""

    model_config = ConfigDict(extra="ignore")

    id: ItemId
    text: str
    title: str | None = None
    source: str | None = None


class GoldClaim(BaseModel):
    """A claim with a human label, when a dataset ships its own decomposition."""

    id: ItemId
    text: str
    label: str | None = Field(default=None, description="supported | unsupported | ...")
    evidence: list[Passage] = Field(default_factory=list)


class AnswerItem(BaseModel):
    """One response to score: question, answer, optional evidence and gold annotations."""

    model_config = ConfigDict(extra="ignore")

    id: ItemId = Field(min_length=1)
    question: str | None = None
    answer: str
    evidence: list[Passage] = Field(
        default_factory=list, description="Provided context for provided-context verifiers."
    )
    gold_claims: list[GoldClaim] | None = Field(
        default=None, description="A given decomposition (skips the decompose stage)."
    )
    gold_factuality: float | None = Field(default=None, ge=0.0, le=1.0)
    source: str | None = None
