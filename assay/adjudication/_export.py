"""`assay labels export`: a run's gold after adjudication as a CSV an items dataset reads.

The columns are an items dataset's defaults (`id`, `gold_label`, `gold_score`,
`gold_preference`), so `[[datasets]] kind = "items"` with `path = "labels.csv"` reads the
file as it is; the other columns (`dataset`, `gold_source`, `annotator`, `at`, `note`,
`previous`) say where each row's gold came from. Scores are the dataset's: a person
adjudicates labels and preferences, not scores.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path
from typing import IO

from assay.adjudication._model import LABELS_FILE, Adjudication, AdjudicationError
from assay.adjudication._store import read_adjudications
from assay.core.records import ItemRecord
from assay.core.rundir import ITEMS_FILE, latest

__all__ = ["EXPORT_COLUMNS", "export_rows", "write_labels_csv"]

EXPORT_COLUMNS = (
    "id",
    "dataset",
    "gold_label",
    "gold_score",
    "gold_preference",
    "gold_source",
    "annotator",
    "at",
    "note",
    "previous",
)
Row = dict[str, str]


def _cell(value: object) -> str:
    return "" if value is None else str(value)


def _row(item: ItemRecord, adj: Adjudication | None) -> Row:
    """One item: its gold after adjudication and, when adjudicated, who, when and why."""
    label, preference = item.gold_label, item.gold_preference
    if adj is not None:
        label = adj.label if adj.label is not None else label
        preference = adj.preference if adj.preference is not None else preference
    return {
        "id": item.item_id,
        "dataset": item.dataset,
        "gold_label": _cell(label),
        "gold_score": _cell(item.gold_score),
        "gold_preference": _cell(preference),
        "gold_source": "adjudicated" if adj is not None else "dataset",
        "annotator": _cell(adj and adj.annotator),
        "at": adj.at.isoformat() if adj is not None else "",
        "note": _cell(adj and adj.note),
        "previous": _cell(adj and adj.previous),
    }


def _check_unique_ids(rows: Iterable[Row]) -> None:
    """An items dataset needs unique ids: several datasets sharing an id need --dataset."""
    seen: dict[str, str] = {}
    for row in rows:
        other = seen.setdefault(row["id"], row["dataset"])
        if other != row["dataset"]:
            raise AdjudicationError(
                f"item id {row['id']!r} is in datasets {other!r} and {row['dataset']!r}; "
                "export one dataset at a time with --dataset"
            )


def export_rows(
    run_dir: Path, *, dataset: str | None = None, adjudicated_only: bool = False
) -> list[Row]:
    """The rows `assay labels export` writes, in items.jsonl order (items only judged,
    without a row there, after them); a run without a labels file is refused."""
    run_dir = Path(run_dir)
    if not (run_dir / LABELS_FILE).is_file():
        raise AdjudicationError(
            "no labels file: nothing was adjudicated in this run "
            "(adjudicate items in `assay view`)",
            file=run_dir / LABELS_FILE,
        )
    adjudicated = read_adjudications(run_dir)
    items = dict(latest(run_dir / ITEMS_FILE, ItemRecord))
    for key, adj in adjudicated.items():
        if key not in items:
            items[key] = ItemRecord(
                dataset=key[0], item_id=key[1], pairwise=adj.preference is not None
            )
    known = sorted({d for d, _ in items})
    if dataset is not None and dataset not in known:
        raise AdjudicationError(
            f"--dataset {dataset!r}: not in this run; its datasets: {', '.join(known)}",
            file=run_dir,
        )
    rows = [
        _row(item, adjudicated.get(key))
        for key, item in items.items()
        if (dataset is None or key[0] == dataset) and (not adjudicated_only or key in adjudicated)
    ]
    _check_unique_ids(rows)
    return rows


def write_labels_csv(rows: Iterable[Row], out: IO[str]) -> int:
    """Write `rows` as CSV (header first) to `out`; the number of rows written."""
    writer = csv.DictWriter(out, fieldnames=EXPORT_COLUMNS, lineterminator="\n")
    writer.writeheader()
    n = 0
    for row in rows:
        writer.writerow(row)
        n += 1
    return n
