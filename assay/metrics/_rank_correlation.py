"""Spearman's rank correlation with average ranks for ties, and its bootstrap CI."""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay.metrics._resampling import Seed, index_chunks, percentile_interval


def _average_ranks(a: NDArray[np.float64]) -> NDArray[np.float64]:
    """1-based ranks of each row of a 2-D array; tied values get the mean of their ranks."""
    m, n = a.shape
    order = np.argsort(a, axis=1, kind="stable")
    s = np.take_along_axis(a, order, axis=1)
    pos = np.broadcast_to(np.arange(n), (m, n))
    start = np.ones((m, n), dtype=bool)
    start[:, 1:] = s[:, 1:] != s[:, :-1]
    end = np.ones((m, n), dtype=bool)
    end[:, :-1] = start[:, 1:]
    first = np.maximum.accumulate(np.where(start, pos, 0), axis=1)
    last = np.minimum.accumulate(np.where(end, pos, n - 1)[:, ::-1], axis=1)[:, ::-1]
    avg = (first + last) / 2.0 + 1.0
    ranks = np.empty((m, n), dtype=np.float64)
    np.put_along_axis(ranks, order, avg, axis=1)
    return ranks


def _spearman_rows(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
    """Spearman's rho of each row pair (Pearson on average ranks); NaN for a constant row."""
    rx = _average_ranks(x)
    ry = _average_ranks(y)
    rx -= rx.mean(axis=1, keepdims=True)
    ry -= ry.mean(axis=1, keepdims=True)
    num = (rx * ry).sum(axis=1)
    den = np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        rho: NDArray[np.float64] = np.where(den > 0, num / den, np.nan)
    return np.clip(rho, -1.0, 1.0)


def average_ranks(values: ArrayLike) -> NDArray[np.float64]:
    """1-based ranks of a 1-D sample, ties sharing the mean of their ranks."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 1 or not np.isfinite(x).all():
        raise ValueError("expected a finite 1-D sample")
    ranks: NDArray[np.float64] = _average_ranks(x[np.newaxis, :])[0]
    return ranks


def spearman(x: ArrayLike, y: ArrayLike) -> float | None:
    """Spearman's rank correlation with average ranks for ties (Pearson's r of the ranks).

    None when there are fewer than 2 pairs or either sample is constant.
    """
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"expected two 1-D samples of one length, got {a.shape}, {b.shape}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("samples contain NaN or infinite values")
    if a.size < 2:
        return None
    rho = float(_spearman_rows(a[np.newaxis, :], b[np.newaxis, :])[0])
    return None if math.isnan(rho) else rho


def spearman_ci(
    x: NDArray[np.float64], y: NDArray[np.float64], n_boot: int, seed: Seed, confidence: float
) -> tuple[tuple[float, float] | None, int]:
    """Percentile CI from resampled pairs, and how many resamples were degenerate (NaN)."""
    stats = np.empty(n_boot, dtype=np.float64)
    for start, idx in index_chunks(x.size, n_boot, seed):
        stats[start : start + len(idx)] = _spearman_rows(np.take(x, idx), np.take(y, idx))
    return percentile_interval(stats, confidence), int(np.isnan(stats).sum())
