"""Long-form answers to check claim by claim (the factuality pipeline's input)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from assay.core.answer_fields import (
    CLAIM_FIELDS,
    RESPONSE_FIELDS,
    ClaimFields,
    GoldClaimLabel,
    ResponseFields,
    _choice,
    _snake,
    omit_absent,
)
from assay.core.ids import ItemId

# `defer_build=True`: a model's validator is built when first used, not on import, so a
# command that never uses these models (a ForceBench run uses none of factuality's, items'
# or the gate's) does not pay for building them (~30 ms of start-up over core's models).


class Passage(BaseModel):
    """A piece of evidence: a provided document, a retrieved passage, a doctor's answer."""

    model_config = ConfigDict(defer_build=True, extra="ignore")

    id: ItemId
    text: str
    title: str | None = None
    source: str | None = None
    doc_id: str | None = Field(
        default=None, description="The document it comes from (passages may share one)."
    )
    page: int | str | None = Field(default=None, description="Its page in that document.")
    evidence_level: Annotated[str | None, BeforeValidator(_snake)] = Field(
        default=None, description='Kind of evidence, e.g. "review" (a policy prior reads it).'
    )

    @model_serializer(mode="wrap")
    def _omit_absent_provenance(self, handler: SerializerFunctionWrapHandler) -> Any:
        """No `doc_id`/`page`/`evidence_level` keys when unknown: passages dump (and hash)
        as before."""
        return omit_absent(handler(self), ("doc_id", "page", "evidence_level"))


class GoldClaim(ClaimFields):
    """A claim with a human label, when a dataset ships its own decomposition."""

    model_config = ConfigDict(defer_build=True)

    id: ItemId
    text: str
    label: Annotated[str | None, _choice(GoldClaimLabel)] = Field(
        default=None, description="supported | not_supported | unsupported | ..."
    )
    evidence: list[Passage] = Field(default_factory=list)

    @model_serializer(mode="wrap")
    def _omit_absent_fields(self, handler: SerializerFunctionWrapHandler) -> Any:
        """Claims without the policy fields dump as before they existed."""
        return omit_absent(handler(self), CLAIM_FIELDS)


class AnswerItem(ResponseFields):
    """One response to score: question, answer, optional evidence and gold annotations."""

    model_config = ConfigDict(defer_build=True, extra="ignore")

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

    @model_serializer(mode="wrap")
    def _omit_absent_fields(self, handler: SerializerFunctionWrapHandler) -> Any:
        """Items without the policy fields dump as before they existed."""
        return omit_absent(handler(self), RESPONSE_FIELDS)
