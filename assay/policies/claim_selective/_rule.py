"""The claim-selective decision itself, on plain values: pooling by maximum,
the fail-closed checks, the status rule TR(θ), evidence links, certificate validity and
the response action. `_cs_decide` turns its results into records; tuning and sweeps
call it directly, so every path decides through the same functions.

Everything here reads ids, flags and numbers only. Comparisons use exactly the
operator each rule states (no epsilon): a score equal to a threshold behaves as written.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from assay.core.decisions import GateOutcome
from assay.core.outcomes import Status
from assay.policies.claim_selective._config import CertificateStandard, Theta
from assay.policies.claim_selective._inputs import ClaimInput, RelationPair, ResponseInput
from assay.policies.claim_selective._records import EXPRESSED_STATUSES, IgnoredReference, LinkRole

SCORE_NAMES = ("s_support", "s_conflict", "s_limitation")


@dataclass(frozen=True, slots=True)
class Pooled:
    s_support: float
    s_conflict: float
    s_limitation: float


@dataclass(frozen=True, slots=True)
class PreparedClaim:
    """A claim's threshold-independent facts: its pool after the evidence filters, the failed-input
    reason that withholds it (if any), the reason an empty pool has, its pooled scores."""

    claim: ClaimInput
    scored: tuple[RelationPair, ...]
    pool: tuple[RelationPair, ...]
    failure: str | None
    empty_reason: str | None
    pooled: Pooled | None
    ignored: tuple[IgnoredReference, ...]


def valid_score(value: float | None) -> bool:
    return value is not None and math.isfinite(value) and 0.0 <= value <= 1.0


def pair_is_valid(pair: RelationPair) -> bool:
    return all(valid_score(getattr(pair, name)) for name in SCORE_NAMES)


def pool_scores(pool: Sequence[RelationPair]) -> Pooled:
    """Each coordinate's maximum over the pool, independently; (0, 0, 0) when empty."""
    if not pool:
        return Pooled(0.0, 0.0, 0.0)
    return Pooled(
        max(p.s_support or 0.0 for p in pool),
        max(p.s_conflict or 0.0 for p in pool),
        max(p.s_limitation or 0.0 for p in pool),
    )


Filters = Sequence[tuple[Collection[str], str]]


def evidence_filters(response: ResponseInput) -> Filters:
    """The bounds on the pairs a claim-level kind reads: the response's evidence pool
    and, behind a gate that passed, the gate's E(q); each with the reason it logs."""
    filters: list[tuple[Collection[str], str]] = []
    if response.evidence_pool is not None:
        filters.append((set(response.evidence_pool), "outside_evidence_pool"))
    gate = response.gate
    if gate is not None and gate.outcome == GateOutcome.PASS and gate.evidence is not None:
        filters.append((set(gate.evidence), "outside_gate_evidence"))
    return filters


def _filtered(
    pairs: Sequence[RelationPair], filters: Filters
) -> tuple[list[RelationPair], list[IgnoredReference]]:
    kept: list[RelationPair] = []
    ignored: list[IgnoredReference] = []
    for pair in pairs:
        outside = next(
            (
                (pid, why)
                for allowed, why in filters
                for pid in pair.passage_ids()
                if pid not in allowed
            ),
            None,
        )
        if outside is None:
            kept.append(pair)
        else:
            ignored.append(IgnoredReference(passage_id=outside[0], reason=outside[1]))
    return kept, ignored


def prepare_claim(claim: ClaimInput, filters: Filters = ()) -> PreparedClaim:
    """Failed inputs (missing, non-ok, any invalid score), the evidence filters (only scored
    pairs inside the evidence pool and the gate's E(q); cited ids without a score are
    logged), capped pairs as never scored: docs/reference/policies/fail-closed.md#invariants."""
    verification = claim.verification
    pairs = verification.pairs if verification is not None else []
    scored, ignored = _filtered(pairs, filters)
    named = {pid for pair in pairs for pid in pair.passage_ids()}
    ignored += [
        IgnoredReference(passage_id=pid, reason="unscored_reference")
        for pid in dict.fromkeys(claim.cited_passages)
        if pid not in named
    ]
    failure = None
    if verification is None:
        failure = "missing_verification"
    elif verification.status != Status.OK:
        failure = "verification_not_ok"
    elif not all(pair_is_valid(p) for p in scored):
        failure = "invalid_score"
    pool = tuple(scored) if failure is None else ()
    empty_reason = None
    if failure is None and not pool:
        capped = verification is not None and verification.pairs_dropped_by_cap > 0
        empty_reason = "cap_exceeded" if capped else "no_evidence"
    return PreparedClaim(
        claim=claim,
        scored=tuple(scored),
        pool=pool,
        failure=failure,
        empty_reason=empty_reason,
        pooled=pool_scores(pool) if failure is None else None,
        ignored=tuple(ignored),
    )


def claim_status(
    prepared: PreparedClaim, theta: Theta, support_floor: float | None = None
) -> tuple[str, str]:
    """TR(θ) (docs/reference/policies/claim-selective.md#claim-statuses): (status, reason). Conflict
    is checked first, so a disputed claim is never asserted; `support_floor` is a prior that lifts
    S_sup (dosage_label_rescue)."""
    if prepared.failure is not None:
        return "omitted", prepared.failure
    if prepared.pooled is None or not prepared.pool:
        return "omitted", prepared.empty_reason or "no_evidence"
    pooled = prepared.pooled
    support = pooled.s_support
    if support_floor is not None:
        support = max(support, support_floor)
    if pooled.s_conflict >= theta.conflict:
        return "conflicting", "conflict_threshold"
    if support >= theta.support and pooled.s_limitation < theta.limitation:
        return "certified", "certified"
    if support >= theta.condition_limited:
        reason = "limitation_downgrade" if support >= theta.support else "weak_support"
        return "condition_limited", reason
    return "omitted", "insufficient_support"


def link_roles(
    prepared: PreparedClaim, status: str, rescue: Collection[int] = ()
) -> list[tuple[int, list[LinkRole]]]:
    """Pool indices behind a status with their roles: every passage attaining S_sup
    (certified, condition_limited), S_lim when positive (condition_limited), S_conf
    (conflicting); `rescue` adds the passages a prior lifted support with."""
    pooled = prepared.pooled
    if pooled is None or status == "omitted":
        return []
    roles: dict[int, list[LinkRole]] = {}
    for index, pair in enumerate(prepared.pool):
        found: list[LinkRole] = []
        if status in EXPRESSED_STATUSES and pair.s_support == pooled.s_support:
            found.append("support")
        limited = status == "condition_limited" and pooled.s_limitation > 0
        if limited and pair.s_limitation == pooled.s_limitation:
            found.append("limitation")
        if status == "conflicting" and pair.s_conflict == pooled.s_conflict:
            found.append("conflict")
        if status in EXPRESSED_STATUSES and index in rescue:
            found.append("dosage_label_rescue")
        if found:
            roles[index] = found
    return sorted(roles.items())


def certificate_valid(
    status: str,
    verification_ok: bool,
    link_supports: Sequence[float | None],
    pool_conflict: float | None,
    standard: CertificateStandard,
) -> bool | None:
    """docs/reference/policies/claim-selective.md#certificate-validity: an expressed claim's
    certificate is valid iff its verification is ok, it links a passage of its scored pool, the best
    linked support reaches the standard's minimum for its status, and S_conf over the whole pool
    stays below `conflict_max`. None for claims that are not expressed."""
    if status not in EXPRESSED_STATUSES:
        return None
    supports = [s for s in link_supports if valid_score(s)]
    if not verification_ok or not supports or not valid_score(pool_conflict):
        return False
    needed = standard.support_min if status == "certified" else standard.limited_support_min
    return max(s for s in supports if s is not None) >= float(needed) and (
        pool_conflict is not None and pool_conflict < float(standard.conflict_max)
    )


def response_action(
    statuses: Sequence[str],
    claims: Sequence[ClaimInput],
    conflict_scope: str,
    *,
    all_failed: bool,
) -> tuple[str, str]:
    """docs/reference/policies/claim-selective.md#response-actions, in order: refuse -> abstain ->
    conflict -> full -> partial."""
    if claims and all_failed:
        return "refuse", "all_verifications_failed"
    in_scope = [conflict_scope == "any" or c.critical for c in claims]
    conflicts = [
        s == "conflicting" and scoped for s, scoped in zip(statuses, in_scope, strict=True)
    ]
    if not any(s in EXPRESSED_STATUSES for s in statuses) and not any(conflicts):
        return "abstain", "no_expressible_claim"
    if any(conflicts):
        return "conflict", "material_conflict"
    required = [c.is_required for c in claims]
    if not any(required):
        required = [True] * len(claims)
    if all(s == "certified" for s, r in zip(statuses, required, strict=True) if r):
        return "full", "all_required_certified"
    return "partial", "some_required_not_certified"


__all__ = [
    "Pooled",
    "PreparedClaim",
    "certificate_valid",
    "claim_status",
    "link_roles",
    "pair_is_valid",
    "pool_scores",
    "prepare_claim",
    "response_action",
    "valid_score",
]
