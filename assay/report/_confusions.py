"""Every confusion matrix of a run, cell by cell, read from `metrics.json` alone.

Three matrices exist (the `matrix` name of a cell):
- `confusion`: an items judge's labels against gold labels (`items.rows[].labels`,
  `confusion` as [gold][predicted]), over the items with gold and a verdict;
- `claim_confusion`: a verifier against gold claim labels, binary (gold supported or not ×
  predicted supported or not; `factuality.gold.rows[].confusion`), unscored claims as the
  run's gold metrics count them;
- `claim_label_confusion`: the same claims by raw gold label × verdict label, or the
  status of a claim the verifier did not score (`label_confusion`).

One cell per (dataset, judge or verifier, matrix, gold, predicted), zero cells included,
so a pivot gives the square matrix back and the counts sum to the matrix's n.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pandas as pd

from assay._values import dict_of, list_of

POOLED = "all"
CELL_COLUMNS = ("dataset", "judge_or_verifier", "matrix", "gold", "predicted", "count")
Cell = tuple[Mapping[str, Any], dict[str, Any]]
"""(the metrics row a matrix belongs to, one cell of it)"""
_GOLD_MATRICES = (("confusion", "claim_confusion"), ("label_confusion", "claim_label_confusion"))


def _items_cells(metrics: Mapping[str, Any]) -> Iterator[Cell]:
    for row in list_of(dict_of(metrics.get("items")).get("rows")):
        row = dict_of(row)
        labels = [str(x) for x in list_of(row.get("labels"))]
        matrix = list_of(row.get("confusion"))
        for i, gold in enumerate(labels):
            counts = list_of(matrix[i]) if i < len(matrix) else []
            for k, pred in enumerate(labels):
                count = counts[k] if k < len(counts) else 0
                yield row, {"matrix": "confusion", "gold": gold, "predicted": pred, "count": count}


def _nested_cells(table: Mapping[str, Any]) -> Iterator[tuple[str, str, int]]:
    """A `gold -> predicted -> count` dict as cells, absent cells 0."""
    columns: list[str] = []
    for counts in table.values():
        columns += [c for c in dict_of(counts) if c not in columns]
    for gold, counts in table.items():
        for pred in columns:
            yield str(gold), str(pred), int(dict_of(counts).get(pred) or 0)


def _gold_cells(metrics: Mapping[str, Any]) -> Iterator[Cell]:
    gold = dict_of(dict_of(metrics.get("factuality")).get("gold"))
    for row in list_of(gold.get("rows")):
        row = dict_of(row)
        for field, matrix in _GOLD_MATRICES:
            for g, p, n in _nested_cells(dict_of(row.get(field))):
                yield row, {"matrix": matrix, "gold": g, "predicted": p, "count": n}


def confusion_cells(metrics: Mapping[str, Any]) -> Iterator[Cell]:
    """(the metrics row, one cell) for every cell of every matrix, items judges first."""
    yield from _items_cells(metrics)
    yield from _gold_cells(metrics)


def _who(row: Mapping[str, Any]) -> Any:
    return row.get("judge_id") or row.get("verifier_id")


def confusions_frame(metrics: Mapping[str, Any]) -> pd.DataFrame:
    """Long: one row per cell (`CELL_COLUMNS`); `frame.pivot_table(index="gold",
    columns="predicted", values="count")` of one judge's rows is its matrix."""
    rows = [
        {"dataset": row.get("dataset") or POOLED, "judge_or_verifier": _who(row), **cell}
        for row, cell in confusion_cells(metrics)
    ]
    return pd.DataFrame(rows, columns=list(CELL_COLUMNS)).astype({"count": "int64"})


def confusion_records(metrics: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """The cells as tidy CSV records (section "confusion"): metric the matrix, group_by
    the gold label, group the predicted one, value the count, n the matrix's total."""
    cells = list(confusion_cells(metrics))
    totals: dict[tuple[int, str], int] = {}
    for row, cell in cells:
        key = (id(row), cell["matrix"])
        totals[key] = totals.get(key, 0) + int(cell["count"])
    for row, cell in cells:
        yield {
            "section": "confusion",
            "dataset": row.get("dataset") or POOLED,
            "judge_or_verifier": _who(row),
            "model": row.get("model"),
            "prompt": None,  # the judge id names it; the metric rows carry it
            "group_by": cell["gold"],
            "group": cell["predicted"],
            "metric": cell["matrix"],
            "value": int(cell["count"]),
            "ci_low": None,
            "ci_high": None,
            "n": totals[(id(row), cell["matrix"])],
        }


__all__ = ["CELL_COLUMNS", "confusion_cells", "confusion_records", "confusions_frame"]
