"""Percentile bootstrap CIs of any agreement statistic, resampling items.

Row draws come from `_resampling.index_chunks` (one numpy index matrix a chunk), so the
same seed gives the same resampled items as the other bootstrap helpers. A *batched*
statistic takes the resampled columns with a leading resample axis and returns one value
a resample (no Python loop at all); any other statistic is called once a resample on
numpy-indexed columns (a loop over resamples, never over items).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from assay.metrics._resampling import Seed, check_settings, index_chunks, percentile_interval

Interval = tuple[float, float]
ItemStatistic = Callable[..., float | None]
"""Takes the item columns (same length along axis 0); None when undefined."""
BatchedStatistic = Callable[..., NDArray[np.float64]]
"""Takes the columns with shape `(resamples, n, ...)`; NaN where undefined."""
BatchedStatistics = Callable[..., dict[str, NDArray[np.float64]]]
"""Like `BatchedStatistic`, several statistics from one pass: name -> values."""


def _columns(columns: tuple[ArrayLike, ...]) -> list[NDArray[Any]]:
    arrays = [np.asarray(c) for c in columns]
    if not arrays:
        raise ValueError("give at least one item column")
    lengths = {len(a) for a in arrays}
    if len(lengths) != 1:
        raise ValueError(f"item columns differ in length: {sorted(lengths)}")
    return arrays


def _as_float(value: float | None) -> float:
    return float("nan") if value is None else float(value)


def item_bootstrap_ci(
    statistic: ItemStatistic | BatchedStatistic,
    *columns: ArrayLike,
    n_boot: int = 1000,
    seed: Seed = 0,
    confidence: float = 0.95,
    batched: bool = False,
) -> Interval | None:
    """Percentile CI `(lo, hi)` of `statistic(*columns)` over items resampled with replacement.

    All columns are resampled with the same item indices (paired). Resamples where the
    statistic is undefined (None / NaN) are left out of the percentiles. None when
    `n_boot == 0`, there are no items, or no resample gives a defined value.
    """
    check_settings(n_boot, confidence, allow_zero=True)
    arrays = _columns(columns)
    n = len(arrays[0])
    if n_boot == 0 or n == 0:
        return None
    stats = np.empty(n_boot, dtype=np.float64)
    for start, idx in index_chunks(n, n_boot, seed):
        if batched:
            stats[start : start + len(idx)] = statistic(*(a[idx] for a in arrays))
        else:
            for row, draw in enumerate(idx):
                stats[start + row] = _as_float(statistic(*(a[draw] for a in arrays)))  # type: ignore[arg-type]
    return percentile_interval(stats, confidence)


def item_bootstrap_cis(
    statistics: BatchedStatistics,
    *columns: ArrayLike,
    n_boot: int = 1000,
    seed: Seed = 0,
    confidence: float = 0.95,
) -> dict[str, Interval | None]:
    """Percentile CIs of several batched statistics computed from the same resamples.

    One call of `statistics` a chunk of resamples (e.g. one stack of confusion matrices
    for every categorical statistic). Same draws as `item_bootstrap_ci` with `batched`.
    An empty dict when `n_boot == 0` or there are no items.
    """
    check_settings(n_boot, confidence, allow_zero=True)
    arrays = _columns(columns)
    n = len(arrays[0])
    if n_boot == 0 or n == 0:
        return {}
    collected: dict[str, NDArray[np.float64]] = {}
    for start, idx in index_chunks(n, n_boot, seed):
        for name, values in statistics(*(a[idx] for a in arrays)).items():
            collected.setdefault(name, np.empty(n_boot))[start : start + len(idx)] = values
    return {name: percentile_interval(values, confidence) for name, values in collected.items()}
