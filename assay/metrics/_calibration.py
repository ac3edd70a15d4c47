"""Calibration rows of an items run: per dataset and judge, how well the judge's
probability of its own label (`label_probability`: its label tokens' probability with
`logprobs = true`, or a declared confidence field) matches how often that label is right.

A row covers the single-response items with a gold label, an ok verdict and a
probability (`n`). It reports the Brier score and the ECE with bootstrap CIs over those
items, the reliability diagram's bins, and, when the items carry splits (an items
dataset's `split_column`) including the fit split (`dev` by default), temperature scaling
and isotonic regression fitted on that split's items and scored before and after on the
items of every other split ("test"). Definitions: `_calibration_stats`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from assay.core.calibration import DEFAULT_FIT_SPLIT, CalibrationOptions
from assay.core.outcomes import Status
from assay.core.records import ItemJudgmentRecord, ItemRecord
from assay.metrics._calibration_stats import (
    brier,
    brier_of,
    ece,
    ece_of,
    fit_isotonic,
    fit_temperature,
    reliability,
    with_temperature,
)
from assay.metrics._paired_draws import Cell, resample_statistics
from assay.metrics._paired_stats import Floats
from assay.metrics._pooling import BootSettings
from assay.metrics._resampling import percentile_interval
from assay.parsing import normalise_label

CALIBRATION_STATISTICS = ("brier", "ece")
Method = Literal["temperature", "isotonic"]
RowT = TypeVar("RowT", bound=BaseModel)

__all__ = [
    "CALIBRATION_STATISTICS",
    "DEFAULT_FIT_SPLIT",
    "CalibrationOptions",
    "options_from_manifest",
    "CalibrationRow",
    "FittedCalibration",
    "ReliabilityBin",
    "calibration_rows",
    "calibration_stats",
    "with_calibration",
]


def options_from_manifest(manifest: Mapping[str, Any]) -> CalibrationOptions:
    """The `[calibration]` table of a run's spec (defaults when it has none)."""
    spec = manifest.get("spec")
    table = spec.get("calibration") if isinstance(spec, Mapping) else None
    return CalibrationOptions.model_validate(table if isinstance(table, Mapping) else {})


class ReliabilityBin(BaseModel):
    """One bin of the reliability diagram."""

    model_config = ConfigDict(frozen=True)

    lo: float = Field(description="The bin's lower edge (excluded, except 0).")
    hi: float = Field(description="The bin's upper edge (included).")
    count: int = Field(description="Items whose probability falls in the bin.")
    confidence: float | None = Field(description="Their mean probability (None: empty).")
    accuracy: float | None = Field(description="The share of them whose label is right.")


class FittedCalibration(BaseModel):
    """A recalibration map fitted on one split and scored on the other splits' items."""

    model_config = ConfigDict(frozen=True)

    method: Method = Field(description="temperature (scaling) or isotonic (regression).")
    fit_on: str = Field(description="The split it was fitted on.")
    n_fit: int = Field(description="Items it was fitted on.")
    n_test: int = Field(description="Items of the other splits it is scored on.")
    temperature: float | None = Field(default=None, description="The fitted temperature.")
    brier_before: float = Field(description="Brier on the test items, as given.")
    brier_after: float = Field(description="Brier on the test items, recalibrated.")
    ece_before: float = Field(description="ECE on the test items, as given.")
    ece_after: float = Field(description="ECE on the test items, recalibrated.")


class CalibrationRow(BaseModel):
    """One judge's calibration against gold on one items dataset."""

    model_config = ConfigDict(frozen=True)

    dataset: str = Field(description="The items dataset.")
    judge_id: str = Field(description="The judge's id.")
    source: str = Field(
        description="Where the probabilities came from: logprobs (the label's tokens), "
        "confidence (a declared field), or both (mixed)."
    )
    n: int = Field(description="Items with gold, an ok verdict and a probability.")
    bins: int = Field(description="Equal-width bins of [0, 1] behind ECE and the diagram.")
    binning: str = Field(
        default="equal-width, right-closed (the first holds 0)", description="How binned."
    )
    brier: float = Field(description="Brier score: mean (p - correct)^2; 0 is perfect.")
    ece: float = Field(description="Expected calibration error over the bins; 0 is perfect.")
    ci: dict[str, tuple[float, float] | None] = Field(
        default_factory=dict, description="brier/ece -> percentile bootstrap CI over items."
    )
    reliability: list[ReliabilityBin] = Field(description="The reliability diagram's bins.")
    fitted: list[FittedCalibration] = Field(
        default_factory=list, description="Recalibration fitted on a split, scored on the rest."
    )


def _label(value: str | None) -> str | None:
    return None if value is None else normalise_label(value)


def _observations(
    items: Sequence[ItemRecord], records: Sequence[ItemJudgmentRecord]
) -> tuple[Floats, Floats, list[str | None], set[str]]:
    """(probabilities, 0/1 correct, each item's split, sources) of the usable items, by
    item id: the order `assay compare` uses, and none that completion order can change
    (sums of floats, and so the bins and the resampled intervals, depend on the order)."""
    gold = {it.item_id: (_label(it.gold_label), it.split) for it in items}
    p, y, splits, sources = [], [], [], set()
    for r in sorted(records, key=lambda r: r.item_id):
        label, (wanted, split) = _label(r.label), gold.get(r.item_id, (None, None))
        if r.status is not Status.OK or r.label_probability is None or label is None:
            continue
        if wanted is None or r.order is not None:
            continue
        p.append(r.label_probability)
        y.append(float(label == wanted))
        splits.append(split)
        sources.add("logprobs" if r.logprobs else "confidence")
    return np.array(p, dtype=np.float64), np.array(y, dtype=np.float64), splits, sources


def _intervals(
    p: Floats, y: Floats, bins: int, boot: BootSettings
) -> dict[str, tuple[float, float] | None]:
    """Percentile CIs of Brier and ECE from one draw of the items (the paired machinery)."""
    if boot.n_boot == 0:
        return {}
    everything = np.ones(len(p), dtype=bool)
    cells: dict[str, Cell] = {
        "brier": (brier_of(p, y, "brier"), everything),
        "ece": (ece_of(p, y, bins, "ece"), everything),
    }
    _, values = resample_statistics(cells, len(p), boot)
    return {name: percentile_interval(values[name], boot.confidence) for name in cells}


def _fitted(
    p: Floats, y: Floats, splits: Sequence[str | None], bins: int, fit_on: str
) -> list[FittedCalibration]:
    """Temperature and isotonic maps fitted on `fit_on`, scored on the other splits;
    none without both outcomes among the fit items or without test items."""
    fit = np.array([s == fit_on for s in splits], dtype=bool)
    test = np.array([s is not None and s != fit_on for s in splits], dtype=bool)
    if not test.any() or len(set(y[fit].tolist())) < 2:
        return []
    pt, yt = p[test], y[test]
    temperature = fit_temperature(p[fit], y[fit])
    mapped: dict[Method, Floats] = {
        "temperature": with_temperature(pt, temperature),
        "isotonic": np.asarray(fit_isotonic(p[fit], y[fit]).predict(pt), dtype=np.float64),
    }
    return [
        FittedCalibration(
            method=method,
            fit_on=fit_on,
            n_fit=int(fit.sum()),
            n_test=int(test.sum()),
            temperature=temperature if method == "temperature" else None,
            brier_before=brier(pt, yt),
            brier_after=brier(after, yt),
            ece_before=ece(pt, yt, bins),
            ece_after=ece(after, yt, bins),
        )
        for method, after in mapped.items()
    ]


def calibration_rows(
    dataset: str,
    items: Sequence[ItemRecord],
    by_judge: Mapping[str, Sequence[ItemJudgmentRecord]],
    *,
    boot: tuple[int, int],
    options: CalibrationOptions | None = None,
) -> list[CalibrationRow]:
    """A row for each judge of the dataset with at least one usable item, by judge id
    (records arrive in completion order; rows do not depend on it)."""
    settings = BootSettings(n_boot=boot[0], seed=boot[1], confidence=0.95)
    chosen = options or CalibrationOptions()
    bins, fit_on = chosen.bins, chosen.fit_on
    rows = []
    for judge_id, records in sorted(by_judge.items()):
        p, y, splits, sources = _observations(items, records)
        if len(p) == 0:
            continue
        rows.append(
            CalibrationRow(
                dataset=dataset,
                judge_id=judge_id,
                source=sources.pop() if len(sources) == 1 else "mixed",
                n=len(p),
                bins=bins,
                brier=brier(p, y),
                ece=ece(p, y, bins),
                ci=_intervals(p, y, bins, settings),
                reliability=[ReliabilityBin(**b) for b in reliability(p, y, bins)],
                fitted=_fitted(p, y, splits, bins, fit_on),
            )
        )
    return rows


def calibration_stats(row: CalibrationRow) -> dict[str, Any]:
    """What a calibration row adds to its judge's `ItemJudgeRow`: `brier` and `ece`
    (with their CIs and item counts) and `n_calibrated`."""
    return {
        "stats": {"brier": row.brier, "ece": row.ece, "n_calibrated": row.n},
        "ci": {name: row.ci.get(name) for name in CALIBRATION_STATISTICS},
        "n_of": dict.fromkeys(CALIBRATION_STATISTICS, row.n),
    }


def with_calibration(rows: Sequence[RowT], found: Sequence[CalibrationRow]) -> list[RowT]:
    """The judges' rows (`ItemJudgeRow`s) with their calibration statistics added."""
    by_key: dict[Any, dict[str, Any]] = {
        (c.dataset, c.judge_id): calibration_stats(c) for c in found
    }
    out = []
    for row in rows:
        add = by_key.get((getattr(row, "dataset", None), getattr(row, "judge_id", None)))
        if add is not None:
            update = {k: {**getattr(row, k), **v} for k, v in add.items()}
            row = row.model_copy(update=update)
        out.append(row)
    return out
