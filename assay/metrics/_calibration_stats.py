"""Calibration of a judge's confidence in its own label: Brier score, expected
calibration error over equal-width bins, reliability-diagram bins, and recalibration maps
(temperature scaling, isotonic regression) fitted on one split.

The forecast is the judge's `label_probability` (its probability of the label it gave)
and the outcome is whether that label equals gold: "top-label" calibration (Guo et al.
2017). Brier (1950): the mean of (p - y)^2 (scikit-learn's `brier_score_loss`). ECE
(Naeini et al. 2015): sum over bins of n_b / n * |accuracy_b - confidence_b|, with `bins`
equal-width bins of [0, 1] closed on the right, the first also holding 0: the bins of
scikit-learn's `calibration_curve(strategy="uniform")`.

Brier and ECE are also `SumStatistic`s of the paired machinery (`_paired_stats`): one
draw of the items gives every judge's CI and every pair's difference.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray
from scipy import sparse
from scipy.optimize import minimize_scalar
from scipy.special import expit, logit

from assay.core.calibration import DEFAULT_BINS
from assay.metrics._paired_stats import Floats, SumStatistic, mean_of

if TYPE_CHECKING:
    from sklearn.isotonic import IsotonicRegression

_EPS = 1e-6  # probabilities are clipped to [eps, 1 - eps] before taking logits
_MAX_LOG_T = 5.0  # temperatures searched in [e^-5, e^5]

__all__ = [
    "DEFAULT_BINS",
    "bin_codes",
    "brier",
    "brier_of",
    "ece",
    "ece_of",
    "fit_isotonic",
    "fit_temperature",
    "reliability",
    "with_temperature",
]


def bin_codes(p: Floats, bins: int) -> NDArray[np.int64]:
    """Each probability's bin: (k/bins, (k+1)/bins], the first bin also holding 0."""
    edges = np.linspace(0.0, 1.0, bins + 1)
    return np.searchsorted(edges[1:-1], p).astype(np.int64)


def brier(p: Floats, y: Floats) -> float:
    """Mean squared difference between the probability and the 0/1 outcome."""
    return float(np.mean((p - y) ** 2))


def _bin_sums(p: Floats, y: Floats, bins: int) -> Floats:
    """`(bins, 3)`: count, sum of probabilities, sum of outcomes per bin."""
    codes = bin_codes(p, bins)
    return np.column_stack(
        [
            np.bincount(codes, minlength=bins),
            np.bincount(codes, weights=p, minlength=bins),
            np.bincount(codes, weights=y, minlength=bins),
        ]
    ).astype(np.float64)


def _ece_of_sums(sums: Floats) -> Floats:
    """ECE of `(b, bins, 3)` bin sums: sum |sum p - sum y| / n (NaN when n is 0)."""
    total = sums[..., 0].sum(axis=-1)
    gap = np.abs(sums[..., 1] - sums[..., 2]).sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, gap / np.where(total > 0, total, 1.0), np.nan)


def ece(p: Floats, y: Floats, bins: int = DEFAULT_BINS) -> float:
    """Expected calibration error over `bins` equal-width bins."""
    return float(_ece_of_sums(_bin_sums(p, y, bins)))


def reliability(p: Floats, y: Floats, bins: int = DEFAULT_BINS) -> list[dict[str, Any]]:
    """The reliability diagram: per bin its edges, count, mean confidence and accuracy
    (None for an empty bin)."""
    sums, edges = _bin_sums(p, y, bins), np.linspace(0.0, 1.0, bins + 1)
    out = []
    for k in range(bins):
        n = int(sums[k, 0])
        out.append(
            {
                "lo": float(edges[k]),
                "hi": float(edges[k + 1]),
                "count": n,
                "confidence": float(sums[k, 1] / n) if n else None,
                "accuracy": float(sums[k, 2] / n) if n else None,
            }
        )
    return out


def brier_of(p: Floats, y: Floats, family: Hashable) -> SumStatistic:
    """Brier score as a paired statistic (the mean of the squared errors)."""
    return mean_of((p - y) ** 2, family)


def ece_of(p: Floats, y: Floats, bins: int, family: Hashable) -> SumStatistic:
    """ECE as a paired statistic: per item a 1, its probability and its outcome in its
    bin's three columns; the bin sums of any resample give its ECE."""
    n = len(p)
    codes = bin_codes(p, bins)
    rows = np.repeat(np.arange(n), 3)
    columns = (codes[:, None] * 3 + np.arange(3)).ravel()
    values = np.column_stack([np.ones(n), p, y]).ravel()
    features = sparse.csr_matrix((values, (rows, columns)), shape=(n, 3 * bins))

    def finish(sums: Floats) -> Floats:
        return _ece_of_sums(sums.reshape(len(sums), bins, 3))

    return SumStatistic(((family, features),), finish)


def _logits(p: Floats) -> Floats:
    return np.asarray(logit(np.clip(p, _EPS, 1.0 - _EPS)), dtype=np.float64)


def with_temperature(p: Floats, temperature: float) -> Floats:
    """sigmoid(logit(p) / T): T > 1 softens, T < 1 sharpens."""
    return np.asarray(expit(_logits(p) / temperature), dtype=np.float64)


def fit_temperature(p: Floats, y: Floats) -> float:
    """The temperature minimising the log loss of the outcomes (Guo et al. 2017),
    searched over log T with scipy's bounded scalar minimiser."""
    z = _logits(p)

    def loss(log_t: float) -> float:
        q = np.clip(expit(z / np.exp(log_t)), 1e-12, 1 - 1e-12)
        return float(-np.mean(y * np.log(q) + (1 - y) * np.log(1 - q)))

    found = minimize_scalar(loss, bounds=(-_MAX_LOG_T, _MAX_LOG_T), method="bounded")
    return float(np.exp(found.x))


def fit_isotonic(p: Floats, y: Floats) -> IsotonicRegression:
    """A non-decreasing map of probabilities to accuracies (Zadrozny and Elkan 2002),
    clipped to [0, 1] outside the fitted range. sklearn is imported here: at module level
    it would load scipy's array API layer with every `import assay.metrics`."""
    from sklearn.isotonic import IsotonicRegression

    model = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip")
    model.fit(p, y)
    return model
