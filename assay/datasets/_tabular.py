"""Rows of a table file (JSONL, CSV, Parquet) with the line each came from.

ForceBench pairs and items datasets read CSV through `csv_rows`, and JSONL through
`json_objects`, so a broken file reads the same in both. Parquet needs the optional
`pyarrow` (`pip install 'assay[parquet]'`); its "line" is the 1-based row number.

A CSV's delimiter is the dataset block's `delimiter`, else `\t` for `.tsv`, else what
`csv.Sniffer` finds when the header does not split on commas (spreadsheets in many
locales save `;`-separated "CSV"): a semicolon file never reads as one wide column.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator

from assay.datasets._jsonl import decode_utf8, json_objects
from assay.errors import DatasetError

JSONL_SUFFIXES = (".jsonl", ".ndjson")
CSV_SUFFIXES = (".csv", ".tsv")
PARQUET_SUFFIXES = (".parquet", ".pq")
TABLE_SUFFIXES = JSONL_SUFFIXES + CSV_SUFFIXES + PARQUET_SUFFIXES
OTHER_DELIMITERS = ";\t|"  # what a "CSV" is split on when its header has no comma
SNIFF_BYTES = 64 * 1024


def _one_character(value: str) -> str:
    if len(value) != 1 or value in '"\r\n':
        raise ValueError(
            f"delimiter must be one character other than a quote or newline, got {value!r}"
        )
    return value


Delimiter = Annotated[str, AfterValidator(_one_character)]
"""A dataset block's `delimiter`: one character (`,`, `;`, `"\\t"`, `|`, ...)."""


def _header_cells(text: str, delimiter: str) -> int:
    """How many cells the first record has when split on `delimiter`."""
    try:
        return len(next(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter), []))
    except csv.Error:
        return 0


def sniff_delimiter(text: str) -> str | None:
    """The delimiter `csv.Sniffer` finds among `;`, tab and `|` that splits the header
    into several columns, or None."""
    try:
        found = csv.Sniffer().sniff(text[:SNIFF_BYTES], delimiters=OTHER_DELIMITERS).delimiter
    except csv.Error:
        return None
    return found if _header_cells(text, found) > 1 else None


def choose_delimiter(text: str, path: Path, given: str | None) -> str:
    """The block's `delimiter`; else tab for .tsv, comma when the header splits on it,
    and what the sniffer finds otherwise. A given delimiter that leaves the header one
    column while another splits it is refused, naming the one the file looks like."""
    if given is None:
        if path.suffix.lower() == ".tsv":
            return "\t"
        if _header_cells(text, ",") > 1:
            return ","
        return sniff_delimiter(text) or ","
    if _header_cells(text, given) == 1 and (other := sniff_delimiter(text)) not in (None, given):
        raise DatasetError(
            f"the header is one column when split on {given!r}, and the file looks "
            f"{other!r}-separated; set delimiter = {other!r} in the dataset block",
            file=path,
            line=1,
        )
    return given


def csv_delimiter(data: bytes, path: Path, given: str | None = None) -> str:
    """`choose_delimiter` over the file's first `SNIFF_BYTES` (what a run records)."""
    return choose_delimiter(data[:SNIFF_BYTES].decode("utf-8-sig", "ignore"), path, given)


def file_delimiter(path: Path, given: str | None) -> str | None:
    """The delimiter a CSV/TSV file at `path` is read with (None for other files, where
    a given `delimiter` is refused: it would be silently ignored)."""
    if path.suffix.lower() not in CSV_SUFFIXES:
        if given is not None:
            raise DatasetError("`delimiter` applies to .csv and .tsv files only", file=path)
        return None
    with path.open("rb") as fh:
        return csv_delimiter(fh.read(SNIFF_BYTES), path, given)


def csv_rows(
    data: bytes, path: Path, delimiter: str | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each CSV record as a dict with the physical line it starts on (header = line 1);
    `delimiter` None: detected (`choose_delimiter`)."""
    sep = csv_delimiter(data, path, delimiter)
    reader = csv.DictReader(io.StringIO(decode_utf8(data, path), newline=""), delimiter=sep)
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


def table_rows(
    data: bytes, path: Path, delimiter: str | None = None
) -> list[tuple[int, dict[str, Any]]]:
    """The rows of a JSONL, CSV/TSV or Parquet file, chosen by its suffix."""
    suffix = path.suffix.lower()
    if suffix in JSONL_SUFFIXES:
        return list(json_objects(data, path))
    if suffix in CSV_SUFFIXES:
        return list(csv_rows(data, path, delimiter))
    if suffix in PARQUET_SUFFIXES:
        return parquet_rows(data, path)
    raise DatasetError(f"dataset must be one of {', '.join(TABLE_SUFFIXES)}", file=path)
