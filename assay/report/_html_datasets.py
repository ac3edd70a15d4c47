"""Per-dataset metrics in the HTML report.

The page's charts and summary show pooled rows (dataset "all"); a run with more than one
dataset also gets a "By dataset" section with every row, from the same `Grid`s the
terminal and markdown reports use, so the three never disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay._table import Grid
from assay.report._views import (
    POOLED,
    correlation_grid,
    dataset_of,
    factuality_grid,
    force_grid,
    force_rows,
    gold_grid,
    has_datasets,
)

_FACT_PARTS = ("scores", "gold", "correlation")


def _pooled_part(part: Any) -> Any:
    if not isinstance(part, Mapping) or not isinstance(part.get("rows"), list):
        return part
    rows = [r for r in part["rows"] if not isinstance(r, Mapping) or dataset_of(r) == POOLED]
    return {**part, "rows": rows}


def pooled_metrics(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """`metrics` with only pooled rows in every part (what the charts and summary show)."""
    out = dict(metrics)
    out["forcebench"] = _pooled_part(metrics.get("forcebench"))
    fact = metrics.get("factuality")
    if isinstance(fact, Mapping):
        out["factuality"] = {k: _pooled_part(v) if k in _FACT_PARTS else v for k, v in fact.items()}
    return out


def _all_rows(metrics: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    fact = metrics.get("factuality")
    fact = fact if isinstance(fact, Mapping) else {}
    rows = list(force_rows(metrics))
    for key in _FACT_PARTS:
        part = fact.get(key)
        if isinstance(part, Mapping):
            rows += [r for r in part.get("rows") or [] if isinstance(r, Mapping)]
    return rows


def dataset_grids(metrics: Mapping[str, Any]) -> list[Grid]:
    """The "By dataset" tables, or none when the run's metrics have no per-dataset rows."""
    if not has_datasets(_all_rows(metrics)):
        return []
    grids: list[Grid | None] = []
    if force_rows(metrics):
        grids.append(force_grid(metrics, "ForceBench", axes=True))
    fact = metrics.get("factuality")
    if isinstance(fact, Mapping) and fact.get("scores"):
        grids.append(factuality_grid(metrics, "Factuality"))
        grids.append(gold_grid(metrics, "Factuality vs gold claim labels"))
        grids.append(correlation_grid(metrics, "Factuality vs gold response scores"))
    return [g for g in grids if g is not None]
