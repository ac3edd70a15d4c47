"""What the claim-selective policy reads: responses with their dataset
metadata, their claim skeletons, and each claim's verification as per-passage relation
triples (s_support, s_conflict, s_limitation).

Only ids, flags and numbers are read; the texts (question, claim, evidence) are carried
for the output records and never looked at. Scores are kept as given, NaN or out of
range included: an invalid score is itself a decision input (`invalid_score`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from assay.core.answer_fields import USABLE_GOLD, GoldAction, GoldStatus, Split, normalise_intent
from assay.core.decisions import GateOutcome
from assay.core.outcomes import Status
from assay.core.verification import RelationSource
from assay.errors import DatasetError, first_problem


class RelationPair(BaseModel):
    """One scored (claim, passage) pair (a `ScoredPair` dump validates into it).

    `passage_id` is None for a premise of several passages read together (`context`
    lists their ids). A score that is None, NaN, infinite or outside [0, 1] is invalid.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    passage_id: str | None = None
    doc_id: str | None = None
    page: int | str | None = None
    span_id: str | None = None
    context: list[str] | None = Field(default=None, description="Ids of a multi-passage premise.")
    s_support: float | None = None
    s_conflict: float | None = None
    s_limitation: float | None = None
    relation_source: RelationSource

    @field_validator("context", mode="before")
    @classmethod
    def _context_ids(cls, value: object) -> object:
        """A `ScoredPair.context` (objects with `passage_id`) becomes its ids."""
        if isinstance(value, list):
            return [v.get("passage_id") if isinstance(v, Mapping) else v for v in value]
        return value

    def passage_ids(self) -> tuple[str, ...]:
        """Every passage the premise is made of."""
        if self.passage_id is not None:
            return (self.passage_id,)
        return tuple(self.context or ())


class ClaimVerification(BaseModel):
    """One verifier's record for one claim; `pairs_dropped_by_cap` counts pairs a cost cap
    left unscored (treated as never scored)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    verifier_id: str | None = None
    status: Status = Status.OK
    pairs: list[RelationPair] = Field(default_factory=list)
    pairs_dropped_by_cap: int = Field(default=0, ge=0)


class PassageInfo(BaseModel):
    """Dataset fields of one evidence passage the priors read.

    `dosage_instruction` is the passage's `dosage_instruction` cue flag, computed where the
    text is read; the policy reads the flag only."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    evidence_level: str | None = None
    dosage_instruction: bool = False


class GateLink(BaseModel):
    """A preceding evidence gate's decision for the question; `evidence` is E(q)
    (None: the gate names no passage, so none is filtered)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    outcome: GateOutcome = Field(description="pass, abstain or refuse.")
    gate_id: str | None = Field(default=None, description="The gate whose scores it read.")
    rule: str | None = Field(default=None, description="The branch of its rule that decided.")
    s_final: float | None = Field(default=None, description="The score its decision used.")
    evidence: list[str] | None = Field(
        default=None, description="E(q): the passage ids generation may use."
    )


class ClaimInput(BaseModel):
    """A claim skeleton with its gold fields and verification (None: no record)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    claim_id: str
    claim: str | None = Field(default=None, description="Carried, never read.")
    critical: bool = True
    required: bool | None = Field(default=None, description="None: same as `critical`.")
    claim_type: str | None = None
    gold_status: GoldStatus | None = None
    gold_usable: bool | None = None
    verification: ClaimVerification | None = None
    cited_passages: list[str] = Field(
        default_factory=list, description="Passage ids the model named (never evidence)."
    )

    @model_validator(mode="after")
    def _usable_agrees_with_status(self) -> ClaimInput:
        if self.gold_status is None:
            return self
        derived = self.gold_status in USABLE_GOLD
        if self.gold_usable is None:
            object.__setattr__(self, "gold_usable", derived)
        elif self.gold_usable != derived:
            raise ValueError(
                f"gold_usable = {str(self.gold_usable).lower()} disagrees with "
                f"gold_status = {self.gold_status!r}"
            )
        return self

    @property
    def is_required(self) -> bool:
        return self.critical if self.required is None else self.required


class ResponseInput(BaseModel):
    """One response (question item) with its dataset fields and claims in record order.

    `evidence_pool` lists the passage ids retrieved for it (None: unknown, so no pair is
    checked against it); `passages` holds passage-level dataset fields by id."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    dataset: str = "default"
    answer_id: str
    question: str | None = Field(default=None, description="Carried, never read.")
    intent: str | None = None
    source: str | None = None
    source_url: str | None = None
    evidence_text: str | None = None
    claim_type: str | None = None
    split: Split | None = None
    gold_action: GoldAction | None = None
    claims: list[ClaimInput] = Field(default_factory=list)
    evidence_pool: list[str] | None = None
    passages: dict[str, PassageInfo] = Field(default_factory=dict)
    gate: GateLink | None = None

    @field_validator("intent", mode="before")
    @classmethod
    def _snake_intent(cls, value: object) -> object:
        return normalise_intent(value) if isinstance(value, str) else value

    @field_validator("claims")
    @classmethod
    def _unique_claim_ids(cls, claims: list[ClaimInput]) -> list[ClaimInput]:
        seen: set[str] = set()
        for claim in claims:
            if claim.claim_id in seen:
                raise ValueError(f"claim id {claim.claim_id!r} appears twice")
            seen.add(claim.claim_id)
        return claims

    @property
    def key(self) -> tuple[str, str]:
        return (self.dataset, self.answer_id)


def response_from_row(
    row: Mapping[str, Any], *, file: str | Path | None = None, line: int | None = None
) -> ResponseInput:
    """`row` as a `ResponseInput`, or a one-line `DatasetError` naming file, line and the
    first bad field (an unknown `gold_action` such as "maybe", a disagreeing `gold_usable`)."""
    try:
        return ResponseInput.model_validate(dict(row))
    except ValidationError as exc:
        problem = first_problem(exc, typo_first=False)
        raise DatasetError(problem.message, file=file, line=line, field=problem.field) from None


__all__ = [
    "USABLE_GOLD",
    "ClaimInput",
    "ClaimVerification",
    "GateLink",
    "GoldStatus",
    "PassageInfo",
    "RelationPair",
    "ResponseInput",
    "Split",
    "normalise_intent",
    "response_from_row",
]
