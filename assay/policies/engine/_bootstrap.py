"""Bootstrap intervals of pooled ratio metrics (§2.7.7): resample responses with
replacement, recompute every metric from the pooled counts of each resample.

Each metric is given as per-response numerators and denominators (a response's share of
the pooled counts), so a resample's value is `sum(num[idx]) / sum(den[idx])`. Draws come
from numpy's PCG64 with the recorded `random_state`; one index matrix serves every
metric, and every policy in a paired comparison, so their deltas are paired. Resamples
where a metric is null (zero denominator) are dropped and counted.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict

from assay._interrupts import check_cancelled

CI_METHOD = "bootstrap-percentile"
_CHUNK = 200  # resamples summed at once (memory ~ CHUNK x responses weights)
_MAX_CELLS = 1 << 20  # ... and no more weights than this at once, however many responses


class RatioCounts(BaseModel):
    """One metric's per-response counts, and its value when the denominator is 0 (None:
    the metric is null there)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    numerator: list[int]
    denominator: list[int]
    when_zero: float | None = None


class Interval(BaseModel):
    model_config = ConfigDict(frozen=True)

    ci: tuple[float, float] | None
    n_resamples_valid: int


def weight_chunks(n: int, resamples: int, random_state: int) -> Iterator[NDArray[np.int64]]:
    """How often each response is drawn in each resample, a chunk of resamples at a time
    (rows x n, at most ~1M cells): memory stays bounded and Ctrl-C is seen between
    chunks. The draws do not depend on the chunking (PCG64 keeps its stream)."""
    rng = np.random.Generator(np.random.PCG64(random_state))
    rows = max(1, min(_CHUNK, _MAX_CELLS // max(n, 1)))
    for start in range(0, resamples, rows):
        check_cancelled()  # a worker thread of `apply --workers`: the main one was stopped
        idx = rng.integers(0, n, size=(min(start + rows, resamples) - start, n))
        weights = np.empty(idx.shape, dtype=np.int64)
        for row, draw in enumerate(idx):
            weights[row] = np.bincount(draw, minlength=n)
        yield weights


def resample_weights(n: int, resamples: int, random_state: int) -> NDArray[np.int64]:
    """How often each response is drawn in each resample (resamples x n); the bootstrap
    itself reads `weight_chunks`, which never holds the whole matrix."""
    chunks = list(weight_chunks(n, resamples, random_state))
    return np.concatenate(chunks) if chunks else np.zeros((0, n), dtype=np.int64)


def _ratio_values(
    counts: RatioCounts, num: NDArray[np.int64], den: NDArray[np.int64]
) -> NDArray[np.float64]:
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)
    if counts.when_zero is not None:
        values = np.where(den > 0, values, counts.when_zero)
    return values.astype(np.float64)


def resampled_values(counts: RatioCounts, weights: NDArray[np.int64]) -> NDArray[np.float64]:
    """The metric in every resample; NaN where it is null."""
    num = weights @ np.asarray(counts.numerator, dtype=np.int64)
    den = weights @ np.asarray(counts.denominator, dtype=np.int64)
    return _ratio_values(counts, num, den)


def resampled_all(
    metrics: Mapping[str, RatioCounts], n: int, resamples: int, random_state: int
) -> dict[str, NDArray[np.float64]]:
    """`resampled_values` of every metric on the same resamples, chunk by chunk."""
    out = {name: np.empty(resamples, dtype=np.float64) for name in metrics}
    start = 0
    for weights in weight_chunks(n, resamples, random_state):
        stop = start + len(weights)
        for name, counts in metrics.items():
            out[name][start:stop] = resampled_values(counts, weights)
        start = stop
    return out


def percentile_interval(values: NDArray[np.float64], confidence: float) -> Interval:
    """2.5th / 97.5th percentiles (linear interpolation) of the non-null resamples."""
    valid = values[~np.isnan(values)]
    if valid.size == 0:
        return Interval(ci=None, n_resamples_valid=0)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(valid, [tail, 100 - tail])
    return Interval(ci=(float(low), float(high)), n_resamples_valid=int(valid.size))


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
    return {name: percentile_interval(values[name], confidence) for name in metrics}


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
    return percentile_interval(values["a"] - values["b"], confidence)


__all__ = [
    "CI_METHOD",
    "Interval",
    "RatioCounts",
    "bootstrap_intervals",
    "paired_delta_interval",
    "percentile_interval",
    "resample_weights",
    "resampled_all",
    "resampled_values",
    "weight_chunks",
]
