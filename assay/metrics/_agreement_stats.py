"""Agreement of categorical judgments with gold labels.

Point values come from scikit-learn (accuracy_score, balanced_accuracy_score,
f1_score(average="macro"), cohen_kappa_score, quadratic-weighted for ordinal labels). The
bootstrap uses `confusion_statistics`, the same statistics computed from a stack of
confusion matrices at once (tests check it against scikit-learn to 1e-12). Items whose
prediction or gold label is missing (None / NaN) are left out; `n` counts the rest.
Undefined values are None, never NaN.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, TypeAlias

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field

from assay.metrics._item_bootstrap import Interval, item_bootstrap_cis
from assay.metrics._resampling import Seed

Column: TypeAlias = Sequence[Any] | NDArray[Any] | pd.Series
"""One value an item: a list, numpy array or pandas Series; None / NaN = missing."""

CATEGORICAL_STATISTICS = (
    "accuracy",
    "balanced_accuracy",
    "macro_f1",
    "cohen_kappa",
    "quadratic_kappa",
)


def _missing(values: NDArray[Any]) -> NDArray[np.bool_]:
    return np.asarray(pd.isna(values), dtype=bool)


def paired_labels(pred: Column, gold: Column) -> tuple[NDArray[Any], NDArray[Any]]:
    """Both label columns as object arrays, without items missing on either side."""
    p = np.asarray(pred, dtype=object)
    g = np.asarray(gold, dtype=object)
    if p.shape != g.shape or p.ndim != 1:
        raise ValueError(f"expected two 1-D label sequences of one length: {p.shape}, {g.shape}")
    keep = ~(_missing(p) | _missing(g))
    return p[keep], g[keep]


def label_codes(
    pred: NDArray[Any], gold: NDArray[Any], order: Sequence[Any] | None
) -> tuple[list[Any], NDArray[np.int64], NDArray[np.int64]]:
    """(labels, pred codes, gold codes); labels follow `order`, else sorted as strings."""
    seen = set(pred.tolist()) | set(gold.tolist())
    if order is None:
        labels = sorted(seen, key=str)
    else:
        labels = list(order)
        unknown = seen - set(labels)
        if unknown:
            raise ValueError(f"labels {sorted(unknown, key=str)} are not in order {labels}")
    index = {label: i for i, label in enumerate(labels)}
    p = np.fromiter((index[v] for v in pred.tolist()), dtype=np.int64, count=len(pred))
    g = np.fromiter((index[v] for v in gold.tolist()), dtype=np.int64, count=len(gold))
    return labels, p, g


def confusion_stack(
    pred: NDArray[np.int64], gold: NDArray[np.int64], k: int
) -> NDArray[np.float64]:
    """Confusion matrices `[..., gold, pred]` of (stacks of) code rows, by one bincount."""
    p = np.atleast_2d(pred)
    g = np.atleast_2d(gold)
    rows = np.arange(len(p))[:, np.newaxis] * (k * k)
    counts = np.bincount((rows + g * k + p).ravel(), minlength=len(p) * k * k)
    return counts.reshape(len(p), k, k).astype(np.float64)


def _ratio(num: NDArray[np.float64], den: NDArray[np.float64]) -> NDArray[np.float64]:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _kappa_from(matrices: NDArray[np.float64], weights: NDArray[np.float64]) -> NDArray[np.float64]:
    """Weighted kappa = 1 - sum(w * observed) / sum(w * expected); NaN when undefined."""
    total = matrices.sum(axis=(1, 2))
    expected = matrices.sum(axis=2)[:, :, None] * matrices.sum(axis=1)[:, None, :]
    expected = expected / np.where(total > 0, total, 1.0)[:, None, None]
    observed = (weights * matrices).sum(axis=(1, 2))
    chance = (weights * expected).sum(axis=(1, 2))
    disagreement = _ratio(observed, chance)
    return np.where(chance > 1e-12 * np.maximum(total, 1.0), 1.0 - disagreement, np.nan)


def confusion_statistics(matrices: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
    """Every categorical statistic of a stack `(b, k, k)` of [gold, pred] confusion matrices.

    Labels are ordered as the matrix axes (that order drives the quadratic weights).
    Classes absent from both sides of a matrix are ignored, as scikit-learn does.
    """
    diag = np.diagonal(matrices, axis1=1, axis2=2)
    gold_n, pred_n = matrices.sum(axis=2), matrices.sum(axis=1)
    total = matrices.sum(axis=(1, 2))
    present = (gold_n + pred_n) > 0
    recall = _ratio(diag, gold_n)
    f1 = np.where(present, np.nan_to_num(_ratio(2 * diag, gold_n + pred_n)), 0.0)
    k = matrices.shape[1]
    ranks = np.arange(k, dtype=np.float64)
    return {
        "accuracy": _ratio(diag.sum(axis=1), total),
        "balanced_accuracy": _ratio(
            np.where(gold_n > 0, recall, 0.0).sum(axis=1), (gold_n > 0).sum(axis=1) * 1.0
        ),
        "macro_f1": _ratio(f1.sum(axis=1), present.sum(axis=1).astype(np.float64)),
        "cohen_kappa": _kappa_from(matrices, 1.0 - np.eye(k)),
        "quadratic_kappa": _kappa_from(matrices, (ranks[:, None] - ranks[None, :]) ** 2),
    }


def _finite(value: Any) -> float | None:
    number = float(value)
    return number if np.isfinite(number) else None


def _sklearn_statistics(
    pred: NDArray[np.int64], gold: NDArray[np.int64], k: int, ordinal: bool
) -> dict[str, float | None]:
    """Point values from scikit-learn (imported here: ~1 s, only when needed)."""
    from sklearn import metrics as skm

    if len(pred) == 0:
        return dict.fromkeys(CATEGORICAL_STATISTICS)
    labels = np.arange(k)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # undefined values are reported as None
        values = {
            "accuracy": skm.accuracy_score(gold, pred),
            "balanced_accuracy": skm.balanced_accuracy_score(gold, pred),
            "macro_f1": skm.f1_score(gold, pred, average="macro", zero_division=0.0),
            "cohen_kappa": skm.cohen_kappa_score(
                gold, pred, labels=labels, replace_undefined_by=np.nan
            ),
            "quadratic_kappa": skm.cohen_kappa_score(
                gold, pred, labels=labels, weights="quadratic", replace_undefined_by=np.nan
            )
            if ordinal
            else np.nan,
        }
    return {name: _finite(value) for name, value in values.items()}


class GoldAgreement(BaseModel):
    """Categorical judgments against gold labels: the statistics, their CIs, the confusion."""

    model_config = ConfigDict(frozen=True)

    n: int = Field(description="Items with both a prediction and a gold label.")
    labels: list[str] = Field(description="Label order of the confusion matrix (and weights).")
    accuracy: float | None
    balanced_accuracy: float | None = Field(description="Mean recall over gold classes.")
    macro_f1: float | None
    cohen_kappa: float | None
    quadratic_kappa: float | None = Field(description="Only for ordinal labels (an `order`).")
    ci: dict[str, Interval | None] = Field(
        default_factory=dict, description="statistic -> percentile bootstrap CI over items."
    )
    confusion: list[list[int]] = Field(description="[gold][pred] counts in `labels` order.")

    def confusion_frame(self) -> pd.DataFrame:
        """Index: gold label; columns: predicted label."""
        frame = pd.DataFrame(self.confusion, index=self.labels, columns=self.labels)
        return frame.rename_axis(index="gold", columns="pred")


def confusion_matrix(
    pred: Column, gold: Column, *, order: Sequence[Any] | None = None
) -> pd.DataFrame:
    """Counts of (gold, predicted) label pairs; rows gold, columns predicted."""
    return agreement_with_gold(pred, gold, order=order).confusion_frame()


def agreement_with_gold(
    pred: Column,
    gold: Column,
    *,
    order: Sequence[Any] | None = None,
    n_boot: int = 0,
    seed: Seed = 0,
    confidence: float = 0.95,
) -> GoldAgreement:
    """Accuracy, balanced accuracy, macro-F1, Cohen's kappa and the confusion matrix.

    `order` declares the labels ordinal (lowest first): it fixes the confusion axes and
    adds the quadratic-weighted kappa. `n_boot > 0` adds percentile CIs from `n_boot`
    item resamples (seeded; one bincount a chunk of resamples).
    """
    p, g = paired_labels(pred, gold)
    labels, p_codes, g_codes = label_codes(p, g, order)
    k = len(labels)
    values = _sklearn_statistics(p_codes, g_codes, k, ordinal=order is not None)
    names = CATEGORICAL_STATISTICS if order is not None else CATEGORICAL_STATISTICS[:-1]

    def statistics(pp: NDArray[np.int64], gg: NDArray[np.int64]) -> dict[str, NDArray[Any]]:
        every = confusion_statistics(confusion_stack(pp, gg, k))
        return {name: every[name] for name in names}

    ci = item_bootstrap_cis(
        statistics, p_codes, g_codes, n_boot=n_boot, seed=seed, confidence=confidence
    )
    if n_boot and not ci:  # no items: every CI is undefined
        ci = dict.fromkeys(names)
    matrix = confusion_stack(p_codes, g_codes, k)[0].astype(np.int64)
    return GoldAgreement(
        n=len(p_codes), labels=[str(x) for x in labels], ci=ci, confusion=matrix.tolist(), **values
    )
