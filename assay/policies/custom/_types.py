"""What a user claim-level policy reads and returns: its config's common keys,
the frozen inputs, a verdict per claim and the decisions object, and the two helpers
most policies need. Alone here so the framework's apply (`_apply`) and guard read them
without importing the `ClaimPolicy` class that hands user policies to them."""

from __future__ import annotations

from collections.abc import Iterator

from pydantic import BaseModel, ConfigDict, Field

from assay.core.decisions import ClaimDecision, ResponseOutcome
from assay.core.outcomes import Status
from assay.policies.claim_selective._inputs import ClaimInput, ResponseInput


class PolicyConfig(BaseModel):
    """The keys every user policy block has; a policy's `Config` adds its own. Unknown
    keys are errors (a typo must not silently keep a default)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    verifier: str | None = Field(default=None, description="None: the run's only verifier.")
    after: str | None = Field(default=None, description="An evidence_gate policy.")


class ClaimPolicyInputs(BaseModel):
    """What a claim-level policy reads: every response of the run (or split) with its
    claims, each claim's verification (status, scored pairs) and gold fields, and the
    gate's decision when chained. Frozen: a policy cannot change what it reads."""

    model_config = ConfigDict(frozen=True)

    run_id: str | None = None
    verifier_id: str
    responses: tuple[ResponseInput, ...]

    def __iter__(self) -> Iterator[ResponseInput]:  # type: ignore[override]
        return iter(self.responses)


class ClaimVerdict(BaseModel):
    """A policy's decision on one claim, with the reason it gives."""

    model_config = ConfigDict(frozen=True)

    decision: ClaimDecision
    reason: str = Field(min_length=1)


class ClaimPolicyDecisions(BaseModel):
    """`claims[(dataset, answer_id, claim_id)]`; `outcomes[(dataset, answer_id)]` is
    optional per response (absent: the default rule of `default_outcome`)."""

    model_config = ConfigDict(frozen=True)

    claims: dict[tuple[str, str, str], ClaimVerdict]
    outcomes: dict[tuple[str, str], ResponseOutcome] = Field(default_factory=dict)


def verification_ok(claim: ClaimInput) -> bool:
    """A claim may be expressed only on a verification that ended ok (fail closed)."""
    return claim.verification is not None and claim.verification.status == Status.OK


def best_support(claim: ClaimInput) -> float | None:
    """The highest valid support score of the claim's scored pairs (None: none)."""
    pairs = claim.verification.pairs if claim.verification is not None else []
    found = [p.s_support for p in pairs if p.s_support is not None and 0 <= p.s_support <= 1]
    return max(found, default=None)


__all__ = [
    "ClaimPolicyDecisions",
    "ClaimPolicyInputs",
    "ClaimVerdict",
    "PolicyConfig",
    "best_support",
    "verification_ok",
]
