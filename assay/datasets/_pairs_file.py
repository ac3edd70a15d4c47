"""A ForceBench file validated once and then read again as the run goes, instead of held.

A run of 100,000 judgments over 50,000 pairs would otherwise keep every pair (claims,
evidence, question) as objects for its whole life, ~3 KB each. `scan_pairs` checks every
row (errors at file:line field, before any request) and keeps only the ids; the judge
stage reads the pairs again in file order (`PairsFile.iter_pairs`), and refuses a file
whose bytes changed since the scan, so the records always match the manifest's sha256.
A small file (`HOLD_BYTES`) keeps its pairs instead: reading it twice would cost more
than holding it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

from pydantic import Field, PrivateAttr

from assay.core.pairs import ForcePair
from assay.datasets._jsonl import DatasetFile, stream_json_objects
from assay.datasets._load import LoadedDataset, dataset_file, numbered_pairs
from assay.datasets._rows import check_unique
from assay.datasets._tabular import CSV_SUFFIXES, csv_rows, file_delimiter
from assay.errors import DatasetError

HOLD_BYTES = 2 * 2**20
"""A file up to this size keeps its validated pairs (a few thousand: a few MB), read once;
a larger one is read again as the run goes."""


class PairsFile(DatasetFile):
    """A validated ForceBench file: its identity, its size and its pair ids in file order
    (kept as one JSON string, ~15 bytes an id instead of ~65 as a list of strings), and,
    for a small file, the pairs themselves."""

    rows: int
    ids_json: str = Field(repr=False)
    _held: list[ForcePair] | None = PrivateAttr(default=None)

    @property
    def ids(self) -> list[str]:
        ids: list[str] = json.loads(self.ids_json)
        return ids

    def iter_pairs(self) -> Iterator[ForcePair]:
        """The pairs in file order: those held, or read again (a DatasetError if the file
        changed since the scan)."""
        if self._held is not None:
            yield from self._held
            return
        path = Path(self.path)
        digest = hashlib.sha256()
        for _, pair in _read(path, digest, self.delimiter):
            yield pair
        if digest.hexdigest() != self.sha256:
            raise DatasetError(
                "the file changed while the run was reading it (its sha256 differs from "
                "the one recorded when the run started); run the same command again",
                file=path,
            )

    def load(self) -> LoadedDataset:
        """Every pair in memory, as `load_pairs` returns them."""
        return LoadedDataset(
            name=self.name,
            path=self.path,
            sha256=self.sha256,
            delimiter=self.delimiter,
            pairs=list(self.iter_pairs()),
        )


def _read(
    path: Path, digest: hashlib._Hash, delimiter: str | None
) -> Iterator[tuple[int, ForcePair]]:
    """Each validated pair with its line; JSONL a line at a time, CSV whole."""
    if path.suffix.lower() in CSV_SUFFIXES:
        data = path.read_bytes()
        digest.update(data)
        yield from numbered_pairs(csv_rows(data, path, delimiter), path)
    else:
        yield from numbered_pairs(stream_json_objects(path, digest), path)


def scan_pairs(
    path: str | Path,
    *,
    name: str | None = None,
    base: Path | None = None,
    delimiter: str | None = None,
) -> PairsFile:
    """Validate a `.jsonl` or `.csv` ForceBench file (unique ids) keeping only its ids."""
    resolved = dataset_file(path, base)
    digest = hashlib.sha256()
    ids: list[str] = []
    seen: dict[str, int] = {}
    held: list[ForcePair] | None = [] if resolved.stat().st_size <= HOLD_BYTES else None
    sep = file_delimiter(resolved, delimiter)
    for lineno, pair in _read(resolved, digest, sep):
        check_unique(pair.id, seen, resolved, lineno, "id")
        ids.append(pair.id)
        if held is not None:
            held.append(pair)
    if not ids:
        raise DatasetError("dataset has no rows", file=resolved)
    scanned = PairsFile(
        name=name or resolved.stem,
        path=str(resolved),
        sha256=digest.hexdigest(),
        delimiter=sep,
        rows=len(ids),
        ids_json=json.dumps(ids, ensure_ascii=False),
    )
    scanned._held = held
    return scanned
