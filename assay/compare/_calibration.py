"""Brier score and ECE of judges compared on the items they share (`assay compare`).

A judge's forecast on an item is its `label_probability` (the probability of the label it
gave, `assay.metrics._calibration`), the outcome whether that label equals gold. A judge
is defined on the items with a gold label, an ok verdict and a probability; two judges
are compared on the items both have (paired bootstrap: lower is better for both, so a
negative difference favours the first judge). ECE uses 10 equal-width bins.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from assay.compare._load import Gold
from assay.metrics._calibration_stats import DEFAULT_BINS, brier_of, ece_of
from assay.metrics._paired_metrics import MetricOutcomes
from assay.metrics._paired_stats import PairedStatistic

CALIBRATION = ("brier", "ece")


def calibration_outcomes(
    judges: Mapping[str, Sequence[str | None]],
    probabilities: Mapping[str, NDArray[np.float64]],
    gold: Sequence[Gold],
    *,
    bins: int = DEFAULT_BINS,
) -> list[MetricOutcomes]:
    """`brier` and `ece` of each judge with probabilities, over the items it has."""
    wanted = [g.label for g in gold]
    has_gold = np.array([g is not None for g in wanted], dtype=bool)
    brier: dict[str, PairedStatistic] = {}
    ece: dict[str, PairedStatistic] = {}
    defined: dict[str, NDArray[np.bool_]] = {}
    for judge, p in probabilities.items():
        labels = judges[judge]
        mask = has_gold & ~np.isnan(p) & np.array([x is not None for x in labels], dtype=bool)
        if not mask.any():
            continue
        correct = np.array([x == g for x, g in zip(labels, wanted, strict=True)], dtype=float)
        forecast = np.where(mask, np.nan_to_num(p), 0.0)
        defined[judge] = mask
        brier[judge] = brier_of(forecast, correct * mask, ("brier", judge))
        ece[judge] = ece_of(forecast, correct * mask, bins, ("ece", judge))
    if not defined:
        return []
    return [MetricOutcomes("brier", brier, defined), MetricOutcomes("ece", ece, defined)]
