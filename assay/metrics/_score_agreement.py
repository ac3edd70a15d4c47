"""Agreement of numeric judgments (scores) with gold scores.

Point values come from scipy.stats (pearsonr, spearmanr, kendalltau) and numpy (MAE).
The bootstrap computes Pearson, Spearman (ranks from each resample's value counts) and
MAE for a whole stack of resamples at once (tests check these against scipy to 1e-12);
Kendall's tau calls scipy once a resample.
Pairs with a missing side (None / NaN) are left out; a correlation is None when fewer
than two pairs remain or either side is constant.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field

from assay.metrics._agreement_stats import Column
from assay.metrics._item_bootstrap import Interval, item_bootstrap_ci
from assay.metrics._resampling import Seed

NUMERIC_STATISTICS = ("pearson", "spearman", "kendall_tau", "mae")

Floats = NDArray[np.float64]


def paired_scores(scores: Column, gold: Column) -> tuple[Floats, Floats]:
    """Both score columns as floats, without pairs missing (None / NaN) on either side."""
    s = np.asarray(scores, dtype=np.float64)
    g = np.asarray(gold, dtype=np.float64)
    if s.shape != g.shape or s.ndim != 1:
        raise ValueError(f"expected two 1-D score sequences of one length: {s.shape}, {g.shape}")
    if np.isinf(s).any() or np.isinf(g).any():
        raise ValueError("scores must be finite (missing values: None or NaN)")
    keep = ~(np.isnan(s) | np.isnan(g))
    return s[keep], g[keep]


def _defined(s: Floats, g: Floats) -> bool:
    return len(s) >= 2 and bool(np.ptp(s) > 0) and bool(np.ptp(g) > 0)


def _scipy_statistic(name: str) -> Callable[[Floats, Floats], float | None]:
    def statistic(s: Floats, g: Floats) -> float | None:
        if not _defined(s, g):
            return None
        from scipy import stats

        function = {"pearson": stats.pearsonr, "spearman": stats.spearmanr}.get(
            name, stats.kendalltau
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = float(function(s, g).statistic)
        return value if np.isfinite(value) else None

    return statistic


def batched_pearson(s: Floats, g: Floats) -> Floats:
    """Pearson's r along the last axis of two stacks; NaN where a side is constant."""
    ds = s - s.mean(axis=-1, keepdims=True)
    dg = g - g.mean(axis=-1, keepdims=True)
    den = np.sqrt((ds * ds).sum(axis=-1) * (dg * dg).sum(axis=-1))
    with np.errstate(divide="ignore", invalid="ignore"):
        r = (ds * dg).sum(axis=-1) / den
    constant = (np.ptp(s, axis=-1) == 0) | (np.ptp(g, axis=-1) == 0)
    return np.where(constant, np.nan, np.clip(r, -1.0, 1.0))


def resampled_ranks(codes: NDArray[np.int64], idx: NDArray[np.int64]) -> Floats:
    """Average ranks within each resample `idx[b]` of items whose sorted value codes are `codes`.

    Equals `scipy.stats.rankdata(values[idx], axis=-1)` (ties get their mean rank), from
    one bincount of the value counts a resample instead of a sort.
    """
    k = int(codes.max(initial=-1)) + 1
    drawn = codes[idx]
    offsets = np.arange(len(idx))[:, np.newaxis] * k
    counts = np.bincount((drawn + offsets).ravel(), minlength=len(idx) * k).reshape(-1, k)
    mean_rank = np.cumsum(counts, axis=1) - (counts - 1) / 2.0
    ranks: Floats = np.take_along_axis(mean_rank, drawn, axis=1)
    return ranks


def _spearman_of_items(s: Floats, g: Floats) -> Callable[[NDArray[np.int64]], Floats]:
    """Batched Spearman's rho of resampled item indices (the bootstrap's fast path)."""
    s_codes = np.unique(s, return_inverse=True)[1].astype(np.int64)
    g_codes = np.unique(g, return_inverse=True)[1].astype(np.int64)
    return lambda idx: batched_pearson(resampled_ranks(s_codes, idx), resampled_ranks(g_codes, idx))


def batched_mae(s: Floats, g: Floats) -> Floats:
    """Mean absolute error along the last axis."""
    result: Floats = np.abs(s - g).mean(axis=-1)
    return result


class ScoreAgreement(BaseModel):
    """Numeric judgments against gold scores: correlations, MAE and their CIs."""

    model_config = ConfigDict(frozen=True)

    n: int = Field(description="Items with both a score and a gold score.")
    pearson: float | None
    spearman: float | None
    kendall_tau: float | None = Field(description="Kendall's tau-b (scipy's default).")
    mae: float | None = Field(description="Mean absolute error, in the scores' units.")
    ci: dict[str, Interval | None] = Field(
        default_factory=dict, description="statistic -> percentile bootstrap CI over items."
    )


def _bootstrap_plan(
    name: str, s: Floats, g: Floats
) -> tuple[Callable[..., Any], tuple[NDArray[Any], ...], bool]:
    """(statistic, item columns, batched?) for one statistic's bootstrap."""
    if name == "spearman":  # resampled by item index: ranks come from value counts
        return _spearman_of_items(s, g), (np.arange(len(s)),), True
    if name == "kendall_tau":
        return _scipy_statistic(name), (s, g), False
    return {"pearson": batched_pearson, "mae": batched_mae}[name], (s, g), True


def agreement_with_gold_scores(
    scores: Column,
    gold: Column,
    *,
    ci_for: Sequence[str] = NUMERIC_STATISTICS,
    n_boot: int = 0,
    seed: Seed = 0,
    confidence: float = 0.95,
) -> ScoreAgreement:
    """Pearson, Spearman, Kendall's tau and MAE of scores against gold scores.

    `n_boot > 0` adds percentile CIs from `n_boot` seeded item resamples for the
    statistics named in `ci_for` (Kendall's tau costs one scipy call a resample, the
    others are batched: leave it out on large sets).
    """
    unknown = set(ci_for) - set(NUMERIC_STATISTICS)
    if unknown:
        raise ValueError(f"unknown statistics {sorted(unknown)}; known: {NUMERIC_STATISTICS}")
    s, g = paired_scores(scores, gold)
    values: dict[str, float | None] = {
        name: _scipy_statistic(name)(s, g) for name in NUMERIC_STATISTICS[:3]
    }
    values["mae"] = float(np.abs(s - g).mean()) if len(s) else None
    ci: dict[str, Interval | None] = {}
    for name in ci_for if n_boot else ():
        function, columns, batched = _bootstrap_plan(name, s, g)
        ci[name] = item_bootstrap_ci(
            function, *columns, n_boot=n_boot, seed=seed, confidence=confidence, batched=batched
        )
    return ScoreAgreement(n=len(s), ci=ci, **values)
