"""Per-item statistics a paired bootstrap can evaluate on any subset of the items.

Evaluated by `_paired_draws.resample_statistics`: one draw of the `n` items serves every
statistic, each on its own mask (a judge's scored items, or the items two judges share):
in a resample, the drawn items inside the mask. With a mask of every item, a mean gets
exactly the resamples `paired_compare` and `bootstrap_mean_cis` use for the same seed.

- `SumStatistic`: `finish` of the sums of per-item features over those items. Means,
  ratios of sums (factuality micro), everything computed from a confusion matrix
  (accuracy, balanced accuracy, macro-F1, Cohen's kappa; of ranks: linear and quadratic
  kappa, ordinal alpha, MAE in ranks), Pearson's r
  (centred moments) and Spearman's rho of few distinct values (the joint table of value
  codes: average ranks from its margins).
- `IndexStatistic`: recomputed from the drawn items a chunk at once (Spearman's rho of
  many distinct values: ranks from resampled value counts, no per-resample sort).

No Python loop runs over resamples or items. Point values are the same functions on the
items as they are; tests check them against scikit-learn and scipy.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from assay.metrics._agreement_stats import confusion_statistics
from assay.metrics._ordinal import ordinal_statistics

Floats: TypeAlias = NDArray[np.float64]
Mask: TypeAlias = NDArray[np.bool_]
Finish: TypeAlias = Callable[[Floats], Floats]
"""`(b, m)` feature sums -> `(b,)` statistic values (NaN where undefined)."""

MAX_JOINT_CODES = 4096
"""Spearman from the joint value table up to this many (score, gold) value pairs."""


Part: TypeAlias = tuple[Hashable, Any]
"""(family, features): an `(n, m)` array or scipy sparse matrix of per-item features.
Every part with the same family holds the same features, summed once a chunk (a judge's
confusion table serves four statistics; the count column and gold moments serve all)."""


@dataclass(frozen=True, eq=False)
class SumStatistic:
    """`finish` of the sums of its parts' features (columns in the parts' order)."""

    parts: tuple[Part, ...]
    finish: Finish


@dataclass(frozen=True, eq=False)
class IndexStatistic:
    """A statistic recomputed from drawn items: `batched(idx, inside, *columns) -> (b,)`
    with `idx` the `(b, n)` drawn item indices and `inside` the mask (items outside it
    do not count)."""

    columns: tuple[NDArray[Any], ...]
    batched: Callable[..., Floats]


PairedStatistic: TypeAlias = SumStatistic | IndexStatistic


def _ratio_finish(sums: Floats) -> Floats:
    positive = sums[:, 1] > 0
    return np.where(positive, sums[:, 0] / np.where(positive, sums[:, 1], 1.0), np.nan)


EXACT = 2**24
"""Sums of integers below this are exact in float32 (summed at twice float64's speed)."""


def on_grid(values: NDArray[Any], square: bool = False) -> tuple[Floats, int] | None:
    """(values x step, step) when the values are multiples of 1, 1/2, 1/4 or 1/10 (Likert
    points, averaged raters) small enough that any resample's sum of them (of their
    squares with `square`) stays exact in float32; NaN counts as 0. None otherwise."""
    present = np.nan_to_num(np.asarray(values, dtype=np.float64))
    for step in (1, 2, 4, 10):
        scaled = present * step
        largest = float(np.abs(scaled).max(initial=0))
        if (largest**2 if square else largest) * len(scaled) >= EXACT:
            return None
        if np.array_equal(scaled, np.round(scaled)):
            return scaled, step
    return None


def _column(values: NDArray[Any]) -> Floats:
    return np.asarray(values, dtype=np.float64).reshape(-1, 1)


def ratio_of(
    numerators: NDArray[Any], denominators: NDArray[Any], family: Hashable
) -> SumStatistic:
    """sum(numerators) / sum(denominators) over the items (NaN when the denominator is 0)."""
    parts = ((family, _column(numerators)), ((family, "denominator"), _column(denominators)))
    return SumStatistic(parts, _ratio_finish)


def mean_of(values: NDArray[Any], family: Hashable) -> SumStatistic:
    """The mean of a per-item outcome (0/1 correct, violation, margin, F(r), |error|);
    outcomes on a grid (|error| of Likert scores) are summed as exact integers."""
    count = (("count", len(values)), np.ones((len(values), 1)))
    grid = on_grid(values)
    if grid is None:
        return SumStatistic(((family, _column(values)), count), _ratio_finish)
    scaled, step = grid

    def finish(sums: Floats) -> Floats:
        return _ratio_finish(sums) / step

    return SumStatistic(((family, _column(scaled)), count), finish)


def one_hot(codes: NDArray[np.int64], width: int) -> Any:
    """`(n, width)` sparse rows with a single 1 at column `codes[i]`."""
    n = len(codes)
    return sparse.csr_matrix((np.ones(n), (np.arange(n), codes)), shape=(n, width))


def confusion_statistic(
    name: str, gold: NDArray[np.int64], pred: NDArray[np.int64], k: int, family: Hashable
) -> SumStatistic:
    """One of `confusion_statistics` ("accuracy", "balanced_accuracy", "macro_f1",
    "cohen_kappa", "quadratic_kappa") of label codes against gold codes in `range(k)`."""

    def finish(sums: Floats) -> Floats:
        return confusion_statistics(sums.reshape(-1, k, k))[name]

    return SumStatistic(((family, one_hot(gold * k + pred, k * k)),), finish)


def ordinal_statistic(
    name: str, gold: NDArray[np.int64], pred: NDArray[np.int64], k: int, family: Hashable
) -> SumStatistic:
    """One of `_ordinal.ordinal_statistics` ("linear_kappa", "quadratic_kappa",
    "ordinal_alpha", "mae_rank") of rank codes against gold ranks in `range(k)`: like
    `confusion_statistic`, from the resampled confusion table."""

    def finish(sums: Floats) -> Floats:
        return ordinal_statistics(sums.reshape(-1, k, k))[name]

    return SumStatistic(((family, one_hot(gold * k + pred, k * k)),), finish)


def _binary_balanced(sums: Floats) -> Floats:
    """(recall + specificity) / 2 of [gold, pred] 2x2 sums; NaN unless both classes occur."""
    tn, fp, fn, tp = sums[:, 0], sums[:, 1], sums[:, 2], sums[:, 3]
    with np.errstate(divide="ignore", invalid="ignore"):
        value = (tp / (tp + fn) + tn / (tn + fp)) / 2
    return np.where((tp + fn > 0) & (tn + fp > 0), value, np.nan)


def binary_balanced_accuracy(gold: Mask, pred: Mask, family: Hashable) -> SumStatistic:
    """Balanced accuracy of binary predictions, undefined (NaN) unless the gold holds
    both classes: the definition of the verifier gold metrics (`gold_metrics`)."""
    codes = gold.astype(np.int64) * 2 + pred.astype(np.int64)
    return SumStatistic(((family, one_hot(codes, 4)),), _binary_balanced)


def _correlation(
    n: Floats, sx: Floats, sy: Floats, sxx: Floats, syy: Floats, sxy: Floats
) -> Floats:
    """Pearson's r from sums (count, x, y, x², y², xy); NaN where a side is constant."""
    with np.errstate(divide="ignore", invalid="ignore"):
        cov = sxy - sx * sy / n
        var_x, var_y = sxx - sx * sx / n, syy - sy * sy / n
        r = cov / np.sqrt(var_x * var_y)
    scale = np.maximum(sxx, syy) * 1e-12
    return np.where((var_x > scale) & (var_y > scale), np.clip(r, -1.0, 1.0), np.nan)


def _pearson_finish(sums: Floats) -> Floats:
    """Sums ordered x, x², xy (the judge's part), then 1, y, y² (the gold part)."""
    sx, sxx, sxy, n, sy, syy = (sums[:, i] for i in range(6))
    return _correlation(n, sx, sy, sxx, syy, sxy)


def _centred(values: Floats) -> Floats:
    """Values less their mean (Pearson's r ignores shifts; sums lose less precision);
    NaN, outside every mask, becomes 0."""
    present = ~np.isnan(values)
    centre = values[present].mean() if present.any() else 0.0
    return np.where(present, values - centre, 0.0)


def _moments(scores: Floats, gold: Floats) -> tuple[Floats, Floats, str]:
    """x, y for the moment sums and how they were made: exact small integers when both
    sides are on a grid (`on_grid`), else centred floats. Either way y depends on the
    gold alone."""
    x, y = on_grid(scores, square=True), on_grid(gold, square=True)
    if x is not None and y is not None and _cross_exact(x[0], y[0]):
        return x[0], y[0], "grid"
    return _centred(scores), _centred(gold), "centred"


def _cross_exact(x: Floats, y: Floats) -> bool:
    """Every resample's sum of x*y stays exact in float32."""
    return float(np.abs(x).max(initial=0) * np.abs(y).max(initial=0)) * len(x) < EXACT


def pearson_of(
    scores: Floats, gold: Floats, family: Hashable, gold_family: Hashable | None = None
) -> SumStatistic:
    """Pearson's r from moment sums. Judges scored against the same gold may pass the
    same `gold_family`: the gold's moments are then summed once for all of them."""
    x, y, form = _moments(scores, gold)
    mine = np.column_stack([x, x * x, x * y])
    theirs = np.column_stack([np.ones(len(y)), y, y * y])
    shared = (family, "gold") if gold_family is None else (gold_family, "gold moments", form)
    return SumStatistic(((family, mine), (shared, theirs)), _pearson_finish)


def _mean_ranks(counts: Floats) -> Floats:
    """Average 1-based rank of each value code from its count (ties share their mean)."""
    return np.cumsum(counts, axis=-1) - (counts - 1.0) / 2.0


def _spearman_finish(kx: int, ky: int) -> Finish:
    def finish(sums: Floats) -> Floats:
        table = sums.reshape(-1, kx, ky)
        nx, ny = table.sum(axis=2), table.sum(axis=1)
        total = nx.sum(axis=1, keepdims=True)
        centre = (total + 1.0) / 2.0
        rx, ry = _mean_ranks(nx) - centre, _mean_ranks(ny) - centre
        cov = np.einsum("bc,bcd,bd->b", rx, table, ry)
        var_x, var_y = (nx * rx * rx).sum(axis=1), (ny * ry * ry).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = cov / np.sqrt(var_x * var_y)
        return np.where((var_x > 0) & (var_y > 0), np.clip(r, -1.0, 1.0), np.nan)

    return finish


def _value_codes(values: Floats) -> tuple[NDArray[np.int64], int]:
    """Codes of the values in sorted order (NaN, outside every mask, gets code 0)."""
    present = ~np.isnan(values)
    uniques, inverse = np.unique(values[present], return_inverse=True)
    codes = np.zeros(len(values), dtype=np.int64)
    codes[present] = inverse.ravel()
    return codes, max(len(uniques), 1)


def spearman_of(scores: Floats, gold: Floats, family: Hashable) -> PairedStatistic:
    """Spearman's rho: from the joint table of value codes when the scores and the gold
    take few distinct values (Likert scales), else from resampled ranks."""
    cx, kx = _value_codes(scores)
    cy, ky = _value_codes(gold)
    if kx * ky <= MAX_JOINT_CODES:
        table = one_hot(cx * ky + cy, kx * ky)
        return SumStatistic(((family, table),), _spearman_finish(kx, ky))
    return IndexStatistic((cx, cy), _ranked_spearman)


def _drawn_ranks(codes: NDArray[np.int64], idx: NDArray[np.int64], inside: Mask) -> Floats:
    """Average ranks of the drawn items inside the mask, within each resample."""
    k = int(codes.max(initial=0)) + 2  # the last code: items outside the mask
    drawn = np.where(inside, codes, k - 1)[idx]
    offsets = np.arange(len(idx))[:, np.newaxis] * k
    counts = np.bincount((drawn + offsets).ravel(), minlength=len(idx) * k).reshape(-1, k)
    ranks: Floats = np.take_along_axis(_mean_ranks(counts.astype(np.float64)), drawn, axis=1)
    return ranks


def _ranked_spearman(
    idx: NDArray[np.int64], inside: Mask, cx: NDArray[np.int64], cy: NDArray[np.int64]
) -> Floats:
    w = inside[idx].astype(np.float64)
    x, y = _drawn_ranks(cx, idx, inside) * w, _drawn_ranks(cy, idx, inside) * w
    return _correlation(
        w.sum(axis=1), x.sum(axis=1), y.sum(axis=1),
        (x * x).sum(axis=1), (y * y).sum(axis=1), (x * y).sum(axis=1),
    )  # fmt: skip
