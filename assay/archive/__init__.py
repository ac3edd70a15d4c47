"""A run directory as one portable archive a reader can check: `assay pack` / `assay unpack`.

`pack_run` writes a deterministic gzip tar of a finished run (one top folder, the run's
name) with a `SHA256SUMS` list, after a secrets scan that refuses anything credential-
like; `--with-data` adds the dataset files the manifest names, checked by sha256.
`unpack_archive` refuses unsafe members and files that do not match the list before it
extracts anything.
"""

from __future__ import annotations

from assay.archive._data import DataCopy, Packed
from assay.archive._files import PACKED_FILE, SUMS_FILE, ArchiveError
from assay.archive._pack import PackResult, pack_run
from assay.archive._unpack import ChecksumMismatch, unpack_archive

__all__ = [
    "PACKED_FILE",
    "SUMS_FILE",
    "ArchiveError",
    "ChecksumMismatch",
    "DataCopy",
    "PackResult",
    "Packed",
    "pack_run",
    "unpack_archive",
]
