"""Reliability of a panel: Krippendorff's alpha and Fleiss' kappa over all the judges of
an items dataset ("judges") and over the judges with the human raters ("judges+raters";
the raters alone are `RaterRow`), and each judge left out in turn.

Members are the judges as run, one label an item each, chosen as for `RaterRow`'s kappa
matrix: a judge with repeated samples (`j#0`, `j#1`, ...) counts once, by its majority
vote (`j#majority`); a member with no verdict at all is left out. Alpha is computed at
every level the labels allow: nominal always, ordinal when their order is known (the
`order` given), interval when every label is a number. Fleiss' kappa (nominal) is over
the items every member labelled. The panel's values come from `krippendorff.alpha` and
statsmodels' `fleiss_kappa`; leave-one-out values and the bootstrap CIs over items from
`_panel_stats` (items with the same labels summed once), which equals them. Leaving a
judge out shows which judge lowers agreement most: the one whose removal raises alpha
most (`lowers_most`, None when no removal raises it). References: Krippendorff (2004,
2011), Fleiss (1971).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from assay.core.records import ItemRecord
from assay.metrics._item_bootstrap import Interval
from assay.metrics._panel_stats import (
    CodeTable,
    Floats,
    Level,
    alpha_value,
    coded,
    panel_intervals,
)
from assay.metrics._rater_agreement import _alpha_of, _fleiss_of
from assay.metrics._resampling import Seed
from assay.parsing import normalise_label

PanelKind = Literal["judges", "judges+raters"]
PanelCIs = dict[str, Interval | None]
OrderOf = Callable[[Iterable[str | None]], Sequence[str] | None]
_NUMBER = re.compile(r"-?\d+(\.\d+)?")
_RAISES = 1e-12  # a removal "raises" alpha by more than rounding noise


class LeftOut(BaseModel):
    """The panel's alpha without one judge, and the change that makes."""

    model_config = ConfigDict(frozen=True)

    member: str = Field(description="The judge left out.")
    krippendorff_alpha: float | None = Field(description="The panel's alpha without it.")
    delta: float | None = Field(
        description="That alpha minus the whole panel's: > 0 when the judge lowers agreement."
    )


class PanelRow(BaseModel):
    """Agreement of one panel of one items dataset at one level of measurement."""

    model_config = ConfigDict(frozen=True)

    dataset: str = Field(description="The items dataset.")
    panel: PanelKind = Field(description="judges, or judges+raters.")
    members: list[str] = Field(description="Judges (majority votes of samples), then raters.")
    level: Level = Field(description="Krippendorff's level of measurement.")
    n_items: int = Field(description="Items in the dataset.")
    n_pairable: int = Field(description="Items with two labels or more (alpha uses these).")
    n_complete: int = Field(description="Items every member labelled (Fleiss' kappa uses these).")
    krippendorff_alpha: float | None = Field(description="The panel's Krippendorff's alpha.")
    fleiss_kappa: float | None = Field(
        default=None, description="The panel's Fleiss' kappa (nominal rows only)."
    )
    ci: dict[str, Interval | None] = Field(
        default_factory=dict, description="statistic -> percentile bootstrap CI over items."
    )
    leave_one_out: list[LeftOut] = Field(
        default_factory=list, description="Each judge left out (panels of three or more)."
    )
    lowers_most: str | None = Field(
        default=None, description="The judge whose removal raises alpha most (delta > 0)."
    )


def _numbers(labels: Sequence[str]) -> Floats | None:
    if not labels or not all(_NUMBER.fullmatch(v) for v in labels):
        return None
    return np.asarray([float(v) for v in labels], dtype=np.float64)


def _tables(
    columns: Mapping[str, Sequence[str | None]], order: Sequence[str] | None
) -> dict[Level, CodeTable]:
    """The code table of each level the labels allow. Ordinal: labels outside the order
    (a judge's `unclear`) count as missing; interval: every label is a number."""
    seen = {v for col in columns.values() for v in col if v is not None}
    ranked = list(order) if order and seen & set(order) else []
    extra = sorted(seen - set(ranked))
    labels = [*ranked, *extra] if ranked else sorted(seen)
    numbers = _numbers(labels)
    if numbers is not None and not ranked:
        labels = sorted(seen, key=float)
        numbers = _numbers(labels)
    tables: dict[Level, CodeTable] = {"nominal": CodeTable(coded(columns, labels), len(labels))}
    if ranked:
        inside = {m: [v if v in ranked else None for v in col] for m, col in columns.items()}
        tables["ordinal"] = CodeTable(coded(inside, ranked), len(ranked))
    if numbers is not None:
        tables["interval"] = CodeTable(tables["nominal"].codes, len(labels), numbers)
    return tables


def _alpha(table: CodeTable, level: Level) -> float | None:
    """`krippendorff.alpha` (via `_rater_agreement`); interval on the labels' numbers."""
    codes = table.codes
    if level != "interval" or table.values is None:
        return _alpha_of(codes, level, table.k)
    missing = np.isnan(codes)
    numbers = np.where(missing, np.nan, table.values[np.where(missing, 0, codes).astype(np.int64)])
    return _alpha_of(numbers, "interval", 0)


def _left_out(table: CodeTable, level: Level, members: Sequence[str], judges: int) -> list[LeftOut]:
    """Alpha without each of the first `judges` members (when two or more remain), by
    `alpha_value` (tests/test_panel.py checks it against `krippendorff.alpha`)."""
    if len(members) < 3:
        return []
    alpha = _alpha(table, level)
    out = []
    for j in range(judges):
        keep = np.arange(len(members)) != j
        without = alpha_value(table._replace(codes=table.codes[:, keep]), level)
        delta = None if without is None or alpha is None else without - alpha
        out.append(LeftOut(member=members[j], krippendorff_alpha=without, delta=delta))
    return out


def _row(
    head: Mapping[str, object],
    members: tuple[list[str], int],
    table: CodeTable,
    level: Level,
    ci: PanelCIs,
) -> PanelRow:
    """The row of one level; `members`: the names and how many of the first are judges
    (left out in turn)."""
    loo = _left_out(table, level, *members)
    raising = [e for e in loo if e.delta is not None and e.delta > _RAISES]
    worst = max(raising, key=lambda e: e.delta or 0.0, default=None)
    rated = (~np.isnan(table.codes)).sum(axis=1)
    nominal = level == "nominal"
    row_ci = {"krippendorff_alpha": ci.get(f"krippendorff_alpha_{level}")}
    row_ci |= {"fleiss_kappa": ci.get("fleiss_kappa")} if nominal else {}
    return PanelRow.model_validate(
        {**head}
        | {
            "level": level,
            "n_pairable": int((rated >= 2).sum()),
            "krippendorff_alpha": _alpha(table, level),
            "fleiss_kappa": _fleiss_of(table.codes, table.k) if nominal else None,
            "ci": row_ci if ci else {},
            "leave_one_out": loo,
            "lowers_most": worst.member if worst else None,
        }
    )


def panel_rows(
    dataset: str,
    panel: PanelKind,
    judges: Mapping[str, Sequence[str | None]],
    raters: Mapping[str, Sequence[str | None]],
    *,
    order: Sequence[str] | None,
    n_boot: int,
    seed: Seed,
    confidence: float = 0.95,
) -> list[PanelRow]:
    """One row per level of one panel; columns are labels aligned by item (None:
    missing). Empty when fewer than two members have a label."""
    columns = {m: col for m, col in {**judges, **raters}.items() if any(v is not None for v in col)}
    if len(columns) < 2:
        return []
    tables = _tables(columns, order)
    ci = panel_intervals(tables, n_boot=n_boot, seed=seed, confidence=confidence)
    nominal = tables["nominal"].codes
    head: dict[str, object] = {
        "dataset": dataset,
        "panel": panel,
        "members": list(columns),
        "n_items": nominal.shape[0],
        "n_complete": int((~np.isnan(nominal)).all(axis=1).sum()),
    }
    members = (list(columns), sum(1 for m in columns if m in judges))
    return [_row(head, members, table, level, ci) for level, table in tables.items()]


def dataset_panels(
    dataset: str,
    items: Sequence[ItemRecord],
    judge_labels: Mapping[str, Mapping[str, str | None]],
    *,
    order_of: OrderOf,
    boot: tuple[int, Seed],
) -> list[PanelRow]:
    """The "judges" and "judges+raters" panels of one single-response items dataset;
    `judge_labels`: judge -> item id -> comparable label; `order_of`: the labels' order
    (None: nominal) from every judge's and rater's label; `boot`: (n_boot, seed)."""
    names = sorted({r for it in items for r in it.ratings})
    human = {
        r: [None if (v := it.ratings.get(r)) is None else normalise_label(v) for it in items]
        for r in names
    }
    judges = {j: [labels.get(it.item_id) for it in items] for j, labels in judge_labels.items()}
    order = order_of(v for col in [*judges.values(), *human.values()] for v in col)
    n_boot, seed = boot
    rows = panel_rows(dataset, "judges", judges, {}, order=order, n_boot=n_boot, seed=seed)
    if human and judges:
        rows += panel_rows(
            dataset, "judges+raters", judges, human, order=order, n_boot=n_boot, seed=seed
        )
    return rows
