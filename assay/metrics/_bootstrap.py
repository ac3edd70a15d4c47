"""Seeded, vectorised percentile bootstrap for sample means.

This is the estimator of `scipy.stats.bootstrap(..., method="percentile")` with the same
draws (`_resampling.index_chunks`, `integers(0, n, (n_boot, n))` row indices for the same
`numpy.random.Generator`), and their CIs agree to ~1e-16 (tests/test_libraries_stats.py).
It stays our code so recorded CIs stay bit-identical and the other bootstraps can replay
the same draws.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay.metrics._resampling import Seed, check_settings, percentile_bounds, resampled_means


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
    check_settings(n_boot, confidence)
    x = np.asarray(columns, dtype=np.float64)
    if x.ndim == 1:
        x = x[:, np.newaxis]
    if x.ndim != 2:
        raise ValueError(f"expected a 1-D or 2-D sample, got shape {x.shape}")
    n = x.shape[0]
    if n == 0:
        raise ValueError("cannot bootstrap an empty sample")
    if not np.isfinite(x).all():
        raise ValueError("sample contains NaN or infinite values")

    point: NDArray[np.float64] = x.mean(axis=0)
    constant: NDArray[np.bool_] = (x == x[0]).all(axis=0)
    if constant.all():
        return point.copy(), point.copy()

    bounds = percentile_bounds(resampled_means(x, n_boot, seed), confidence)
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
