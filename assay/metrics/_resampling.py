"""Percentile bootstrap for statistics that are not means (ratios of sums, correlations).

The row draws are those of `bootstrap_mean_cis` (same generator, same chunking): with the
same seed a ratio's or a correlation's CI comes from the very resamples that gave the
means' CIs of the same row.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay.metrics import _bootstrap
from assay.metrics._bootstrap import Seed


def index_chunks(n: int, n_boot: int, seed: Seed) -> Iterator[tuple[int, NDArray[np.int64]]]:
    """`(first resample, row indices)` for each chunk of the `n_boot` resamples of `n` rows."""
    rng = np.random.default_rng(seed)
    chunk = max(1, _bootstrap._MAX_CELLS // n)
    for start in range(0, n_boot, chunk):
        stop = min(n_boot, start + chunk)
        yield start, rng.integers(0, n, size=(stop - start, n))


def percentile_interval(
    stats: NDArray[np.float64], confidence: float
) -> tuple[float, float] | None:
    """Percentile CI of the finite resampled statistics; None when none is finite."""
    alpha = (1.0 - confidence) / 2.0
    finite = stats[np.isfinite(stats)]
    if finite.size == 0:
        return None
    lo, hi = np.quantile(finite, [alpha, 1.0 - alpha])
    return float(lo), float(hi)


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
    _bootstrap._check_settings(n_boot, confidence)
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
