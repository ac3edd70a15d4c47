"""Brier score and ECE of judges compared on the items they share (`assay compare`).

A judge's forecast on an item is its `label_probability` (the probability of the label it
gave, `assay.metrics._calibration`), the outcome whether that label equals gold. A judge
is defined on the items with a gold label, an ok verdict and a probability; two judges
are compared on the items both have (paired bootstrap: lower is better for both, so a
negative difference favours the first judge). ECE uses the runs' `[calibration] bins`
equal-width bins (10 by default; runs that differ: 10, with a note).

`reliability_tables` gives each judge's reliability-diagram bins per dataset over the same
items, with the function the run's own calibration metrics use, so one run compared alone
shows the bins its report shows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from assay.compare._item_outcomes import LabelTable
from assay.compare._load import Gold, LoadedRun
from assay.compare._model import ReliabilityTable
from assay.metrics._calibration import ReliabilityBin
from assay.metrics._calibration_stats import DEFAULT_BINS, brier, brier_of, ece, ece_of, reliability
from assay.metrics._paired_metrics import MetricOutcomes
from assay.metrics._paired_stats import PairedStatistic

CALIBRATION = ("brier", "ece")


def ece_bins(runs: Sequence[LoadedRun], notes: list[str]) -> int:
    """The runs' one `[calibration] bins`; where they differ, the default (a note says
    so: ECE compared between judges needs the same bins)."""
    declared = sorted({run.ece_bins for run in runs})
    if len(declared) == 1:
        return declared[0]
    notes.append(
        f"the runs bin ECE differently ([calibration] bins = {', '.join(map(str, declared))}): "
        f"compared with {DEFAULT_BINS} bins"
    )
    return DEFAULT_BINS


def _usable(
    labels: Sequence[str | None], p: NDArray[np.float64], gold: Sequence[Gold]
) -> tuple[NDArray[np.bool_], NDArray[np.float64]]:
    """Items with gold, a label and a probability, and whether each label equals gold."""
    wanted = [g.label for g in gold]
    has = np.array([g is not None and x is not None for g, x in zip(wanted, labels, strict=True)])
    correct = np.array([x == g for x, g in zip(labels, wanted, strict=True)], dtype=float)
    return has.astype(bool) & ~np.isnan(p), correct


def reliability_tables(
    table: LabelTable, runs: Mapping[str, str], *, bins: int = DEFAULT_BINS
) -> list[ReliabilityTable]:
    """Per judge with probabilities (`runs`: judge -> its run's name) and dataset, the
    reliability bins over the items it has there; none for a dataset it has none on."""
    datasets = np.array([d for d, _ in table.keys], dtype=object)
    out = []
    for judge, p in sorted(table.probabilities.items()):
        mask, correct = _usable(table.judges[judge], p, table.gold)
        for dataset in sorted(set(datasets.tolist())):
            keep = mask & (datasets == dataset)
            if not keep.any():
                continue
            pk, yk = p[keep], correct[keep]
            out.append(
                ReliabilityTable(
                    judge=judge,
                    run=runs.get(judge, ""),
                    dataset=dataset,
                    n=int(keep.sum()),
                    bins=bins,
                    brier=brier(pk, yk),
                    ece=ece(pk, yk, bins),
                    reliability=[ReliabilityBin(**b) for b in reliability(pk, yk, bins)],
                )
            )
    return out


def calibration_outcomes(
    judges: Mapping[str, Sequence[str | None]],
    probabilities: Mapping[str, NDArray[np.float64]],
    gold: Sequence[Gold],
    *,
    bins: int = DEFAULT_BINS,
) -> list[MetricOutcomes]:
    """`brier` and `ece` of each judge with probabilities, over the items it has."""
    briers: dict[str, PairedStatistic] = {}
    eces: dict[str, PairedStatistic] = {}
    defined: dict[str, NDArray[np.bool_]] = {}
    for judge, p in probabilities.items():
        mask, correct = _usable(judges[judge], p, gold)
        if not mask.any():
            continue
        forecast = np.where(mask, np.nan_to_num(p), 0.0)
        defined[judge] = mask
        briers[judge] = brier_of(forecast, correct * mask, ("brier", judge))
        eces[judge] = ece_of(forecast, correct * mask, bins, ("ece", judge))
    if not defined:
        return []
    return [MetricOutcomes("brier", briers, defined), MetricOutcomes("ece", eces, defined)]
