"""The verifier contract: one typed verdict per claim, whatever the method."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from assay.core.answers import Passage
from assay.core.outcomes import CallAccounting, Status


class VerdictLabel(StrEnum):
    SUPPORTED = "supported"
    UNSUPPORTED = "unsupported"
    CONTRADICTED = "contradicted"


class ClaimToVerify(BaseModel):
    """A claim plus everything a verifier may use: question, answer, given evidence."""

    claim_id: str
    claim: str
    question: str | None = None
    answer: str | None = None
    evidence: list[Passage] = Field(default_factory=list)


class EvidenceUse(BaseModel):
    """Which passage (and which part of it) a verdict rests on."""

    passage_id: str
    span: tuple[int, int] | None = None
    score: float | None = None


class Verdict(CallAccounting):
    """`label` is None unless `status` is ok: a failure is never read as a label."""

    status: Status
    label: VerdictLabel | None = None
    score: float | None = Field(default=None, ge=0.0, le=1.0)
    evidence: list[EvidenceUse] = Field(default_factory=list)
    raw_output: str | None = None
    parsed: dict[str, Any] | None = None
    error: str | None = None


@runtime_checkable
class Verifier(Protocol):
    @property
    def id(self) -> str: ...

    def describe(self) -> dict[str, Any]: ...

    async def verify(self, item: ClaimToVerify) -> Verdict: ...
