"""Paired comparison of two claim-selective systems on the same responses: the
point delta of each metric as an exact difference of fractions, and a percentile
interval from one set of response resamples shared by both systems."""

from __future__ import annotations

from collections.abc import Sequence

from assay.errors import DatasetError
from assay.metrics._ratio_bootstrap import CI_METHOD, RatioCounts, paired_delta_interval
from assay.policies.claim_selective._config import CertificateStandard
from assay.policies.claim_selective._metrics import (
    METRIC_NAMES,
    UCCR,
    ClaimCounts,
    claim_metrics,
    counts_by_response,
    ratio_parts,
    total,
)
from assay.policies.claim_selective._records import Decisions
from assay.policies.engine._results import MetricDelta, point_delta


def _series(per_response: Sequence[ClaimCounts], metric: str) -> RatioCounts:
    parts = [ratio_parts(c)[metric] for c in per_response]
    return RatioCounts(
        numerator=[n for n, _ in parts],
        denominator=[d for _, d in parts],
        when_zero=0.0 if metric in UCCR else None,
    )


def paired_deltas(
    a: Decisions,
    b: Decisions,
    *,
    metrics: Sequence[str] = METRIC_NAMES,
    standard: CertificateStandard | None = None,
    resamples: int = 1000,
    random_state: int = 0,
    confidence: float = 0.95,
) -> list[MetricDelta]:
    """Each metric's `a - b` with a paired bootstrap interval (the same resampled
    responses for both); `a` and `b` must have decided the same responses."""
    keys_a = [r.key for r in a.responses]
    keys_b = [r.key for r in b.responses]
    if keys_a != keys_b:
        only_a, only_b = len(set(keys_a) - set(keys_b)), len(set(keys_b) - set(keys_a))
        raise DatasetError(
            f"paired deltas need the same responses: {only_a} only in a, {only_b} only in b"
        )
    unknown = [m for m in metrics if m not in METRIC_NAMES]
    if unknown:
        raise DatasetError(f"unknown metric {unknown[0]!r}; known: {', '.join(METRIC_NAMES)}")
    standard = standard or CertificateStandard()
    counts_a, counts_b = counts_by_response(a, standard), counts_by_response(b, standard)
    point_a, point_b = claim_metrics(total(counts_a)), claim_metrics(total(counts_b))
    out = []
    for metric in metrics:
        interval = paired_delta_interval(
            _series(counts_a, metric),
            _series(counts_b, metric),
            resamples=resamples,
            random_state=random_state,
            confidence=confidence,
        )
        out.append(
            MetricDelta(
                metric=metric,
                a=point_a[metric],
                b=point_b[metric],
                delta=point_delta(point_a[metric], point_b[metric]),
                ci=interval.ci,
                ci_method=CI_METHOD if resamples else None,
                n_resamples_valid=interval.n_resamples_valid,
            )
        )
    return out


__all__ = ["MetricDelta", "paired_deltas", "point_delta"]
