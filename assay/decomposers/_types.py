"""The decomposer contract: an answer in, a list of located claims out."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from assay.outcomes import Status


class Claim(BaseModel):
    id: str
    text: str
    sentence_id: int = Field(ge=0)
    span: tuple[int, int] | None = Field(default=None, description="Char span in the answer.")


class Decomposition(BaseModel):
    """Zero claims is a valid outcome (a sentence with nothing verifiable)."""

    status: Status
    claims: list[Claim] = Field(default_factory=list)
    raw_output: str | None = None
    error: str | None = None


@runtime_checkable
class Decomposer(Protocol):
    @property
    def id(self) -> str: ...

    def describe(self) -> dict[str, Any]: ...

    async def __call__(self, answer: str, *, question: str | None = None) -> Decomposition: ...
