"""Loading ForceBench pairs from JSONL or CSV with errors that point at file:line field."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from assay.core.pairs import ForcePair
from assay.datasets._jsonl import DatasetFile, json_objects
from assay.datasets._rows import check_unique, validate_row
from assay.datasets._tabular import CSV_SUFFIXES, JSONL_SUFFIXES, csv_rows
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


def load_pairs(
    path: str | Path, *, name: str | None = None, base: Path | None = None
) -> LoadedDataset:
    """Read a `.jsonl` or `.csv` ForceBench file; ids must be unique."""
    resolved = resolve_dataset_path(path, base=base)
    if resolved.is_dir():
        raise DatasetError("is a directory; pass a ForceBench .jsonl or .csv file", file=resolved)
    if not resolved.is_file():
        raise DatasetError("dataset file not found", file=resolved)
    data = resolved.read_bytes()
    pairs: list[ForcePair] = []
    seen: dict[str, int] = {}
    suffix = resolved.suffix.lower()
    if suffix in JSONL_SUFFIXES:
        rows = json_objects(data, resolved)
    elif suffix in CSV_SUFFIXES:
        rows = csv_rows(data, resolved)
    else:
        raise DatasetError("dataset must be .jsonl or .csv", file=resolved)
    for lineno, row in rows:
        pair = _validate(row, resolved, lineno)
        check_unique(pair.id, seen, resolved, lineno, "id")
        pairs.append(pair)
    if not pairs:
        raise DatasetError("dataset has no rows", file=resolved)
    return LoadedDataset(
        name=name or resolved.stem,
        path=str(resolved),
        sha256=hashlib.sha256(data).hexdigest(),
        pairs=pairs,
    )
