"""What the framework enforces on a user policy's decisions
(docs/reference/policies/fail-closed.md#invariants): a claim whose verification did not end ok, or
behind a gate that did not pass, is withheld whatever the policy returned; a response whose every
verification failed is refused; a response with no expressed claim is never an answer. A response
without a policy-given outcome gets the default rule of `default_outcome`.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from assay.core.decisions import EXPRESSED, ClaimDecision, GateOutcome, ResponseOutcome
from assay.policies.claim_selective._inputs import ClaimInput, ResponseInput
from assay.policies.claim_selective._rule import _filtered, evidence_filters
from assay.policies.custom._types import ClaimPolicyDecisions, ClaimVerdict, verification_ok

ANSWERS = frozenset({ResponseOutcome.ANSWER_FULL, ResponseOutcome.ANSWER_PARTIAL})


class GuardedClaim(BaseModel):
    """One claim's final decision; `overridden` is what the policy said when the guard
    replaced it (None: the policy's decision stands)."""

    model_config = ConfigDict(frozen=True)

    claim: ClaimInput
    decision: ClaimDecision
    reason: str
    overridden: ClaimDecision | None = None


class GuardedResponse(BaseModel):
    model_config = ConfigDict(frozen=True)

    response: ResponseInput
    claims: list[GuardedClaim]
    outcome: ResponseOutcome
    reason: str


def within_evidence(response: ResponseInput) -> ResponseInput:
    """The response as the policy sees it: scored pairs only inside its evidence pool
    and, behind a gate that passed, the gate's E(q) (as for the built-in kinds)."""
    filters = evidence_filters(response)
    if not filters:
        return response
    claims = []
    for c in response.claims:
        v = c.verification
        if v is not None:
            v = v.model_copy(update={"pairs": _filtered(v.pairs, filters)[0]})
        claims.append(c.model_copy(update={"verification": v}))
    return response.model_copy(update={"claims": claims})


def _status(claim: ClaimInput) -> str:
    return "missing" if claim.verification is None else claim.verification.status.value


def _gate_block(response: ResponseInput) -> GateOutcome | None:
    """The gate's outcome when it did not pass (None: no gate, or it passed)."""
    gate = response.gate
    return gate.outcome if gate is not None and gate.outcome != GateOutcome.PASS else None


def guard_claim(
    claim: ClaimInput, given: ClaimVerdict | None, gate: GateOutcome | None
) -> GuardedClaim:
    """The policy's verdict unless fail-closed rules forbid it."""
    if not verification_ok(claim):
        forced = f"verification_{_status(claim)}"
    elif gate is not None:
        forced = f"gate_{gate.value}"
    elif given is None:
        forced = "not_decided"
    else:
        return GuardedClaim(claim=claim, decision=given.decision, reason=given.reason)
    said = (
        given.decision if given is not None and given.decision != ClaimDecision.WITHHOLD else None
    )
    return GuardedClaim(
        claim=claim, decision=ClaimDecision.WITHHOLD, reason=forced, overridden=said
    )


def default_outcome(claims: list[GuardedClaim]) -> tuple[ResponseOutcome, str]:
    """The default rule, first match: refuse (claims, none with an ok verification),
    abstain (no claim asserted or qualified), conflict (a claim disputed), answer_full
    (every claim asserted), answer_partial."""
    decisions = [c.decision for c in claims]
    if claims and not any(verification_ok(c.claim) for c in claims):
        return ResponseOutcome.REFUSE, "every_verification_failed"
    if not any(d in EXPRESSED for d in decisions):
        return ResponseOutcome.ABSTAIN, "nothing_expressed"
    if ClaimDecision.DISPUTE in decisions:
        return ResponseOutcome.CONFLICT, "claim_disputed"
    if all(d == ClaimDecision.ASSERT for d in decisions):
        return ResponseOutcome.ANSWER_FULL, "every_claim_asserted"
    return ResponseOutcome.ANSWER_PARTIAL, "some_claims_expressed"


def _outcome(
    response: ResponseInput, claims: list[GuardedClaim], given: ResponseOutcome | None
) -> tuple[ResponseOutcome, str]:
    gate = _gate_block(response)
    if gate is not None:
        refused = gate == GateOutcome.REFUSE
        return (
            ResponseOutcome.REFUSE if refused else ResponseOutcome.ABSTAIN
        ), f"gate_{gate.value}"
    rule, why = default_outcome(claims)
    if given is None:
        return rule, why
    if rule == ResponseOutcome.REFUSE:
        return rule, why  # inputs failed: no policy may answer or abstain instead
    if given in ANSWERS and not any(c.decision in EXPRESSED for c in claims):
        return ResponseOutcome.ABSTAIN, "nothing_expressed"
    return given, "policy"


def guard(
    responses: tuple[ResponseInput, ...], decisions: ClaimPolicyDecisions
) -> list[GuardedResponse]:
    """Every response and claim of the inputs with its final decision, in input order."""
    out = []
    for r in responses:
        gate = _gate_block(r)
        claims = [
            guard_claim(c, decisions.claims.get((r.dataset, r.answer_id, c.claim_id)), gate)
            for c in r.claims
        ]
        outcome, reason = _outcome(r, claims, decisions.outcomes.get((r.dataset, r.answer_id)))
        out.append(GuardedResponse(response=r, claims=claims, outcome=outcome, reason=reason))
    return out


def unknown_keys(
    responses: tuple[ResponseInput, ...], decisions: ClaimPolicyDecisions
) -> list[str]:
    """Keys the policy decided that the inputs do not have (a bug in the policy)."""
    claims = {(r.dataset, r.answer_id, c.claim_id) for r in responses for c in r.claims}
    answers = {(r.dataset, r.answer_id) for r in responses}
    bad = [":".join(k) for k in decisions.claims if k not in claims]
    return bad + [":".join(k) for k in decisions.outcomes if k not in answers]


__all__ = [
    "within_evidence",
    "GuardedClaim",
    "GuardedResponse",
    "default_outcome",
    "guard",
    "guard_claim",
    "unknown_keys",
]
