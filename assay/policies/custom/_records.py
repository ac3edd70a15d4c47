"""The records a user policy kind writes (`claims.jsonl`, `responses.jsonl`).

The framework writes them, not the user's code, so they hold the decision-record
contract of `assay.core.decisions` and the guard's own fields only. Keys, values and
key order are those the user-kind path has always written; the policy kind is written
under the key `kind`.
"""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from assay.core.answer_fields import GoldAction, GoldStatus, Split
from assay.core.decisions import (
    ClaimDecision,
    ClaimDecisionRecord,
    ResponseDecisionRecord,
    ResponseOutcome,
)
from assay.core.outcomes import Status
from assay.policies.custom._guard import GuardedClaim, GuardedResponse
from assay.policies.engine._apply_common import CLAIMS, RESPONSES


class CustomClaimRecord(BaseModel):
    """One line of a user kind's `claims.jsonl`; `overridden` is what the policy said
    when the guard withheld the claim instead."""

    model_config = ConfigDict(frozen=True)

    policy_id: str = Field(description="The policy's name.")
    policy_kind: str = Field(serialization_alias="kind", description="The policy's kind.")
    policy_version: int = Field(description="The kind's version.")
    policy_sha256: str = Field(description="Hash of the policy's resolved configuration.")
    dataset: str = Field(description="The dataset's name.")
    answer_id: str = Field(description="The answer's id.")
    claim_id: str = Field(description="The claim's id.")
    decision: ClaimDecision = Field(description="What is done with the claim.")
    reason: str = Field(description="Why, as the policy or the guard said.")
    overridden: ClaimDecision | None = Field(
        description="The policy's decision when the guard withheld the claim instead."
    )
    verification_status: Status | None = Field(
        description="How the claim's verification ended (null: none)."
    )
    critical: bool = Field(description="Whether the claim is critical.")
    gold_status: GoldStatus | None = Field(description="Gold: the claim's status.")


class CustomResponseRecord(BaseModel):
    """One line of a user kind's `responses.jsonl`."""

    model_config = ConfigDict(frozen=True)

    policy_id: str = Field(description="The policy's name.")
    policy_kind: str = Field(serialization_alias="kind", description="The policy's kind.")
    policy_version: int = Field(description="The kind's version.")
    policy_sha256: str = Field(description="Hash of the policy's resolved configuration.")
    dataset: str = Field(description="The dataset's name.")
    answer_id: str = Field(description="The answer's id.")
    outcome: ResponseOutcome = Field(description="What is done with the response.")
    reason: str = Field(description="Why, as the policy or the guard said.")
    gold_action: GoldAction | None = Field(
        description="Gold: what should be done with the response."
    )
    split: Split | None = Field(description="The tuning split of the response.")
    n_claims: int = Field(description="Claims of the response.")


CONTRACT: tuple[type[ClaimDecisionRecord], type[ResponseDecisionRecord]] = (
    CustomClaimRecord,
    CustomResponseRecord,
)
"""A user kind's claim and response records, as the core contract they follow (mypy checks)."""


class Stamping(Protocol):
    """What a record is stamped with: a user policy's name, kind, version and config hash
    (a `ClaimPolicy`; named by its shape so this module need not import the class)."""

    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def version(self) -> int: ...
    @property
    def sha256(self) -> str: ...


def _stamp(policy: Stamping) -> dict[str, Any]:
    return {
        "policy_id": policy.name,
        "policy_kind": policy.kind,
        "policy_version": policy.version,
        "policy_sha256": policy.sha256,
    }


def _claim(stamp: dict[str, Any], g: GuardedResponse, c: GuardedClaim) -> CustomClaimRecord:
    v = c.claim.verification
    return CustomClaimRecord(
        **stamp,
        dataset=g.response.dataset,
        answer_id=g.response.answer_id,
        claim_id=c.claim.claim_id,
        decision=c.decision,
        reason=c.reason,
        overridden=c.overridden,
        verification_status=v.status if v is not None else None,
        critical=c.claim.critical,
        gold_status=c.claim.gold_status,
    )


def _response(stamp: dict[str, Any], g: GuardedResponse) -> CustomResponseRecord:
    r = g.response
    return CustomResponseRecord(
        **stamp,
        dataset=r.dataset,
        answer_id=r.answer_id,
        outcome=g.outcome,
        reason=g.reason,
        gold_action=r.gold_action,
        split=r.split,
        n_claims=len(g.claims),
    )


def records(policy: Stamping, guarded: list[GuardedResponse]) -> dict[str, list[dict[str, Any]]]:
    """claims.jsonl and responses.jsonl rows, in (dataset, answer_id, claim) order."""
    stamp = _stamp(policy)
    claims = [_claim(stamp, g, c) for g in guarded for c in g.claims]
    responses = [_response(stamp, g) for g in guarded]
    return {
        CLAIMS: [c.model_dump(mode="json", by_alias=True) for c in claims],
        RESPONSES: [r.model_dump(mode="json", by_alias=True) for r in responses],
    }


__all__ = ["CONTRACT", "CustomClaimRecord", "CustomResponseRecord", "Stamping", "records"]
