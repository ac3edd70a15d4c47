"""Panel reliability of the judges compared: Krippendorff's alpha and Fleiss' kappa over
all of them, and with the human raters, per dataset, each judge left out in turn
(`assay.metrics.panel_rows`, as in a run's items metrics), and the rows as DataFrames.

Across runs the panel is every judge compared, on the items every run has; samples `#k`
of a judge with a majority vote are left out (the vote stands for them), as in the
kappa matrix and the run's metrics.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import pandas as pd

from assay.compare._item_outcomes import LabelTable
from assay.metrics import LeftOut, PanelRow, panel_rows
from assay.metrics._majority import sample_base
from assay.metrics._ordinal import resolve_order

PANEL_COLUMNS = [
    "dataset",
    "panel",
    "level",
    "members",
    "n_items",
    "n_pairable",
    "n_complete",
    "krippendorff_alpha",
    "krippendorff_alpha_lo",
    "krippendorff_alpha_hi",
    "fleiss_kappa",
    "fleiss_kappa_lo",
    "fleiss_kappa_hi",
    "lowers_most",
]
LEFT_OUT_COLUMNS = ["dataset", "panel", "level", *LeftOut.model_fields]


def panel_table(table: LabelTable, *, n_boot: int, seed: int, confidence: float) -> list[PanelRow]:
    """The "judges" and "judges+raters" panels of each dataset of the compared items."""
    voted = {j.removesuffix("#majority") for j in table.judges if j.endswith("#majority")}
    judges = {
        j: v
        for j, v in table.judges.items()
        if sample_base(j) not in voted and j not in table.juries  # a jury repeats its members
    }
    raters = table.raters()
    rows: list[PanelRow] = []
    for dataset in sorted({d for d, _ in table.keys}):
        at = [i for i, (d, _) in enumerate(table.keys) if d == dataset]
        mine = {j: [labels[i] for i in at] for j, labels in judges.items()}
        human = {r: [labels[i] for i in at] for r, labels in raters.items()}
        human = {(r if r not in mine else f"rater:{r}"): v for r, v in human.items()}
        values = [v for col in [*mine.values(), *human.values()] for v in col]
        order = resolve_order(values, table.orders.get(dataset, table.declared))
        run = partial(panel_rows, order=order, n_boot=n_boot, seed=seed, confidence=confidence)
        rows += run(dataset, "judges", mine, {})
        if human and mine:
            rows += run(dataset, "judges+raters", mine, human)
    return rows


def _bounds(row: PanelRow, key: str) -> dict[str, float | None]:
    low, high = row.ci.get(key) or (None, None)
    return {f"{key}_lo": low, f"{key}_hi": high}


def panels_frame(panels: Sequence[PanelRow]) -> pd.DataFrame:
    """One row per dataset, panel and level: alpha and Fleiss' kappa with CIs, members
    joined by ", ", the judge whose removal raises alpha most."""
    rows = [
        row.model_dump(include=set(PANEL_COLUMNS))
        | {"members": ", ".join(row.members)}
        | _bounds(row, "krippendorff_alpha")
        | _bounds(row, "fleiss_kappa")
        for row in panels
    ]
    return pd.DataFrame(rows, columns=PANEL_COLUMNS)


def left_out_frame(panels: Sequence[PanelRow]) -> pd.DataFrame:
    """One row per dataset, panel, level and judge left out: alpha without it, delta."""
    rows = [
        {"dataset": row.dataset, "panel": row.panel, "level": row.level, **entry.model_dump()}
        for row in panels
        for entry in row.leave_one_out
    ]
    return pd.DataFrame(rows, columns=LEFT_OUT_COLUMNS)
