"""Paired bootstrap of per-item statistics that are not plain means, all judges at once.

Every statistic of a comparison is evaluated on the *same* resampled items: the row draws
of `_resampling.index_chunks` (so a mean gets exactly the resamples `paired_compare` and
`bootstrap_mean_cis` give it for the same seed and item count). Two kinds of statistic:

- `SumStatistic`: `finish(sum_i w_i * features_i)` where `w_i` is how often item i was
  drawn. Means, ratios of sums (factuality micro) and everything computed from a
  confusion matrix (accuracy, balanced accuracy, macro-F1, Cohen's kappa) are of this
  kind. A chunk of resamples becomes one `(b, n)` matrix of draw counts and every
  statistic's sums come from one sparse product with the features of all of them.
- `IndexStatistic`: recomputed from the drawn items' columns, a whole chunk at once
  (Pearson's r; Spearman's rho from resampled value counts, no per-resample sort).

No Python loop runs over resamples or items. Point values are the same functions on
the items as they are (one "resample" drawing every item once); tests check them against
scikit-learn and scipy.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeAlias, TypeVar

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from assay.metrics._agreement_stats import confusion_statistics
from assay.metrics._pooling import BootSettings
from assay.metrics._resampling import index_chunks
from assay.metrics._score_agreement import batched_pearson, resampled_ranks

Floats: TypeAlias = NDArray[np.float64]
Finish: TypeAlias = Callable[[Floats], Floats]
"""`(b, m)` weighted feature sums -> `(b,)` statistic values (NaN where undefined)."""

_Key = TypeVar("_Key", bound=Hashable)


@dataclass(frozen=True, eq=False)
class SumStatistic:
    """A statistic of weighted per-item feature sums. Statistics of one `family` share
    their `features` (an `(n, m)` array or scipy sparse matrix): summed once a chunk."""

    family: Hashable
    features: Any
    finish: Finish

    def restrict(self, mask: NDArray[np.bool_]) -> SumStatistic:
        return replace(self, features=self.features[mask])


@dataclass(frozen=True, eq=False)
class IndexStatistic:
    """A statistic recomputed from drawn items: `batched(idx, *columns) -> (b,)` where
    `idx` is `(b, n)` item indices and `columns` the items' values."""

    columns: tuple[NDArray[Any], ...]
    batched: Callable[..., Floats]

    def restrict(self, mask: NDArray[np.bool_]) -> IndexStatistic:
        return replace(self, columns=tuple(c[mask] for c in self.columns))


PairedStatistic: TypeAlias = SumStatistic | IndexStatistic


def _ratio_finish(sums: Floats) -> Floats:
    positive = sums[:, 1] > 0
    return np.where(positive, sums[:, 0] / np.where(positive, sums[:, 1], 1.0), np.nan)


def ratio_of(
    numerators: NDArray[Any], denominators: NDArray[Any], family: Hashable
) -> SumStatistic:
    """sum(numerators) / sum(denominators) over the items (NaN when the denominator is 0)."""
    features = np.column_stack([numerators, denominators]).astype(np.float64)
    return SumStatistic(family, features, _ratio_finish)


def mean_of(values: NDArray[Any], family: Hashable) -> SumStatistic:
    """The mean of a per-item outcome (0/1 correct, violation, margin, F(r), |error|)."""
    return ratio_of(values, np.ones(len(values)), family)


def confusion_features(gold: NDArray[np.int64], pred: NDArray[np.int64], k: int) -> Any:
    """One-hot `(n, k*k)` sparse rows, item i at column `gold_i * k + pred_i`."""
    n = len(gold)
    cells = gold.astype(np.int64) * k + pred.astype(np.int64)
    return sparse.csr_matrix((np.ones(n), (np.arange(n), cells)), shape=(n, k * k))


def confusion_statistic(
    name: str, gold: NDArray[np.int64], pred: NDArray[np.int64], k: int, family: Hashable
) -> SumStatistic:
    """One of `confusion_statistics` ("accuracy", "balanced_accuracy", "macro_f1",
    "cohen_kappa", "quadratic_kappa") of label codes against gold codes in `range(k)`."""

    def finish(sums: Floats) -> Floats:
        return confusion_statistics(sums.reshape(-1, k, k))[name]

    return SumStatistic(family, confusion_features(gold, pred, k), finish)


def _binary_balanced(sums: Floats) -> Floats:
    """(recall + specificity) / 2 of [gold, pred] 2x2 sums; NaN unless both classes occur."""
    tn, fp, fn, tp = sums[:, 0], sums[:, 1], sums[:, 2], sums[:, 3]
    with np.errstate(divide="ignore", invalid="ignore"):
        value = (tp / (tp + fn) + tn / (tn + fp)) / 2
    return np.where((tp + fn > 0) & (tn + fp > 0), value, np.nan)


def binary_balanced_accuracy(
    gold: NDArray[np.bool_], pred: NDArray[np.bool_], family: Hashable
) -> SumStatistic:
    """Balanced accuracy of binary predictions, undefined (NaN) unless the gold holds
    both classes: the definition of the verifier gold metrics (`gold_metrics`)."""
    features = confusion_features(gold.astype(np.int64), pred.astype(np.int64), 2)
    return SumStatistic(family, features, _binary_balanced)


def _pearson(idx: NDArray[np.int64], s: Floats, g: Floats) -> Floats:
    return batched_pearson(s[idx], g[idx])


def _spearman(idx: NDArray[np.int64], s: Floats, g: Floats) -> Floats:
    s_codes = np.unique(s, return_inverse=True)[1].astype(np.int64).ravel()
    g_codes = np.unique(g, return_inverse=True)[1].astype(np.int64).ravel()
    return batched_pearson(resampled_ranks(s_codes, idx), resampled_ranks(g_codes, idx))


def pearson_of(scores: Floats, gold: Floats) -> IndexStatistic:
    return IndexStatistic((scores, gold), _pearson)


def spearman_of(scores: Floats, gold: Floats) -> IndexStatistic:
    return IndexStatistic((scores, gold), _spearman)


class _Sums:
    """Every sum statistic's feature columns stacked into one sparse matrix."""

    def __init__(self, statistics: Mapping[Any, PairedStatistic]) -> None:
        blocks: dict[Hashable, Any] = {}
        for stat in statistics.values():
            if isinstance(stat, SumStatistic):
                blocks.setdefault(stat.family, stat.features)
        self.slices: dict[Hashable, slice] = {}
        start = 0
        for family, features in blocks.items():
            self.slices[family] = slice(start, start + features.shape[1])
            start += features.shape[1]
        stacked = [sparse.csr_matrix(f) for f in blocks.values()]
        self.transposed = sparse.hstack(stacked, format="csr").T.tocsr() if stacked else None

    def of(self, weights: Floats) -> Floats | None:
        """`(b, total columns)` weighted sums, one sparse product for every family."""
        if self.transposed is None:
            return None
        return np.asarray(self.transposed @ weights.T).T


def _draw_counts(idx: NDArray[np.int64], n: int) -> Floats:
    """`(b, n)`: how often each item was drawn in each resample of the chunk."""
    rows = np.arange(idx.shape[0], dtype=np.int64)[:, np.newaxis] * n
    counts = np.bincount((idx + rows).ravel(), minlength=idx.shape[0] * n)
    return counts.reshape(idx.shape[0], n).astype(np.float64)


def _evaluate(
    statistics: Mapping[_Key, PairedStatistic],
    sums: _Sums,
    idx: NDArray[np.int64],
    weights: Floats,
) -> dict[_Key, Floats]:
    totals = sums.of(weights)
    out: dict[_Key, Floats] = {}
    for key, stat in statistics.items():
        if isinstance(stat, SumStatistic):
            assert totals is not None
            out[key] = stat.finish(totals[:, sums.slices[stat.family]])
        else:
            out[key] = stat.batched(idx, *stat.columns)
    return out


def resample_statistics(
    statistics: Mapping[_Key, PairedStatistic], n: int, boot: BootSettings
) -> tuple[dict[_Key, float], dict[_Key, Floats]]:
    """(point value, `n_boot` resampled values) of every statistic, all on one draw.

    Every statistic must be over the same `n` items (restrict them first). Values are
    NaN where a statistic is undefined (a point value too).
    """
    if n < 1:
        raise ValueError("cannot resample an empty item set")
    sums = _Sums(statistics)
    identity = np.arange(n, dtype=np.int64)[np.newaxis, :]
    points = {
        k: float(v[0]) for k, v in _evaluate(statistics, sums, identity, np.ones((1, n))).items()
    }
    values = {k: np.empty(boot.n_boot, dtype=np.float64) for k in statistics}
    for start, idx in index_chunks(n, boot.n_boot, boot.seed):
        weights = _draw_counts(idx, n)
        for key, chunk in _evaluate(statistics, sums, idx, weights).items():
            values[key][start : start + len(idx)] = chunk
    return points, values
