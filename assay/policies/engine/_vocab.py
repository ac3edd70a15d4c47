"""The common decision vocabulary of every policy (§1.2); each kind keeps its paper's own
name in a `native` field beside it."""

from __future__ import annotations

from enum import StrEnum

from assay.core.answer_fields import GoldAction  # one home: the dataset field (§5.2.5)


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
    REFUSE = "refuse"  # inputs failed (FC-2, FC-3): never matches a gold label


class GateOutcome(StrEnum):
    """A question-level gate decision."""

    PASS = "pass"
    ABSTAIN = "abstain"
    REFUSE = "refuse"


GOLD_ACTIONS: tuple[GoldAction, ...] = ("full", "partial", "conflict", "abstain")
"""Gold response actions of the claim-selective data (`gold_action`), in tie-break order."""

__all__ = [
    "EXPRESSED",
    "GOLD_ACTIONS",
    "ClaimDecision",
    "GateOutcome",
    "GoldAction",
    "ResponseOutcome",
]
