"""Whole-file writes that a reader never sees half of: a temporary sibling, fsync, rename.

The one home of atomic writes in assay: run-directory files (manifest, metrics, derived
JSONL), reports and policy outputs all go through `atomic_writer`, so a crash, a full
disk or Ctrl-C leaves the old file (or none) and no temporary file, never a truncated one.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any

__all__ = ["atomic_writer", "write_bytes_atomic"]


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_UMASK = _umask()  # read once, at import: mkstemp creates 0600, outputs get the usual 0644


@contextmanager
def atomic_writer(path: Path, *, binary: bool = False) -> Iterator[IO[Any]]:
    """Write `path` through the handle yielded (text in UTF-8, or bytes); the file is
    replaced when the block ends cleanly and left untouched when it raises."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else _TEXT)) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)
        os.replace(tmp, path)
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp)
        raise


_TEXT: dict[str, Any] = {"encoding": "utf-8", "newline": ""}


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data` in one rename."""
    with atomic_writer(path, binary=True) as fh:
        fh.write(data)
