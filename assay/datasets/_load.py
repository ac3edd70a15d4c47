"""Loading ForceBench pairs from JSONL or CSV with errors that point at file:line field."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from assay.core.pairs import ForcePair
from assay.datasets._jsonl import DatasetFile, json_objects
from assay.datasets._rows import check_unique, validate_row
from assay.datasets._tabular import CSV_SUFFIXES, JSONL_SUFFIXES, csv_rows, file_delimiter
from assay.errors import DatasetError

BUILTIN_DATA_DIR = Path(__file__).resolve().parent.parent / "data"
BUILTIN_DATASETS = {
    "forcebench-demo": "forcebench_demo.jsonl",
    "factuality-demo": "factuality_demo.jsonl",
}


class LoadedDataset(DatasetFile):
    """Pairs plus the identity of the file they came from."""

    pairs: list[ForcePair]

    @property
    def rows(self) -> int:
        return len(self.pairs)

    @property
    def ids(self) -> list[str]:
        return [p.id for p in self.pairs]

    def iter_pairs(self) -> Iterator[ForcePair]:
        return iter(self.pairs)


def resolve_dataset_path(path: str | Path, *, base: Path | None = None) -> Path:
    """`builtin:NAME` names a bundled dataset; relative paths resolve against `base`."""
    text = str(path)
    if text.startswith("builtin:"):
        name = text.removeprefix("builtin:")
        if name not in BUILTIN_DATASETS:
            raise DatasetError(
                f"unknown built-in dataset {name!r}; known: {', '.join(BUILTIN_DATASETS)}"
            )
        return BUILTIN_DATA_DIR / BUILTIN_DATASETS[name]
    p = Path(text).expanduser()
    if not p.is_absolute() and base is not None:
        p = base / p
    return p


def _validate(row: dict[str, Any], path: Path, line: int) -> ForcePair:
    cleaned = {k: (None if v == "" else v) for k, v in row.items()}
    return validate_row(ForcePair, cleaned, path, line)


def numbered_pairs(
    rows: Iterable[tuple[int, dict[str, Any]]], path: Path
) -> Iterator[tuple[int, ForcePair]]:
    """Each row as a validated pair, with its line."""
    for lineno, row in rows:
        yield lineno, _validate(row, path, lineno)


def dataset_file(path: str | Path, base: Path | None) -> Path:
    """The ForceBench file `path` names: it must exist and be `.jsonl` or `.csv`."""
    resolved = resolve_dataset_path(path, base=base)
    if resolved.is_dir():
        raise DatasetError(
            "is a directory; pass a ForceBench .jsonl, .csv or .tsv file", file=resolved
        )
    if not resolved.is_file():
        raise DatasetError("dataset file not found", file=resolved)
    if resolved.suffix.lower() not in (*JSONL_SUFFIXES, *CSV_SUFFIXES):
        raise DatasetError("dataset must be .jsonl, .csv or .tsv", file=resolved)
    return resolved


def load_pairs(
    path: str | Path,
    *,
    name: str | None = None,
    base: Path | None = None,
    delimiter: str | None = None,
) -> LoadedDataset:
    """Read a `.jsonl` or `.csv` ForceBench file; ids must be unique."""
    resolved = dataset_file(path, base)
    sep = file_delimiter(resolved, delimiter)
    data = resolved.read_bytes()
    pairs: list[ForcePair] = []
    seen: dict[str, int] = {}
    if resolved.suffix.lower() in JSONL_SUFFIXES:
        rows = json_objects(data, resolved)
    else:
        rows = csv_rows(data, resolved, sep)
    for lineno, pair in numbered_pairs(rows, resolved):
        check_unique(pair.id, seen, resolved, lineno, "id")
        pairs.append(pair)
    if not pairs:
        raise DatasetError("dataset has no rows", file=resolved)
    return LoadedDataset(
        name=name or resolved.stem,
        path=str(resolved),
        sha256=hashlib.sha256(data).hexdigest(),
        delimiter=sep,
        pairs=pairs,
    )
