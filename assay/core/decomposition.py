"""The decomposer contract: an answer in, a list of located claims out."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from assay.core.outcomes import CallAccounting, Status

# `defer_build=True`: a model's validator is built when first used, not on import, so a
# command that never uses these models (a ForceBench run uses none of factuality's, items'
# or the gate's) does not pay for building them (~30 ms of start-up over core's models).


class Sentence(BaseModel):
    model_config = ConfigDict(defer_build=True)
    id: int = Field(ge=0, description="Position of the sentence in the answer, from 0.")
    text: str
    span: tuple[int, int] = Field(description="Character span [start, end) in the answer.")


class Claim(BaseModel):
    model_config = ConfigDict(defer_build=True)
    id: str = Field(description="Stable within an answer: '<answer_id>:s<sentence>:c<k>'.")
    text: str = Field(description="The claim's text.")
    sentence_id: int = Field(ge=0, description="The sentence it came from.")
    span: tuple[int, int] | None = Field(
        default=None, description="Span of the source sentence in the answer."
    )


class Decomposition(CallAccounting):
    """One sentence's (or answer's) claims. Zero claims is a valid `ok` outcome."""

    model_config = ConfigDict(defer_build=True)

    status: Status
    claims: list[Claim] = Field(default_factory=list)
    raw_output: str | None = None
    error: str | None = None


@runtime_checkable
class Decomposer(Protocol):
    """Splits one sentence of an answer into claims, with the whole answer as context."""

    @property
    def id(self) -> str: ...

    def describe(self) -> dict[str, Any]: ...

    async def decompose(
        self, sentence: Sentence, *, answer: str, answer_id: str, question: str | None = None
    ) -> Decomposition: ...
