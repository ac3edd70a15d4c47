"""Claim-selective decisions for whole responses: the gate, the family and its θ,
the priors, then the rule of `_cs_rule` for every claim and the response action; and the
records built from those verdicts.

`prepare_response` does the threshold-independent work once (FC checks, filters,
pooling), so tuning can re-judge the same prepared responses under every candidate.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from assay.core.decisions import GateOutcome
from assay.policies.claim_selective._config import ClaimSelectiveConfig, SelectorThresholds
from assay.policies.claim_selective._inputs import ResponseInput
from assay.policies.claim_selective._records import (
    DECISION_OF,
    OUTCOME_OF,
    CertificateRecord,
    ClaimCertificate,
    ClaimSelectiveClaimRecord,
    ClaimSelectiveResponseRecord,
    Decisions,
    EvidenceLink,
    LinkRole,
    PolicyStamp,
    PooledScores,
    Stamped,
)
from assay.policies.claim_selective._rule import (
    PreparedClaim,
    certificate_valid,
    claim_status,
    evidence_filters,
    link_roles,
    prepare_claim,
    response_action,
)
from assay.policies.engine._canonical import canonical_sha256

STATUSES = ("certified", "condition_limited", "conflicting", "omitted")
_GATE_REASON = {GateOutcome.ABSTAIN: "gate_abstained", GateOutcome.REFUSE: "gate_refused"}


@dataclass(frozen=True, slots=True)
class PreparedResponse:
    response: ResponseInput
    claims: tuple[PreparedClaim, ...]


@dataclass(frozen=True, slots=True)
class ClaimVerdict:
    prepared: PreparedClaim
    status: str
    reason: str
    links: list[tuple[int, list[LinkRole]]]
    valid: bool | None
    priors: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ResponseVerdict:
    response: ResponseInput
    family: str | None
    thresholds: SelectorThresholds
    claims: list[ClaimVerdict]
    action: str
    reason: str
    priors: tuple[str, ...] = ()


def prepare_response(response: ResponseInput) -> PreparedResponse:
    """Every claim's FC checks and pool, inside the evidence pool and the gate's E(q)."""
    filters = evidence_filters(response)
    return PreparedResponse(response, tuple(prepare_claim(c, filters) for c in response.claims))


def _rescue(
    prepared: PreparedResponse,
    claim: PreparedClaim,
    config: ClaimSelectiveConfig,
    family: str | None,
) -> list[int]:
    """Pool indices of passages flagged `dosage_instruction`, when dosage_label_rescue
    applies to this claim (instruction-specific family, listed source)."""
    hook = config.priors.dosage_label_rescue
    response = prepared.response
    if hook is None or family != "instruction_specific" or response.source not in hook.sources:
        return []
    flags = response.passages
    return [
        i
        for i, pair in enumerate(claim.pool)
        if any(flags[p].dosage_instruction for p in pair.passage_ids() if p in flags)
    ]


def _review_downgrade(prepared: PreparedResponse, config: ClaimSelectiveConfig) -> bool:
    hook = config.priors.review_downgrade
    response = prepared.response
    if hook is None or response.source not in hook.sources:
        return False
    for claim in prepared.claims:
        if (claim.claim.claim_type or response.claim_type) not in hook.claim_types:
            continue
        for pair in claim.pool:
            levels = (response.passages.get(p) for p in pair.passage_ids())
            if any(
                info is not None and info.evidence_level == hook.evidence_level for info in levels
            ):
                return True
    return False


def _judge_claim(
    prepared: PreparedResponse,
    claim: PreparedClaim,
    config: ClaimSelectiveConfig,
    family: str | None,
    thresholds: SelectorThresholds,
) -> ClaimVerdict:
    theta = thresholds.theta()
    rescue = _rescue(prepared, claim, config, family)
    lifted = bool(rescue) and claim.pooled is not None and claim.pooled.s_support < theta.support
    status, reason = claim_status(claim, theta, theta.support if lifted else None)
    links = link_roles(claim, status, rescue if lifted else ())
    valid = certificate_valid(
        status,
        claim.failure is None,
        [claim.pool[i].s_support for i, _ in links],
        claim.pooled.s_conflict if claim.pooled else None,
        config.certificate_standard,
    )
    priors = ("dosage_label_rescue",) if lifted and status != "omitted" else ()
    return ClaimVerdict(claim, status, reason, links, valid, priors)


def judge_response(prepared: PreparedResponse, config: ClaimSelectiveConfig) -> ResponseVerdict:
    """The verdict on one prepared response under `config`."""
    response = prepared.response
    family = config.family_of(response.intent)
    thresholds = config.thresholds_of(family)
    gate = response.gate
    if gate is not None and gate.outcome in _GATE_REASON:
        why = _GATE_REASON[gate.outcome]
        claims = [ClaimVerdict(c, "omitted", why, [], None) for c in prepared.claims]
        action = "abstain" if gate.outcome == GateOutcome.ABSTAIN else "refuse"
        return ResponseVerdict(response, family, thresholds, claims, action, why)
    claims = [_judge_claim(prepared, c, config, family, thresholds) for c in prepared.claims]
    action, reason = response_action(
        [c.status for c in claims],
        response.claims,
        config.conflict_scope,
        all_failed=all(c.failure is not None for c in prepared.claims),
    )
    priors: tuple[str, ...] = ()
    if action == "full" and _review_downgrade(prepared, config):
        action, reason, priors = "partial", "prior:review_downgrade", ("review_downgrade",)
    return ResponseVerdict(response, family, thresholds, claims, action, reason, priors)


def _number(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _links(verdict: ClaimVerdict, thresholds: dict[str, str]) -> list[EvidenceLink]:
    pool = verdict.prepared.pool or verdict.prepared.scored
    return [
        EvidenceLink(
            passage_id=pool[i].passage_id,
            context=pool[i].context,
            doc_id=pool[i].doc_id,
            page=pool[i].page,
            span_id=pool[i].span_id,
            roles=roles,
            s_support=_number(pool[i].s_support),
            s_conflict=_number(pool[i].s_conflict),
            s_limitation=_number(pool[i].s_limitation),
            relation_source=pool[i].relation_source,
            thresholds=thresholds,
        )
        for i, roles in verdict.links
    ]


def _claim_record(
    response: ResponseVerdict, verdict: ClaimVerdict, stamp: PolicyStamp
) -> ClaimSelectiveClaimRecord:
    prepared = verdict.prepared
    claim = prepared.claim
    verification = claim.verification
    thresholds = response.thresholds.model_dump()
    pooled = prepared.pooled
    gold = claim.gold_status
    return ClaimSelectiveClaimRecord(
        **Stamped.stamp_fields(stamp),
        dataset=response.response.dataset,
        answer_id=response.response.answer_id,
        claim_id=claim.claim_id,
        claim=claim.claim,
        verifier_id=verification.verifier_id if verification else None,
        verification_status=str(verification.status) if verification else "missing",
        verification_ok=prepared.failure is None,
        pooled=PooledScores(
            s_support=pooled.s_support,
            s_conflict=pooled.s_conflict,
            s_limitation=pooled.s_limitation,
        )
        if pooled
        else None,
        native=verdict.status,
        decision=DECISION_OF[verdict.status],
        reason=verdict.reason,
        family=response.family,
        thresholds=thresholds,
        critical=claim.critical,
        required=claim.is_required,
        claim_type=claim.claim_type or response.response.claim_type,
        links=_links(verdict, thresholds),
        certificate_valid=verdict.valid,
        priors=list(verdict.priors),
        ignored_references=list(prepared.ignored),
        gold_status=gold,
        gold_usable=claim.gold_usable,
        correct=None if gold is None else (gold == verdict.status and prepared.failure is None),
    )


def _response_record(verdict: ResponseVerdict, stamp: PolicyStamp) -> ClaimSelectiveResponseRecord:
    response = verdict.response
    counts = dict.fromkeys(STATUSES, 0)
    for claim in verdict.claims:
        counts[claim.status] += 1
    gold = response.gold_action
    return ClaimSelectiveResponseRecord(
        **Stamped.stamp_fields(stamp),
        dataset=response.dataset,
        answer_id=response.answer_id,
        native=verdict.action,
        outcome=OUTCOME_OF[verdict.action],
        reason=verdict.reason,
        n_claims=len(verdict.claims),
        status_counts=counts,
        family=verdict.family,
        intent=response.intent,
        source=response.source,
        claim_type=response.claim_type,
        split=response.split,
        priors=list(verdict.priors),
        gate=response.gate,
        gold_action=gold,
        action_correct=None if gold is None else gold == verdict.action,
    )


def _plain_numbers(value: Any) -> Any:
    """Non-finite floats as text, so an input with a NaN score still hashes."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, dict):
        return {k: _plain_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain_numbers(v) for v in value]
    return value


def input_sha256(response: ResponseInput) -> str:
    """sha256 of the canonical JSON of one response input."""
    return canonical_sha256(_plain_numbers(response.model_dump(mode="json")))


def _certificate(
    verdict: ResponseVerdict,
    claims: Sequence[ClaimSelectiveClaimRecord],
    stamp: PolicyStamp,
    standard: dict[str, str],
) -> CertificateRecord:
    return CertificateRecord(
        dataset=verdict.response.dataset,
        answer_id=verdict.response.answer_id,
        policy=stamp,
        family=verdict.family,
        thresholds=verdict.thresholds.model_dump(),
        certificate_standard=standard,
        native=verdict.action,
        outcome=OUTCOME_OF[verdict.action],
        input_sha256=input_sha256(verdict.response),
        claims=[
            ClaimCertificate(
                claim_id=c.claim_id,
                native=c.native,
                decision=c.decision,
                reason=c.reason,
                links=c.links,
                certificate_valid=c.certificate_valid,
            )
            for c in claims
        ],
    ).sealed()


def unique_sorted(responses: Iterable[ResponseInput]) -> list[ResponseInput]:
    """Responses in (dataset, answer_id) order; a repeated key keeps its last record."""
    latest = {r.key: r for r in responses}
    return [latest[k] for k in sorted(latest)]


def records_of(
    verdicts: Iterable[ResponseVerdict], stamp: PolicyStamp, standard: dict[str, str]
) -> Decisions:
    """The claim, response and certificate records of `verdicts` (already in order)."""
    responses: list[ClaimSelectiveResponseRecord] = []
    claims: list[ClaimSelectiveClaimRecord] = []
    certificates: list[CertificateRecord] = []
    for verdict in verdicts:
        own = [_claim_record(verdict, c, stamp) for c in verdict.claims]
        responses.append(_response_record(verdict, stamp))
        claims.extend(own)
        certificates.append(_certificate(verdict, own, stamp, standard))
    return Decisions(responses=responses, claims=claims, certificates=certificates)


def decide(
    config: ClaimSelectiveConfig, stamp: PolicyStamp, responses: Iterable[ResponseInput]
) -> Decisions:
    """Decide every response under `config`."""
    verdicts = (judge_response(prepare_response(r), config) for r in unique_sorted(responses))
    return records_of(verdicts, stamp, config.certificate_standard.model_dump())


__all__ = [
    "STATUSES",
    "ClaimVerdict",
    "PreparedResponse",
    "ResponseVerdict",
    "decide",
    "input_sha256",
    "judge_response",
    "prepare_response",
    "records_of",
    "unique_sorted",
]
