"""The verifier contract: one typed verdict per claim, whatever the method."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from assay.outcomes import Status


class VerdictLabel(StrEnum):
    SUPPORTED = "supported"
    UNSUPPORTED = "unsupported"
    CONTRADICTED = "contradicted"


class Verdict(BaseModel):
    """`label` is None unless `status` is ok: a failure is never read as a label."""

    status: Status
    label: VerdictLabel | None = None
    score: float | None = Field(default=None, ge=0.0, le=1.0)
    evidence_ids: list[str] = Field(default_factory=list)
    raw_output: str | None = None
    error: str | None = None


@runtime_checkable
class Verifier(Protocol):
    @property
    def id(self) -> str: ...

    def describe(self) -> dict[str, Any]: ...

    async def __call__(self, claim: str, *, evidence: str | None = None) -> Verdict: ...
