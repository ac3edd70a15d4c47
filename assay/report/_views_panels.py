"""The report's tables of panel reliability (`metrics.json` items `panels`): Krippendorff's
alpha and Fleiss' kappa over all judges / judges + raters of a dataset, and each judge
left out in turn; and the same numbers as tidy CSV records (section "panels").

Built from `metrics.json` alone, like every other items table, so terminal, markdown,
HTML and CSV show the same numbers; a metrics.json without `panels` shows none.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from assay._table import Grid
from assay.report._cells import ci, num

Row = Mapping[str, Any]
_LEVELS = ("nominal", "ordinal", "interval")


def _panels(metrics: Mapping[str, Any]) -> list[Row]:
    part = metrics.get("items")
    rows = part.get("panels") if isinstance(part, Mapping) else None
    return [r for r in rows or [] if isinstance(r, Mapping)]


def _interval(row: Row, key: str) -> str:
    low, high = (row.get("ci") or {}).get(key) or (None, None)
    return ci(low, high)


def _flag(row: Row) -> str:
    """The judge whose removal raises alpha most, with that rise."""
    name = row.get("lowers_most")
    if not name:
        return "—"
    entries = row.get("leave_one_out") or []
    delta = next((e.get("delta") for e in entries if e.get("member") == name), None)
    return f"{name} ({num(delta, '+.3f')})"


def panels_grid(rows: Sequence[Row], title: str) -> Grid:
    """One row per dataset, panel and level: alpha (n pairable), Fleiss' kappa (n
    complete, nominal rows), and the judge whose removal raises alpha most."""
    headers = ("dataset", "panel", "members", "N", "level", "n pair.", "α", "95% CI") + (
        "n complete",
        "Fleiss κ",
        "95% CI",
        "lowers α most (Δ)",
    )
    out = []
    for r in rows:
        nominal = r.get("level") == "nominal"
        cells = [str(r["dataset"]), str(r["panel"]), ", ".join(r.get("members") or [])]
        cells += [str(r.get("n_items")), str(r.get("level")), str(r.get("n_pairable"))]
        cells += [num(r.get("krippendorff_alpha")), _interval(r, "krippendorff_alpha")]
        cells += [str(r.get("n_complete")) if nominal else "", num(r.get("fleiss_kappa"))]
        cells += [_interval(r, "fleiss_kappa") if nominal else "", _flag(r)]
        out.append(tuple(cells))
    caption = (
        "agreement of all the judges (samples: their majority vote), and of judges and "
        "human raters · α: Krippendorff's alpha over the n pair. items with two labels or "
        "more (ordinal: labels outside the order count as missing) · Fleiss κ: nominal, "
        "over the n complete items every member labelled · lowers α most: the judge whose "
        "removal raises α most (Δ: α without it minus α) · CI: 95% bootstrap over items"
    )
    numeric = tuple(i >= 3 and i != 4 and i != 11 for i in range(len(headers)))
    return Grid(title=title, headers=headers, numeric=numeric, rows=out, caption=caption)


def leave_one_out_grid(rows: Sequence[Row], title: str) -> Grid:
    """Per dataset, panel and judge: alpha without that judge and the change, per level."""
    levels = [lv for lv in _LEVELS if any(r.get("level") == lv for r in rows)]
    headers = ["dataset", "panel", "left out"]
    for level in levels:
        headers += [f"α {level}", "Δ"]
    cells: dict[tuple[str, str, str], dict[str, tuple[str, str]]] = {}
    for r in rows:
        for e in r.get("leave_one_out") or []:
            key = (str(r["dataset"]), str(r["panel"]), str(e["member"]))
            shown = (num(e.get("krippendorff_alpha")), num(e.get("delta"), "+.3f"))
            cells.setdefault(key, {})[str(r.get("level"))] = shown
    out = [
        (*key, *(v for lv in levels for v in by_level.get(lv, ("", ""))))
        for key, by_level in cells.items()
    ]
    caption = (
        "α of the panel without one judge, and Δ = that α minus the whole panel's: "
        "Δ > 0 means the judge lowers agreement"
    )
    numeric = tuple(i >= 3 for i in range(len(headers)))
    return Grid(title=title, headers=tuple(headers), numeric=numeric, rows=out, caption=caption)


def panel_grids(metrics: Mapping[str, Any], label: str) -> list[Grid]:
    """The panels table and, when some panel has three members or more, the
    leave-one-out table; none for a run without panels."""
    return panel_grids_of(_panels(metrics), label)


def panel_grids_of(rows: Sequence[Row], label: str) -> list[Grid]:
    """`panel_grids` of panel rows as dumped (`PanelRow.model_dump(mode="json")`): the
    run's `items.panels` or a comparison's `panels`."""
    if not rows:
        return []
    suffix = f" · {label}" if label else ""
    grids = [panels_grid(rows, "Judge panels: agreement" + suffix)]
    if any(r.get("leave_one_out") for r in rows):
        grids.append(leave_one_out_grid(rows, "Judge panels: each judge left out" + suffix))
    return grids


def _statistic(head: dict[str, Any], row: Row, key: str, metric: str, n: str) -> dict[str, Any]:
    low, high = (row.get("ci") or {}).get(key) or (None, None)
    value = {"metric": metric, "value": row.get(key), "n": row.get(n)}
    return head | value | {"ci_low": low, "ci_high": high}


def panel_records(metrics: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """Tidy CSV records (section "panels"): `krippendorff_alpha_<level>` over n pairable
    items and `fleiss_kappa` over n complete (group_by "panel", group the panel kind,
    judge_or_verifier its members), then each judge left out (group_by "leave_one_out"):
    alpha without it, `delta_...`, and `lowers_most_<level>` = 1 for the flagged judge."""
    for r in _panels(metrics):
        alpha = f"krippendorff_alpha_{r.get('level')}"
        base = {"section": "panels", "dataset": r.get("dataset"), "group": r.get("panel")}
        head = base | {"judge_or_verifier": ", ".join(r.get("members") or [])}
        head |= {"group_by": "panel"}
        yield _statistic(head, r, "krippendorff_alpha", alpha, "n_pairable")
        if r.get("level") == "nominal":
            yield _statistic(head, r, "fleiss_kappa", "fleiss_kappa", "n_complete")
        for e in r.get("leave_one_out") or []:
            left = base | {"judge_or_verifier": e.get("member"), "group_by": "leave_one_out"}
            yield left | {"metric": alpha, "value": e.get("krippendorff_alpha")}
            yield left | {"metric": f"delta_{alpha}", "value": e.get("delta")}
            if e.get("member") == r.get("lowers_most"):
                yield left | {"metric": f"lowers_most_{r.get('level')}", "value": 1}


def comparison_panel_grids(panels: Sequence[BaseModel]) -> list[Grid]:
    """`panel_grids` of a comparison's `panels` (the judges compared)."""
    return panel_grids_of([p.model_dump(mode="json") for p in panels], "")
