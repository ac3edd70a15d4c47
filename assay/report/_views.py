"""The report's tables as `Grid`s, built from `metrics.json` alone.

Every renderer (terminal, plain text, markdown) shows these same cells, so a number is
formatted in one place. Rows carrying a `dataset` other than "all" add a dataset column;
rows without one (pooled, or runs from before per-dataset metrics) count as "all".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from assay._table import Grid
from assay.report._cells import ci, num
from assay.report._views_items import items_grids

AXES = ("relation", "modality", "scope", "temporal", "numeric")
POOLED = "all"
Row = Mapping[str, Any]


def dataset_of(row: Row) -> str:
    return str(row.get("dataset") or POOLED)


def has_datasets(rows: Sequence[Row]) -> bool:
    """True when the rows break metrics down by dataset (the run has more than one)."""
    return any(dataset_of(r) != POOLED for r in rows)


def _dataset_key(row: Row) -> tuple[int, str]:
    name = dataset_of(row)
    return (1 if name == POOLED else 0, name)


def _with_dataset(split: bool, row: Row, cells: list[str]) -> tuple[str, ...]:
    return tuple([dataset_of(row), *cells] if split else cells)


def _part_rows(part: Any) -> list[Row]:
    return list((part or {}).get("rows") or []) if isinstance(part, Mapping) else []


def force_rows(metrics: Mapping[str, Any]) -> list[Row]:
    return _part_rows(metrics.get("forcebench"))


def force_grid(metrics: Mapping[str, Any], title: str, *, axes: bool = True) -> Grid:
    """One row per judge (and dataset): N, failed, MVR and FS with CIs, MVR per axis."""
    rows = force_rows(metrics)
    split = has_datasets(rows)
    per_axis = {
        (dataset_of(r), r["judge_id"], r["group"]): r["mvr"]
        for r in rows
        if r.get("group_by") == "axis"
    }
    overall = [r for r in rows if r.get("group_by") == "overall"]
    overall.sort(key=lambda r: (_dataset_key(r), _sort_num(r.get("mvr")), -_sort_num(r.get("fs"))))
    headers = ["judge", "N", "fail", "MVR", "95% CI", "FS", "95% CI"]
    headers += [a[:4] for a in AXES] if axes else []
    grid_rows = []
    for r in overall:
        cells = [str(r["judge_id"]), str(r["n"]), str(r["n_failed"]), num(r.get("mvr"))]
        cells += [ci(r.get("mvr_lo"), r.get("mvr_hi")), num(r.get("fs"))]
        cells.append(ci(r.get("fs_lo"), r.get("fs_hi")))
        if axes:
            key = (dataset_of(r), r["judge_id"])
            cells += [num(per_axis.get((*key, a))) for a in AXES]
        grid_rows.append(_with_dataset(split, r, cells))
    caption = "MVR lower is better · FS higher is better · CI: 95% bootstrap"
    caption += " · per-axis columns: MVR" if axes else ""
    return _grid(title, split, headers, 1, grid_rows, caption)


def _sort_num(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else float("inf")


def _grid(
    title: str, split: bool, headers: list[str], n_text: int, rows: list[tuple[str, ...]], cap: str
) -> Grid:
    """Columns after the first `n_text` identifier columns are numeric."""
    heads = (["dataset"] if split else []) + headers
    n_ids = n_text + (1 if split else 0)
    numeric = tuple(i >= n_ids for i in range(len(heads)))
    return Grid(title=title, headers=tuple(heads), numeric=numeric, rows=rows, caption=cap)


def detail_grid(metrics: Mapping[str, Any], title: str) -> Grid:
    """Per-axis and per-severity rows (the `--detail` view)."""
    rows = force_rows(metrics)
    split = has_datasets(rows)
    headers = ["judge", "group_by", "group", "n", "failed", "MVR", "95% CI", "FS", "95% CI"]
    out = []
    for r in sorted(rows, key=_dataset_key):
        if r.get("group_by") == "overall":
            continue
        cells = [str(r["judge_id"]), str(r["group_by"]), str(r["group"]), str(r["n"])]
        cells += [str(r["n_failed"]), num(r.get("mvr")), ci(r.get("mvr_lo"), r.get("mvr_hi"))]
        cells += [num(r.get("fs")), ci(r.get("fs_lo"), r.get("fs_hi"))]
        out.append(_with_dataset(split, r, cells))
    return _grid(title, split, headers, 3, out, "")


def _fact(metrics: Mapping[str, Any]) -> Mapping[str, Any]:
    part = metrics.get("factuality")
    return part if isinstance(part, Mapping) else {}


def factuality_grid(metrics: Mapping[str, Any], title: str) -> Grid:
    """One row per verifier (and dataset): macro and micro always labelled, with CIs."""
    rows = _part_rows(_fact(metrics).get("scores"))
    split = has_datasets(rows)
    penalized = any(r.get("macro_length_penalized") is not None for r in rows)
    headers = ["verifier", "resp", "0-cl", "claims", "unsc", "macro", "95% CI"]
    headers += ["micro", "95% CI"]
    headers += ["macro·LP", "95% CI"] if penalized else []
    out = []
    for r in sorted(rows, key=_dataset_key):
        cells = [str(r["verifier_id"]), str(r["n_responses"]), num(r.get("zero_claim_rate"), ".0%")]
        cells += [str(r["n_claims"]), str(r["n_unscored"]), num(r.get("macro"))]
        cells += [ci(r.get("macro_lo"), r.get("macro_hi")), num(r.get("micro"))]
        cells.append(ci(r.get("micro_lo"), r.get("micro_hi")))
        if penalized:
            cells.append(num(r.get("macro_length_penalized")))
            lp_lo, lp_hi = r.get("macro_length_penalized_lo"), r.get("macro_length_penalized_hi")
            cells.append(ci(lp_lo, lp_hi))
        out.append(_with_dataset(split, r, cells))
    caption = (
        "supported / scored claims · macro: mean over responses · micro: over all claims · "
        "CI: 95% bootstrap · 0-cl: responses with no claim · unsc: claims not scored "
        "(never counted as supported)"
    )
    caption += " · LP: FActScore length penalty" if penalized else ""
    if not out:  # an empty table says why
        caption = f"empty: {_fact(metrics).get('empty') or 'no verifier recorded a verdict'}"
    return _grid(title, split, headers, 1, out, caption)


def gold_grid(metrics: Mapping[str, Any], title: str) -> Grid | None:
    """Agreement with gold claim labels, when the run has them."""
    rows = _part_rows(_fact(metrics).get("gold"))
    if not rows:
        return None
    split = has_datasets(rows)
    headers = ["verifier", "n", "balanced acc", "F1(supported)", "excluded unscored"]
    out = [
        _with_dataset(
            split,
            r,
            [str(r["verifier_id"]), str(r.get("n")), num(r.get("balanced_accuracy"))]
            + [num(r.get("f1")), str(r.get("n_excluded_unscored"))],
        )
        for r in sorted(rows, key=_dataset_key)
    ]
    return _grid(title, split, headers, 1, out, "")


def correlation_grid(metrics: Mapping[str, Any], title: str) -> Grid | None:
    """Spearman correlation of response factuality with gold, when the run has it."""
    rows = _part_rows(_fact(metrics).get("correlation"))
    if not rows:
        return None
    split = has_datasets(rows)
    headers = ["verifier", "n", "spearman", "95% CI"]
    out = [
        _with_dataset(
            split,
            r,
            [str(r["verifier_id"]), str(r.get("n")), num(r.get("spearman"))]
            + [ci(r.get("spearman_lo"), r.get("spearman_hi"))],
        )
        for r in sorted(rows, key=_dataset_key)
    ]
    return _grid(title, split, headers, 1, out, "")


def report_grids(
    metrics: Mapping[str, Any], label: str, *, axes: bool = True, detail: bool = False
) -> list[Grid]:
    """Every table of a run, in report order; `label` names the run in the titles."""
    grids: list[Grid] = []
    if force_rows(metrics):
        grids.append(force_grid(metrics, f"ForceBench · {label}", axes=axes))
        if detail:
            grids.append(detail_grid(metrics, f"ForceBench by group · {label}"))
    if _fact(metrics):
        grids.append(factuality_grid(metrics, f"Factuality · {label}"))
        extra = [
            gold_grid(metrics, f"Factuality vs gold claim labels · {label}"),
            correlation_grid(metrics, f"Factuality vs gold response scores · {label}"),
        ]
        grids += [g for g in extra if g is not None]
    grids += items_grids(metrics, label)
    return grids
