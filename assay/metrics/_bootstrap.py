"""Seeded, vectorised percentile bootstrap for sample means.

This is the estimator of `scipy.stats.bootstrap(..., method="percentile")` with the same
draws: for the same `numpy.random.Generator` both take `integers(0, n, (n_boot, n))` row
indices, and their CIs agree to ~1e-16 (tests/test_libraries_stats.py). It stays our
code so recorded CIs stay bit-identical and the ratio bootstrap can replay the same draws.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

Seed = int | Sequence[int] | np.random.SeedSequence | np.random.Generator
"""Anything `numpy.random.default_rng` accepts."""

# Upper bound on resampling indices drawn at once (int64: 8 MiB, and as much again for the
# values taken); larger jobs are chunked. The draws, and so the CIs, are the same whatever
# the bound (tests/test_force_pairs_columns.py), so it only sets a run's peak memory.
_MAX_CELLS = 1 << 20


def _check_settings(n_boot: int, confidence: float) -> None:
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 1:
        raise ValueError(f"n_boot must be a positive integer, got {n_boot!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")


def bootstrap_mean_cis(
    columns: ArrayLike,
    *,
    n_boot: int = 1000,
    seed: Seed = 0,
    confidence: float = 0.95,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Percentile bootstrap CIs for the mean of each column of an `(n, k)` sample.

    Rows are resampled with replacement, `n_boot` times; the *same* row draws are used for
    every column, so the columns' CIs come from one paired resampling. A 1-D input is
    treated as a single column. Returns `(lo, hi)`, each of shape `(k,)`.

    A column whose values are all equal (including any `n == 1` sample) gets a CI that
    collapses exactly to its mean. The result depends only on the data, `n_boot`,
    `confidence` and `seed`.
    """
    _check_settings(n_boot, confidence)
    x = np.asarray(columns, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, np.newaxis]
    if x.ndim != 2:
        raise ValueError(f"expected a 1-D or 2-D sample, got shape {x.shape}")
    n, k = x.shape
    if n == 0:
        raise ValueError("cannot bootstrap an empty sample")
    if not np.isfinite(x).all():
        raise ValueError("sample contains NaN or infinite values")

    point: NDArray[np.float64] = x.mean(axis=0)
    constant: NDArray[np.bool_] = (x == x[0]).all(axis=0)
    if constant.all():
        return point.copy(), point.copy()

    rng = np.random.default_rng(seed)
    cols = [np.ascontiguousarray(x[:, j]) for j in range(k)]
    means = np.empty((n_boot, k), dtype=np.float64)
    chunk = max(1, _MAX_CELLS // n)
    for start in range(0, n_boot, chunk):
        stop = min(n_boot, start + chunk)
        idx = rng.integers(0, n, size=(stop - start, n))
        for j in range(k):
            means[start:stop, j] = np.take(cols[j], idx).sum(axis=1)
    means /= n

    alpha = (1.0 - confidence) / 2.0
    bounds: NDArray[np.float64] = np.quantile(means, [alpha, 1.0 - alpha], axis=0)
    lo: NDArray[np.float64] = np.where(constant, point, bounds[0])
    hi: NDArray[np.float64] = np.where(constant, point, bounds[1])
    return lo, hi


def bootstrap_ci(
    values: ArrayLike,
    *,
    n_boot: int = 1000,
    seed: Seed = 0,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap CI `(lo, hi)` for the mean of a 1-D sample.

    Same resampling as `bootstrap_mean_cis` on one column. For `n == 1` or all-equal
    values the CI collapses to the mean.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"expected a 1-D sample, got shape {x.shape}")
    lo, hi = bootstrap_mean_cis(x, n_boot=n_boot, seed=seed, confidence=confidence)
    return float(lo[0]), float(hi[0])
