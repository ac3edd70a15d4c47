"""Rows of a table file (JSONL, CSV, Parquet) with the line each came from.

ForceBench pairs and items datasets read CSV through `csv_rows`, and JSONL through
`json_objects`, so a broken file reads the same in both. Parquet needs the optional
`pyarrow` (`pip install 'assay[parquet]'`); its "line" is the 1-based row number.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from assay.datasets._jsonl import decode_utf8, json_objects
from assay.errors import DatasetError

JSONL_SUFFIXES = (".jsonl", ".ndjson")
CSV_SUFFIXES = (".csv",)
PARQUET_SUFFIXES = (".parquet", ".pq")
TABLE_SUFFIXES = JSONL_SUFFIXES + CSV_SUFFIXES + PARQUET_SUFFIXES


def csv_rows(data: bytes, path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each CSV record as a dict with the physical line it starts on (header = line 1)."""
    reader = csv.DictReader(io.StringIO(decode_utf8(data, path), newline=""))
    lineno = 2  # a quoted cell may span several lines, so count from the reader
    try:
        for row in reader:
            if None in row:
                raise DatasetError("row has more cells than the header", file=path, line=lineno)
            yield lineno, dict(row)
            lineno = reader.line_num + 1
    except csv.Error as exc:
        raise DatasetError(f"invalid CSV: {exc}", file=path, line=reader.line_num) from None


def parquet_rows(data: bytes, path: Path) -> list[tuple[int, dict[str, Any]]]:
    """Each Parquet row as a dict, numbered from 1; a missing pyarrow is one clear line."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise DatasetError(
            "reading Parquet needs pyarrow: pip install 'assay[parquet]'", file=path
        ) from None
    try:
        table = pq.read_table(io.BytesIO(data))
    except Exception as exc:  # pyarrow raises ArrowInvalid, OSError, ... for a bad file
        raise DatasetError(f"not a readable Parquet file: {exc}", file=path) from None
    return list(enumerate(table.to_pylist(), start=1))


def table_rows(data: bytes, path: Path) -> list[tuple[int, dict[str, Any]]]:
    """The rows of a JSONL, CSV or Parquet file, chosen by its suffix."""
    suffix = path.suffix.lower()
    if suffix in JSONL_SUFFIXES:
        return list(json_objects(data, path))
    if suffix in CSV_SUFFIXES:
        return list(csv_rows(data, path))
    if suffix in PARQUET_SUFFIXES:
        return parquet_rows(data, path)
    raise DatasetError(f"dataset must be one of {', '.join(TABLE_SUFFIXES)}", file=path)
