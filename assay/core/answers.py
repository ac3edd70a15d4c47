"""Long-form answers to check claim by claim (the factuality pipeline's input)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Passage(BaseModel):
    """A piece of evidence: a provided document, a retrieved passage, a doctor's answer."""

    model_config = ConfigDict(extra="ignore")

    id: str
    text: str
    title: str | None = None
    source: str | None = None

    @field_validator("id", mode="before")
    @classmethod
    def _id_to_str(cls, v: object) -> object:
        return str(v) if isinstance(v, int) else v


class GoldClaim(BaseModel):
    """A claim with a human label, when a dataset ships its own decomposition."""

    id: str
    text: str
    label: str | None = Field(default=None, description="supported | unsupported | ...")
    evidence: list[Passage] = Field(default_factory=list)


class AnswerItem(BaseModel):
    """One response to score: question, answer, optional evidence and gold annotations."""

    model_config = ConfigDict(extra="ignore")

    id: str = Field(min_length=1)
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

    @field_validator("id", mode="before")
    @classmethod
    def _id_to_str(cls, v: object) -> object:
        return str(v) if isinstance(v, int) else v
