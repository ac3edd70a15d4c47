"""The report's table of ordinal agreement (`metrics.json` items rows with ordinal
statistics): linear and quadratic weighted kappa, ordinal Krippendorff alpha and MAE in
ranks of each judge against gold, with their CIs and the items they are over.

Built from `metrics.json` alone like every other items table, so terminal, markdown and
HTML show the same numbers (CSV and JSON carry them as row fields already). The order
used is said in the caption: the one a dataset or its judges' prompts declared
(`label_orders`), else the numeric order of integer labels.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from assay._table import Grid
from assay.report._cells import ci, num

Row = Mapping[str, Any]
_COLUMNS = (
    ("lin κ", "linear_kappa"),
    ("qw κ", "quadratic_kappa"),
    ("ord α", "ordinal_alpha"),
    ("MAE rank", "mae_rank"),
)


def _order_note(part: Mapping[str, Any], rows: Sequence[Row]) -> str:
    declared = part.get("label_orders")
    orders = declared if isinstance(declared, Mapping) else {}
    shown = [f"{d}: {' < '.join(map(str, o))}" for d, o in orders.items() if isinstance(o, list)]
    if any(r.get("dataset") not in orders for r in rows):
        shown.append("integer labels: numeric")
    return "; ".join(shown)


def ordinal_grids(metrics: Mapping[str, Any], label: str) -> list[Grid]:
    """One table of the judges with ordinal statistics (none when no labels are ordinal)."""
    part = metrics.get("items")
    part = part if isinstance(part, Mapping) else {}
    rows = [
        r
        for r in part.get("rows") or []
        if isinstance(r, Mapping) and any(r.get(key) is not None for _, key in _COLUMNS)
    ]
    if not rows:
        return []
    headers = ["judge", "dataset", "n"]
    for head, _ in _COLUMNS:
        headers += [head, "95% CI"]
    out = []
    for r in rows:
        named = r.get("n_of")
        n_of: Mapping[str, Any] = named if isinstance(named, Mapping) else {}
        n = n_of.get("quadratic_kappa", r.get("n_gold"))  # older metrics: n_gold
        cells = [str(r["judge_id"]), str(r["dataset"]), "—" if n is None else str(n)]
        for _, key in _COLUMNS:
            cells += [num(r.get(key)), ci(r.get(f"{key}_lo"), r.get(f"{key}_hi"))]
        out.append(tuple(cells))
    caption = (
        "vs gold, labels as ordered levels · n: items whose label and gold label are both "
        "levels (a label outside the order is left out) · lin κ / qw κ: Cohen's kappa "
        "weighted by |i-j| / (i-j)² · ord α: Krippendorff's alpha, ordinal level, judge and "
        "gold as two coders · MAE rank: mean |rank - gold rank| · CI: 95% bootstrap · "
        f"order (lowest first): {_order_note(part, rows)}"
    )
    notes = [str(n) for n in part.get("notes") or []]
    caption += "".join(f" · {n}" for n in notes)
    title = f"Ordinal agreement · {label}" if label else "Ordinal agreement"
    numeric = tuple(i >= 2 for i in range(len(headers)))
    return [Grid(title=title, headers=tuple(headers), numeric=numeric, rows=out, caption=caption)]
