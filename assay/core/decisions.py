"""What a policy decides and the contract of the records it writes, whatever
its kind.

The vocabulary is common to every kind: a `ClaimDecision` per claim, a
`ResponseOutcome` per response, a `GateOutcome` per question; each kind keeps its
paper's own name in a `native` field beside it.

A policy writes one claim record per claim (`claims.jsonl`) and one response record per
answer (`responses.jsonl`) under `policies/<name>/`. Each says which answer (and claim)
it is about, which policy made it, and the decision with its reason; each kind adds its
paper's own fields (`native`, thresholds, evidence) beside these.

The contract is a pair of protocols, not a base model, because pydantic dumps a base
class's fields first: each kind has written these fields at its own place in a record
since its first release (claim_selective opens with the policy stamp, fail_closed with
the answer's identity), so a shared base would reorder the keys of every record a
kind's `model_dump` shows. Each kind's record classes satisfy the protocols
structurally, under names that say whose they are (`ClaimSelectiveClaimRecord`,
`FailClosedClaimRecord`, `CustomClaimRecord`, ...), and name them in a `CONTRACT` that
mypy checks. The run's own `core.records.ClaimRecord` is an input, not a decision.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol, runtime_checkable


class ClaimDecision(StrEnum):
    """What happens to one claim."""

    ASSERT = "assert"  # certified / VERIFIED
    QUALIFY = "qualify"  # condition-limited
    DISPUTE = "dispute"  # conflicting / BLOCKED
    WITHHOLD = "withhold"  # omitted / UNVERIFIED


EXPRESSED = frozenset({ClaimDecision.ASSERT, ClaimDecision.QUALIFY})


class ResponseOutcome(StrEnum):
    """What happens to one response (or question)."""

    ANSWER_FULL = "answer_full"
    ANSWER_PARTIAL = "answer_partial"
    CONFLICT = "conflict"
    ABSTAIN = "abstain"
    REFUSE = "refuse"  # inputs failed: never matches a gold label


class GateOutcome(StrEnum):
    """A question-level gate decision."""

    PASS = "pass"
    ABSTAIN = "abstain"
    REFUSE = "refuse"


@runtime_checkable
class PolicyStamped(Protocol):
    """Which policy made a record: its name, kind, kind version and configuration hash."""

    @property
    def policy_id(self) -> str: ...
    @property
    def policy_kind(self) -> str: ...
    @property
    def policy_version(self) -> int: ...
    @property
    def policy_sha256(self) -> str: ...


@runtime_checkable
class ResponseDecisionRecord(PolicyStamped, Protocol):
    """One answer's decision (a line of `responses.jsonl`): what happens to the response
    and why."""

    @property
    def dataset(self) -> str: ...
    @property
    def answer_id(self) -> str: ...
    @property
    def outcome(self) -> ResponseOutcome: ...
    @property
    def reason(self) -> str: ...


@runtime_checkable
class ClaimDecisionRecord(PolicyStamped, Protocol):
    """One claim's decision (a line of `claims.jsonl`): what happens to the claim and
    why."""

    @property
    def dataset(self) -> str: ...
    @property
    def answer_id(self) -> str: ...
    @property
    def claim_id(self) -> str: ...
    @property
    def decision(self) -> ClaimDecision: ...
    @property
    def reason(self) -> str: ...


__all__ = [
    "EXPRESSED",
    "ClaimDecision",
    "ClaimDecisionRecord",
    "GateOutcome",
    "PolicyStamped",
    "ResponseDecisionRecord",
    "ResponseOutcome",
]
