"""Renderings and the answer's outcome.

    strict  shown: VERIFIED; a "not verified" list of UNVERIFIED claims by id and reason
            code, and the number of BLOCKED claims; everything else hidden
    mixed   shown: VERIFIED; UNVERIFIED collapsed with a warning; BLOCKED hidden
    debug   every claim shown

What a mode *displays* is `shown + collapsed`: VERIFIED in strict, VERIFIED and
UNVERIFIED in mixed. The outcome: `refuse` when the gate refused or every claim's
inputs failed; `abstain` when no claim is VERIFIED; `answer_full` when all are;
otherwise `answer_partial`.
"""

from __future__ import annotations

from collections.abc import Sequence

from assay.core.decisions import ResponseOutcome
from assay.policies.fail_closed._config import VERSION, FailClosedConfig, Mode
from assay.policies.fail_closed._inputs import FCResponse
from assay.policies.fail_closed._records import (
    FC1_REASONS,
    GOLD_OUTCOME,
    NATIVE_OUTCOME,
    FailClosedClaimRecord,
    FailClosedResponseRecord,
    NotVerified,
    Reason,
    Rendered,
    RenderState,
    ResponseReason,
)


def render(mode: Mode, claims: Sequence[FailClosedClaimRecord]) -> Rendered:
    """The claim-id lists of one mode's rendering, in claim IR order."""
    verified = [c.claim_id for c in claims if c.native is RenderState.VERIFIED]
    unverified = [c.claim_id for c in claims if c.native is RenderState.UNVERIFIED]
    others = [c.claim_id for c in claims if c.native is not RenderState.VERIFIED]
    blocked = [c.claim_id for c in claims if c.native is RenderState.BLOCKED]
    if mode is Mode.DEBUG:
        shown, collapsed, hidden = [c.claim_id for c in claims], [], []
    elif mode is Mode.MIXED:
        shown, collapsed, hidden = verified, unverified, blocked
    else:
        shown, collapsed, hidden = verified, [], others
    return Rendered(mode=mode, shown=shown, collapsed=collapsed, hidden=hidden, empty=not verified)


def displayed(mode: Mode, claims: Sequence[FailClosedClaimRecord]) -> list[FailClosedClaimRecord]:
    """The claims a mode puts in front of the reader (shown or collapsed)."""
    view = render(mode, claims)
    ids = set(view.shown) | set(view.collapsed)
    return [c for c in claims if c.claim_id in ids]


def outcome_of(response: FCResponse, claims: Sequence[FailClosedClaimRecord]) -> ResponseReason:
    """Why the answer gets its outcome (the outcome follows from the reason)."""
    if response.gate is not None and response.gate.outcome != "pass":
        gated = response.gate.outcome == "abstain"
        return ResponseReason.GATE_ABSTAINED if gated else ResponseReason.GATE_REFUSED
    if not claims:
        return ResponseReason.NO_CLAIMS
    if all(c.reason in FC1_REASONS for c in claims):
        if all(c.reason == Reason.NO_ENTAILMENT_SCORES for c in claims):
            return ResponseReason.NO_ENTAILMENT_SCORES
        return ResponseReason.ALL_VERIFICATIONS_FAILED
    n_verified = sum(c.native is RenderState.VERIFIED for c in claims)
    if n_verified == 0:
        return ResponseReason.NO_VERIFIED_CLAIM
    if n_verified == len(claims):
        return ResponseReason.ALL_VERIFIED
    return ResponseReason.PARTIALLY_VERIFIED


OUTCOME = {
    ResponseReason.ALL_VERIFIED: ResponseOutcome.ANSWER_FULL,
    ResponseReason.PARTIALLY_VERIFIED: ResponseOutcome.ANSWER_PARTIAL,
    ResponseReason.NO_VERIFIED_CLAIM: ResponseOutcome.ABSTAIN,
    ResponseReason.NO_CLAIMS: ResponseOutcome.ABSTAIN,
    ResponseReason.GATE_ABSTAINED: ResponseOutcome.ABSTAIN,
    ResponseReason.ALL_VERIFICATIONS_FAILED: ResponseOutcome.REFUSE,
    ResponseReason.NO_ENTAILMENT_SCORES: ResponseOutcome.REFUSE,
    ResponseReason.GATE_REFUSED: ResponseOutcome.REFUSE,
}


def response_record(
    response: FCResponse,
    claims: Sequence[FailClosedClaimRecord],
    config: FailClosedConfig,
    *,
    pairs_used: int,
) -> FailClosedResponseRecord:
    """The answer's line of `responses.jsonl`."""
    reason = outcome_of(response, claims)
    outcome = OUTCOME[reason]
    states = [c.native for c in claims]
    action_correct = None
    if response.gold_action is not None:
        action_correct = outcome is GOLD_OUTCOME[response.gold_action]
    return FailClosedResponseRecord(
        dataset=response.dataset,
        answer_id=response.answer_id,
        question_id=response.question_id,
        policy_id=config.name,
        policy_version=VERSION,
        policy_sha256=config.sha256,
        native=NATIVE_OUTCOME[outcome],
        outcome=outcome,
        reason=reason,
        n_claims=len(claims),
        n_verified=states.count(RenderState.VERIFIED),
        n_unverified=states.count(RenderState.UNVERIFIED),
        n_blocked=states.count(RenderState.BLOCKED),
        n_pairs_used=pairs_used,
        rendered=render(config.mode, claims),
        not_verified=[
            NotVerified(claim_id=c.claim_id, reason=Reason(c.reason))
            for c in claims
            if c.native is RenderState.UNVERIFIED
        ],
        gate=response.gate.outcome if response.gate is not None else None,
        gold_action=response.gold_action,
        action_correct=action_correct,
    )


__all__ = ["OUTCOME", "displayed", "outcome_of", "render", "response_record"]
