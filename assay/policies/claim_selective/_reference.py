"""Reference systems: comparison points, not policies. They are exempt from the fail-closed checks
(docs/reference/policies/fail-closed.md#invariants) and flagged `reference: true` on every record.

- `express_all`: every claim `certified`, linked to its whole pool whatever its
  verification status (the paper's retrieval-only analogue); actions by the response rule without
  the refuse step.
- `binary_support_gate`: every claim `certified` when the response's best S_sup reaches
  one global gate (the paper's proxy used 0.34), else every claim `omitted`.
"""

from __future__ import annotations

from collections.abc import Iterable

from assay.policies.claim_selective._config import CertificateStandard, SelectorThresholds
from assay.policies.claim_selective._decide import (
    ClaimVerdict,
    PreparedResponse,
    ResponseVerdict,
    prepare_response,
    records_of,
    unique_sorted,
)
from assay.policies.claim_selective._inputs import ResponseInput
from assay.policies.claim_selective._records import Decisions, LinkRole, PolicyStamp
from assay.policies.claim_selective._rule import certificate_valid, response_action, valid_score
from assay.policies.engine._canonical import canonical_sha256
from assay.policies.engine._numbers import threshold

REFERENCE_VERSION = 1
_POOL: list[LinkRole] = ["pool"]


def _stamp(name: str, settings: dict[str, str]) -> PolicyStamp:
    body = {"reference": name, "version": REFERENCE_VERSION, "settings": settings}
    return PolicyStamp(
        policy_id=name,
        kind=name,
        policy_version=REFERENCE_VERSION,
        policy_sha256=canonical_sha256(body),
        reference=True,
    )


def _verdict(
    prepared: PreparedResponse, express: bool, reason: str, standard: CertificateStandard
) -> ResponseVerdict:
    claims = []
    for claim in prepared.claims:
        links = [(i, _POOL) for i in range(len(claim.scored))] if express else []
        status = "certified" if express else "omitted"
        valid = certificate_valid(
            status,
            claim.failure is None,
            [claim.scored[i].s_support for i, _ in links],
            claim.pooled.s_conflict if claim.pooled else None,
            standard,
        )
        claims.append(ClaimVerdict(claim, status, reason, links, valid))
    action, why = response_action(
        [c.status for c in claims], prepared.response.claims, "critical", all_failed=False
    )
    return ResponseVerdict(prepared.response, None, SelectorThresholds(), claims, action, why)


def express_all(
    responses: Iterable[ResponseInput], *, standard: CertificateStandard | None = None
) -> Decisions:
    """Every claim certified on its whole pool (a system that expresses regardless of
    evidence); certificate validity judged by `standard`."""
    standard = standard or CertificateStandard()
    verdicts = (
        _verdict(prepare_response(r), True, "express_all", standard)
        for r in unique_sorted(responses)
    )
    return records_of(verdicts, _stamp("express_all", {}), standard.model_dump())


def best_support(prepared: PreparedResponse) -> float | None:
    """The response's best valid s_support over every scored pair of every claim."""
    scores = [p.s_support for c in prepared.claims for p in c.scored if valid_score(p.s_support)]
    return max((s for s in scores if s is not None), default=None)


def binary_support_gate(
    responses: Iterable[ResponseInput],
    gate: str = "0.34",
    *,
    standard: CertificateStandard | None = None,
) -> Decisions:
    """Answer (every claim certified, `full`) when the best S_sup reaches `gate`, else
    abstain (every claim omitted): the paper's answer/abstain baseline."""
    level = threshold(gate, field="gate")
    standard = standard or CertificateStandard()
    verdicts = []
    for response in unique_sorted(responses):
        prepared = prepare_response(response)
        best = best_support(prepared)
        passed = best is not None and best >= level
        reason = "support_gate_passed" if passed else "support_gate_failed"
        verdicts.append(_verdict(prepared, passed, reason, standard))
    stamp = _stamp("binary_support_gate", {"gate": gate})
    return records_of(verdicts, stamp, standard.model_dump())


__all__ = ["REFERENCE_VERSION", "best_support", "binary_support_gate", "express_all"]
