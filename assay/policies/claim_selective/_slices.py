"""Slices of claim-selective metrics and the source-missing transform.

A slice groups responses by a dataset field and recomputes every metric inside each
group; groups under 20 responses are flagged `descriptive`, as the paper does. The
source-missing transform keeps questions and claim skeletons and takes all evidence away,
so any selector must abstain everywhere.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict

from assay.errors import SpecError
from assay.policies.claim_selective._config import CertificateStandard
from assay.policies.claim_selective._inputs import ClaimVerification, ResponseInput
from assay.policies.claim_selective._metrics import (
    ClaimCounts,
    ClaimSelectiveMetrics,
    counts_by_response,
    metrics_of,
)
from assay.policies.claim_selective._records import ClaimSelectiveResponseRecord, Decisions

SLICE_FIELDS = ("source", "intent", "claim_type", "split", "family")
DESCRIPTIVE_BELOW = 20


class SliceGroup(BaseModel):
    """The metrics of the responses whose `field` equals `value` (None: field missing)."""

    model_config = ConfigDict(frozen=True)

    field: str
    value: str | None
    n_responses: int
    descriptive: bool
    metrics: ClaimSelectiveMetrics


def slice_metrics(
    decisions: Decisions,
    by: str,
    *,
    standard: CertificateStandard | None = None,
    resamples: int = 0,
    random_state: int = 0,
) -> list[SliceGroup]:
    """Metrics per value of the response field `by`, groups in value order (missing last)."""
    if by not in SLICE_FIELDS:
        raise SpecError(f"cannot slice by {by!r}; use one of {', '.join(SLICE_FIELDS)}", field="by")
    standard = standard or CertificateStandard()
    groups: dict[str | None, list[tuple[ClaimSelectiveResponseRecord, ClaimCounts]]]
    groups = defaultdict(list)
    for record, counts in zip(
        decisions.responses, counts_by_response(decisions, standard), strict=True
    ):
        groups[getattr(record, by)].append((record, counts))
    out = []
    for value in sorted(groups, key=lambda v: (v is None, v or "")):
        members = groups[value]
        out.append(
            SliceGroup(
                field=by,
                value=value,
                n_responses=len(members),
                descriptive=len(members) < DESCRIPTIVE_BELOW,
                metrics=metrics_of(
                    [r for r, _ in members],
                    [c for _, c in members],
                    standard,
                    resamples=resamples,
                    random_state=random_state,
                ),
            )
        )
    return out


def source_missing(responses: Iterable[ResponseInput]) -> list[ResponseInput]:
    """`--slice source-missing`: every evidence pool emptied (each verification an ok
    record with zero pairs), every gold claim status `omitted`, every gold action
    `abstain`; questions and claim skeletons kept."""
    out = []
    for response in responses:
        claims = [
            claim.model_copy(
                update={
                    "verification": ClaimVerification(
                        verifier_id=claim.verification.verifier_id if claim.verification else None
                    ),
                    "gold_status": "omitted",
                    "gold_usable": False,
                }
            )
            for claim in response.claims
        ]
        out.append(
            response.model_copy(
                update={"claims": claims, "gold_action": "abstain", "evidence_pool": []}
            )
        )
    return out


__all__ = ["DESCRIPTIVE_BELOW", "SLICE_FIELDS", "SliceGroup", "slice_metrics", "source_missing"]
