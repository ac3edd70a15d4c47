"""The project's one bootstrap: seeded row draws, their counts, and percentile intervals.

Every bootstrap in assay draws here: the metrics' CIs of means, ratios, agreement and
correlation statistics, the paired comparisons, and the policies' response-resampled
metric intervals. A resample is `integers(0, n, n)` row indices from
`numpy.random.default_rng(seed)` (for an integer seed the generator is PCG64 seeded as
`PCG64(seed)`), exactly as `scipy.stats.bootstrap` draws them, so with one seed and row
count every statistic comes from the very same resamples. Draws go a chunk of rows at a
time (at most `_MAX_CELLS` indices) so that memory stays bounded and a cancelled worker
stops between chunks; PCG64 keeps its stream across chunks, so the draws, and every
interval, do not depend on the chunking (tests/test_force_pairs_columns.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
from numpy.typing import NDArray

from assay._interrupts import check_cancelled

Seed = int | Sequence[int] | np.random.SeedSequence | np.random.Generator
"""Anything `numpy.random.default_rng` accepts."""

# Upper bound on resampling indices drawn at once (int64: 8 MiB, and as much again for the
# values taken); larger jobs are chunked. The draws, and so the CIs, are the same whatever
# the bound, so it only sets a run's peak memory.
_MAX_CELLS = 1 << 20


def check_settings(n_boot: int, confidence: float, *, allow_zero: bool = False) -> None:
    """The one check of a resample count and a confidence level; `allow_zero` where 0
    resamples means "no interval"."""
    least, kind = (0, "non-negative") if allow_zero else (1, "positive")
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < least:
        raise ValueError(f"n_boot must be a {kind} integer, got {n_boot!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")


def index_chunks(
    n: int, n_boot: int, seed: Seed, *, max_rows: int | None = None, compact: bool = False
) -> Iterator[tuple[int, NDArray[np.int64]]]:
    """`(first resample, row indices)` for each chunk of the `n_boot` resamples of `n`
    rows; `max_rows` caps a chunk further (the draws stay the same). `compact`: int32
    indices, the very same values (below 2**32 numpy draws int64 and int32 bounded
    integers from the same 32-bit stream) in half the time and memory, for callers that
    only index with them (typed int64 for them all the same)."""
    rng = np.random.default_rng(seed)
    chunk = max(1, _MAX_CELLS // max(n, 1))
    if max_rows is not None:
        chunk = min(chunk, max_rows)
    dtype = np.int32 if compact and n < 2**31 else np.int64
    for start in range(0, n_boot, chunk):
        check_cancelled()  # a worker thread of `apply --workers`: the main one was stopped
        stop = min(n_boot, start + chunk)
        yield start, rng.integers(0, n, size=(stop - start, n), dtype=dtype)


def draw_counts(idx: NDArray[np.int64], n: int, *, by_item: bool = False) -> NDArray[np.int64]:
    """How often each of the `n` rows was drawn in each resample of a chunk: `(b, n)`,
    or `(n, b)` with `by_item` (items along the rows, as a sparse product wants them).
    Resample by resample for `(b, n)`: a small count array a row stays in cache, which
    one bincount of the whole chunk does not for thousands of rows."""
    b = idx.shape[0]
    if by_item:
        cells = idx * b + np.arange(b, dtype=np.int64)[:, np.newaxis]
        return np.bincount(cells.ravel(), minlength=n * b).reshape(n, b)
    counts = np.empty((b, n), dtype=np.int64)
    for row, draw in enumerate(idx):
        counts[row] = np.bincount(draw, minlength=n)
    return counts


def resampled_means(sample: NDArray[np.float64], n_boot: int, seed: Seed) -> NDArray[np.float64]:
    """`(n_boot, k)` column means of every resample of an `(n, k)` sample, every column on
    the same row draws."""
    n, k = sample.shape
    columns = [np.ascontiguousarray(sample[:, j]) for j in range(k)]
    means = np.empty((n_boot, k), dtype=np.float64)
    for start, idx in index_chunks(n, n_boot, seed):
        stop = start + idx.shape[0]
        for j, column in enumerate(columns):
            means[start:stop, j] = np.take(column, idx).sum(axis=1)
    means /= n
    return means


def _levels(confidence: float, percent_scale: bool) -> list[float]:
    if percent_scale:  # np.percentile(x, [t, 100 - t]) divides by 100 itself
        tail = (1 - confidence) / 2 * 100
        return [tail / 100, (100 - tail) / 100]
    alpha = (1.0 - confidence) / 2.0
    return [alpha, 1.0 - alpha]


def percentile_bounds(
    values: NDArray[np.float64], confidence: float, *, percent_scale: bool = False
) -> NDArray[np.float64]:
    """`[low, high]` percentiles (linear interpolation) along axis 0 of finite values: the
    one place an interval's levels and quantiles are computed. `percent_scale`: the levels
    computed in percent, as the policies' intervals always were (`np.percentile`; for
    some confidences, 0.68, they differ from the fractions in the last bit, and recorded
    intervals stay bit-identical)."""
    bounds: NDArray[np.float64] = np.quantile(values, _levels(confidence, percent_scale), axis=0)
    return bounds


def percentile_interval(
    stats: NDArray[np.float64], confidence: float, *, percent_scale: bool = False
) -> tuple[float, float] | None:
    """Percentile CI of the finite resampled statistics; None when none is finite."""
    finite = stats[np.isfinite(stats)]
    if finite.size == 0:
        return None
    lo, hi = percentile_bounds(finite, confidence, percent_scale=percent_scale)
    return float(lo), float(hi)


__all__ = [
    "Seed",
    "check_settings",
    "draw_counts",
    "index_chunks",
    "percentile_bounds",
    "percentile_interval",
    "resampled_means",
]
