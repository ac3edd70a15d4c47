"""The rows of an items run's metrics (`metrics.json` `items`): one per judge and
dataset, the raters' agreement, and the report that holds them with the judge panels and
calibration rows. Computed by `_item_metrics.item_metrics`."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from assay.metrics._calibration import CalibrationRow
from assay.metrics._item_bootstrap import Interval
from assay.metrics._panel import PanelRow


class ItemJudgeRow(BaseModel):
    """One judge on one items dataset: coverage, agreement with gold, pairwise rates."""

    model_config = ConfigDict(frozen=True)

    judge_id: str = Field(description="The judge's id.")
    model: str | None = Field(default=None, description="The model id behind the verdicts.")
    prompt_id: str | None = Field(default=None, description="The prompt's id.")
    prompt_version: int | None = Field(default=None, description="The prompt's version.")
    dataset: str = Field(description="The items dataset.")
    task: str = Field(description="single or pairwise")
    n_items: int = Field(description="Items in the dataset.")
    n_scored: int = Field(description="Items with a verdict (pairwise: in both orders).")
    coverage: float | None = Field(description="n_scored / n_items.")
    samples: int | None = Field(default=None, description="Majority rows: samples voted.")
    evaluated_on: str | None = Field(
        default=None,
        description="A jury fitted on a split: the items its row counts (the other splits).",
    )
    stats: dict[str, float | int | None] = Field(
        default_factory=dict,
        description="statistic -> value (accuracy, cohen_kappa, ...; see "
        "docs/tutorials/compare-judges.md).",
    )
    ci: dict[str, Interval | None] = Field(
        default_factory=dict, description="statistic -> its CI (lo, hi)."
    )
    n_of: dict[str, int] = Field(
        default_factory=dict,
        description="statistic -> the items it is computed on (gold: items with gold and "
        "a verdict), so a table can show it wherever it is not n_items.",
    )
    labels: list[str] = Field(default_factory=list, description="Confusion matrix order.")
    confusion: list[list[int]] = Field(default_factory=list, description="[gold][pred].")

    def flat(self) -> dict[str, Any]:
        """One flat dict (tables, JSON): statistics as `name`, `name_lo`, `name_hi`; a
        count (`n_gold`, ...) as `name` alone, since a count has no CI; the confusion
        matrix as `labels` and `confusion` (`[gold][pred]`) when the judge has one."""
        out = self.model_dump(exclude={"stats", "ci", "labels", "confusion"})
        for name, value in self.stats.items():
            out[name] = value
            if not name.startswith("n_"):
                interval = self.ci.get(name)
                out[f"{name}_lo"] = interval[0] if interval else None
                out[f"{name}_hi"] = interval[1] if interval else None
        if self.labels:
            out.update(labels=self.labels, confusion=self.confusion)
        return out


class RaterRow(BaseModel):
    """Agreement among a dataset's human raters, and kappa between every judge and rater."""

    model_config = ConfigDict(frozen=True)

    dataset: str = Field(description="The items dataset.")
    raters: list[str] = Field(description="The rater columns.")
    level: str = Field(description="Krippendorff's level of measurement.")
    n_items: int = Field(description="Items in the dataset.")
    n_complete: int = Field(description="Items every rater labelled (Fleiss' kappa uses these).")
    krippendorff_alpha: float | None = Field(description="The raters' Krippendorff's alpha.")
    fleiss_kappa: float | None = Field(description="The raters' Fleiss' kappa.")
    ci: dict[str, Interval | None] = Field(
        default_factory=dict, description="statistic -> its CI (lo, hi)."
    )
    kappa_names: list[str] = Field(description="Judges (majority rows) then raters.")
    kappa: list[list[float | None]] = Field(
        description="Cohen's kappa between each two of kappa_names."
    )


class ItemsReport(BaseModel):
    rows: list[ItemJudgeRow] = Field(description="One row per judge and dataset.")
    raters: list[RaterRow] = Field(
        default_factory=list, description="One row per dataset with raters."
    )
    panels: list[PanelRow] = Field(
        default_factory=list, description="Per dataset, panel (judges, judges+raters), level."
    )
    calibration: list[CalibrationRow] = Field(
        default_factory=list,
        description="Per dataset and judge with label probabilities: Brier, ECE, reliability.",
    )
    n_boot: int = Field(description="Bootstrap resamples behind the CIs (0: no CI).")
    seed: int = Field(description="Seed of the resampling.")

    def rows_flat(self) -> list[dict[str, Any]]:
        return [row.flat() for row in self.rows]


__all__ = ["ItemJudgeRow", "ItemsReport", "RaterRow"]
