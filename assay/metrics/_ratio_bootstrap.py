"""Percentile bootstrap of ratios of sums: `sum(num) / sum(den)` over resampled units.

Two estimators on the draws of `_resampling.index_chunks`. `ratio_ci` takes float
numerators and positive denominators (the factuality micro score). `bootstrap_intervals`
and `paired_delta_interval` are the policies' pooled metrics: each metric is
given as per-response integer counts (a response's share of the pooled counts), a
resample's value is the draw counts times the counts, exactly; resamples where a metric is
null (zero denominator) are dropped and counted. One draw serves every metric, and both
policies of a paired comparison, so their deltas are paired.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np
from numpy.typing import ArrayLike, NDArray
from pydantic import BaseModel, ConfigDict, Field

from assay.metrics._resampling import (
    Seed,
    check_settings,
    draw_counts,
    index_chunks,
    percentile_interval,
)

CI_METHOD = "bootstrap-percentile"
_CHUNK = 200  # policy resamples counted at once (a chunk's draw counts fit in cache)


def ratio_ci(
    numerators: ArrayLike,
    denominators: ArrayLike,
    *,
    n_boot: int = 1000,
    seed: Seed = 0,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap CI for sum(numerators) / sum(denominators), resampling units.

    Units (rows) are drawn exactly as `bootstrap_mean_cis` draws them for the same seed.
    Every denominator must be positive. Collapses to the point when all unit ratios agree.
    """
    check_settings(n_boot, confidence)
    num = np.asarray(numerators, dtype=np.float64)
    den = np.asarray(denominators, dtype=np.float64)
    if num.ndim != 1 or num.shape != den.shape:
        raise ValueError(f"expected two 1-D samples of one length, got {num.shape}, {den.shape}")
    if num.size == 0:
        raise ValueError("cannot bootstrap an empty sample")
    if not (np.isfinite(num).all() and np.isfinite(den).all()) or not (den > 0).all():
        raise ValueError("numerators must be finite and denominators finite and positive")
    point = float(num.sum() / den.sum())
    unit = num / den
    if (unit == unit[0]).all():
        return point, point
    stats = np.empty(n_boot, dtype=np.float64)
    for start, idx in index_chunks(num.size, n_boot, seed):
        resampled = np.take(num, idx).sum(axis=1) / np.take(den, idx).sum(axis=1)
        stats[start : start + len(idx)] = resampled
    ci = percentile_interval(stats, confidence)
    assert ci is not None  # every resample has a positive denominator
    return ci


class RatioCounts(BaseModel):
    """One metric's per-response counts, and its value when the denominator is 0 (None:
    the metric is null there; finite, as every resampled value is)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    numerator: list[int]
    denominator: list[int]
    when_zero: float | None = Field(default=None, allow_inf_nan=False)


class Interval(BaseModel):
    model_config = ConfigDict(frozen=True)

    ci: tuple[float, float] | None
    n_resamples_valid: int


def _weight_chunks(n: int, resamples: int, random_state: int) -> Iterator[NDArray[np.int64]]:
    """How often each response is drawn in each resample, a chunk of resamples at a time
    (rows x n): memory stays bounded and Ctrl-C is seen between chunks."""
    for _, idx in index_chunks(n, resamples, random_state, max_rows=_CHUNK):
        yield draw_counts(idx, n)


def resample_weights(n: int, resamples: int, random_state: int) -> NDArray[np.int64]:
    """How often each response is drawn in each resample (resamples x n); the bootstrap
    itself reads a chunk at a time, never the whole matrix."""
    chunks = list(_weight_chunks(n, resamples, random_state))
    return np.concatenate(chunks) if chunks else np.zeros((0, n), dtype=np.int64)


def _resampled_values(counts: RatioCounts, weights: NDArray[np.int64]) -> NDArray[np.float64]:
    """The metric in every resample; NaN where it is null."""
    num = weights @ np.asarray(counts.numerator, dtype=np.int64)
    den = weights @ np.asarray(counts.denominator, dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)
    if counts.when_zero is not None:
        values = np.where(den > 0, values, counts.when_zero)
    return values.astype(np.float64)


def resampled_all(
    metrics: Mapping[str, RatioCounts], n: int, resamples: int, random_state: int
) -> dict[str, NDArray[np.float64]]:
    """Every metric in every resample (NaN where null), all on the same resamples."""
    out = {name: np.empty(resamples, dtype=np.float64) for name in metrics}
    start = 0
    for weights in _weight_chunks(n, resamples, random_state):
        stop = start + len(weights)
        for name, counts in metrics.items():
            out[name][start:stop] = _resampled_values(counts, weights)
        start = stop
    return out


def interval_of(values: NDArray[np.float64], confidence: float) -> Interval:
    """The percentile interval of the non-null resamples, and how many there are."""
    ci = percentile_interval(values, confidence, percent_scale=True)
    return Interval(ci=ci, n_resamples_valid=int(np.isfinite(values).sum()))


def bootstrap_intervals(
    metrics: Mapping[str, RatioCounts],
    *,
    resamples: int = 1000,
    random_state: int = 0,
    confidence: float = 0.95,
) -> dict[str, Interval]:
    """A percentile interval per metric, all metrics on the same resamples."""
    n = len(next(iter(metrics.values())).numerator) if metrics else 0
    if n == 0 or resamples == 0:
        return {name: Interval(ci=None, n_resamples_valid=0) for name in metrics}
    values = resampled_all(metrics, n, resamples, random_state)
    return {name: interval_of(values[name], confidence) for name in metrics}


def paired_delta_interval(
    a: RatioCounts,
    b: RatioCounts,
    *,
    resamples: int = 1000,
    random_state: int = 0,
    confidence: float = 0.95,
) -> Interval:
    """Interval of `metric(a) - metric(b)` with both policies on the same resamples of the
    same responses (a and b list responses in one order)."""
    if len(a.numerator) != len(b.numerator):
        raise ValueError("paired deltas need the same responses in both policies")
    n = len(a.numerator)
    if n == 0 or resamples == 0:
        return Interval(ci=None, n_resamples_valid=0)
    values = resampled_all({"a": a, "b": b}, n, resamples, random_state)
    return interval_of(values["a"] - values["b"], confidence)


__all__ = [
    "CI_METHOD",
    "Interval",
    "RatioCounts",
    "bootstrap_intervals",
    "interval_of",
    "paired_delta_interval",
    "ratio_ci",
    "resample_weights",
    "resampled_all",
]
