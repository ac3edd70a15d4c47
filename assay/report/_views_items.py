"""The report's tables for items runs: each judge against gold, pairwise preference
rates, and agreement among human raters, built from `metrics.json` alone."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from assay._table import Grid
from assay.report._cells import ci, num

Row = Mapping[str, Any]
_GOLD = (
    ("acc", "accuracy"),
    ("bal acc", "balanced_accuracy"),
    ("macro F1", "macro_f1"),
    ("κ", "cohen_kappa"),
    ("qw κ", "quadratic_kappa"),
)
_NUMERIC = (("pearson", "pearson"), ("spearman", "spearman"), ("τ", "kendall_tau"))
_PAIRWISE = (
    ("win A", "win_rate_a"),
    ("win B", "win_rate_b"),
    ("tie", "tie_rate"),
    ("consistent", "position_consistency"),
    ("bias", "position_bias"),
    ("acc", "accuracy"),
)


def _items(metrics: Mapping[str, Any]) -> Mapping[str, Any]:
    part = metrics.get("items")
    return part if isinstance(part, Mapping) else {}


def _present(rows: Sequence[Row], columns: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The columns some row has a value for (a run without gold scores shows no MAE)."""
    return [(head, key) for head, key in columns if any(r.get(key) is not None for r in rows)]


def _grid(title: str, headers: list[str], rows: list[tuple[str, ...]], caption: str) -> Grid:
    numeric = tuple(i >= 2 for i in range(len(headers)))  # judge/dataset, then numbers
    return Grid(title=title, headers=tuple(headers), numeric=numeric, rows=rows, caption=caption)


def single_grid(rows: Sequence[Row], title: str) -> Grid:
    """Per judge and dataset: coverage, agreement with gold labels (CI on accuracy and
    kappa), and with gold scores."""
    gold = _present(rows, _GOLD)
    numeric = _present(rows, _NUMERIC)
    mae = [("MAE", "mae")] if any(r.get("mae") is not None for r in rows) else []
    headers = ["judge", "dataset", "N", "cov"]
    for head, key in gold + numeric + mae:
        headers += [head, "95% CI"] if key in ("accuracy", "cohen_kappa", "spearman") else [head]
    out = []
    for r in rows:
        cells = [str(r["judge_id"]), str(r["dataset"]), str(r["n_items"])]
        cells.append(num(r.get("coverage"), ".0%"))
        for _, key in gold + numeric + mae:
            cells.append(num(r.get(key)))
            if key in ("accuracy", "cohen_kappa", "spearman"):
                cells.append(ci(r.get(f"{key}_lo"), r.get(f"{key}_hi")))
        out.append(tuple(cells))
    caption = (
        "vs gold over items with a verdict · cov: share of items with a verdict · "
        "κ: Cohen's kappa · qw κ: quadratic-weighted (integer labels) · CI: 95% bootstrap"
    )
    return _grid(title, headers, out, caption)


def pairwise_grid(rows: Sequence[Row], title: str) -> Grid:
    """Per pairwise judge: win and tie rates, position consistency and bias, accuracy."""
    columns = _present(rows, _PAIRWISE)
    headers = ["judge", "dataset", "N", *(head for head, _ in columns), "95% CI (acc)"]
    out = []
    for r in rows:
        cells = [str(r["judge_id"]), str(r["dataset"]), str(r["n_scored"])]
        cells += [num(r.get(key)) for _, key in columns]
        cells.append(ci(r.get("accuracy_lo"), r.get("accuracy_hi")))
        out.append(tuple(cells))
    caption = (
        "each item judged in both orders · win/tie: share of all verdicts · consistent: "
        "same verdict after swapping · bias: share of inconsistent verdicts for the first slot"
    )
    return _grid(title, headers, out, caption)


def raters_grid(rows: Sequence[Row], title: str) -> Grid:
    """Human raters: Krippendorff's alpha and Fleiss' kappa per dataset."""
    headers = ["dataset", "raters", "N", "level", "α", "95% CI", "Fleiss κ"]
    out = []
    for r in rows:
        interval = (r.get("ci") or {}).get("krippendorff_alpha") or (None, None)
        cells = [str(r["dataset"]), ", ".join(r["raters"]), str(r["n_items"]), str(r["level"])]
        cells += [num(r.get("krippendorff_alpha")), ci(*interval), num(r.get("fleiss_kappa"))]
        out.append(tuple(cells))
    return _grid(title, headers, out, "agreement among the human raters' columns")


def items_grids(metrics: Mapping[str, Any], label: str) -> list[Grid]:
    """The tables of an items run: single-response judges, pairwise judges, raters."""
    part = _items(metrics)
    rows = list(part.get("rows") or [])
    single = [r for r in rows if r.get("task") != "pairwise"]
    pairwise = [r for r in rows if r.get("task") == "pairwise"]
    grids = []
    if single:
        grids.append(single_grid(single, f"Judges vs gold · {label}"))
    if pairwise:
        grids.append(pairwise_grid(pairwise, f"Pairwise judges · {label}"))
    if part.get("raters"):
        grids.append(raters_grid(part["raters"], f"Human raters · {label}"))
    return grids
