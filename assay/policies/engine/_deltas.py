"""Paired deltas of two policies of one kind on the same units (responses or questions):
each metric's exact `a - b` with a percentile interval drawn from one set of unit
resamples shared by both. Kinds that count per unit hand their counts
here; claim_selective pairs its decisions itself (`claim_selective._compare`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.errors import RunError, SpecError
from assay.metrics._ratio_bootstrap import CI_METHOD, RatioCounts, paired_delta_interval
from assay.policies.engine._numbers import Ratio
from assay.policies.engine._results import MetricDelta, point_delta

Units = tuple[list[Any], dict[str, Ratio], dict[str, RatioCounts]]
"""Unit keys in order, each metric's point value, each metric's per-unit counts."""


def chosen_metrics(metrics: Sequence[str] | None, known: Sequence[str]) -> list[str]:
    """`--metrics` checked against the kind's metrics (every one when None)."""
    unknown = [m for m in metrics or () if m not in known]
    if unknown:
        raise SpecError(
            f"unknown metric {unknown[0]!r}; known: {', '.join(known)}", field="--metrics"
        )
    return list(metrics or known)


def counted_deltas(
    a: Units, b: Units, metrics: Sequence[str] | None, bootstrap: dict[str, int]
) -> list[MetricDelta]:
    """Each chosen metric's exact a - b with a paired interval over the same units."""
    keys_a, values_a, counts_a = a
    keys_b, values_b, counts_b = b
    if keys_a != keys_b:
        raise RunError("the two policies decided different responses: apply both again")
    out = []
    for metric in chosen_metrics(metrics, list(counts_a)):
        interval = paired_delta_interval(counts_a[metric], counts_b[metric], **bootstrap)
        ra, rb = values_a[metric], values_b[metric]
        delta = point_delta(ra, rb)
        out.append(
            MetricDelta(
                metric=metric,
                a=ra,
                b=rb,
                delta=delta,
                ci=interval.ci if delta is not None else None,
                ci_method=CI_METHOD if bootstrap["resamples"] else None,
                n_resamples_valid=interval.n_resamples_valid,
            )
        )
    return out


__all__ = ["Units", "chosen_metrics", "counted_deltas"]
