"""The run directory on disk: an append-only judgments file and atomic JSON files.

A process killed mid-write can leave a partial last line; it is cut off on the next
open, so a resumed run neither loses a completed line nor reads a broken one.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any, Generic, TypeVar

from pydantic import BaseModel

from assay.core.manifest import Manifest
from assay.core.rundir import (
    iter_jsonl,
)
from assay.redaction import redact_with_paths


def write_json_atomic(path: Path, value: Any) -> None:
    """Write-then-rename so readers never see half a manifest."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(value, fh, indent=2, ensure_ascii=False, default=str)
            fh.write("\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def redact_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    """The one redaction pass every manifest goes through; `redacted_fields` keeps what
    earlier passes redacted, so a rewritten manifest never forgets or leaks a field."""
    body = dict(manifest)
    previous = body.pop("redacted_fields", None) or []
    clean, paths = redact_with_paths(body)
    clean["redacted_fields"] = sorted(set(previous) | set(paths))
    return dict(clean)


def write_manifest(path: Path, manifest: Manifest | dict[str, Any]) -> dict[str, Any]:
    """Write a manifest redacted, so a command that rewrites an older run's manifest
    never carries a credential forward."""
    body = manifest.dump() if isinstance(manifest, Manifest) else manifest
    clean = redact_manifest(body)
    write_json_atomic(path, clean)
    return clean


def repair_partial_tail(path: Path) -> int:
    """Truncate bytes after the last newline (an interrupted write). Returns bytes cut."""
    if not path.exists():
        return 0
    size = path.stat().st_size
    if size == 0:
        return 0
    with path.open("rb+") as fh:
        fh.seek(-1, os.SEEK_END)
        if fh.read(1) == b"\n":
            return 0
        chunk = 1 << 16
        pos = size
        while pos > 0:
            start = max(0, pos - chunk)
            fh.seek(start)
            data = fh.read(pos - start)
            idx = data.rfind(b"\n")
            if idx >= 0:
                keep = start + idx + 1
                fh.truncate(keep)
                return size - keep
            pos = start
        fh.truncate(0)
        return size


class RecordWriter:
    """Appends one JSON line per record and flushes it at once; a torn last line left by
    a killed process is cut off first, so the file stays one whole record per line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        repair_partial_tail(path)
        self._fh: IO[str] = path.open("a", encoding="utf-8")
        self.written = 0

    def write(self, record: BaseModel) -> None:
        self._fh.write(record.model_dump_json(exclude_none=False) + "\n")
        self._fh.flush()
        self.written += 1

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()


JudgmentWriter = RecordWriter  # the name this writer had when it wrote judgments only


def write_jsonl_atomic(path: Path, records: Iterable[BaseModel]) -> None:
    """Rewrite a derived JSONL file in one rename, so readers never see half of it."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            for record in records:
                fh.write(record.model_dump_json() + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


R = TypeVar("R", bound=BaseModel)


class RecordLog(Generic[R]):
    """One append-only record file of a run (judgments, sentences, verifications) and
    the latest record per key, kept current as this session appends to it."""

    def __init__(self, path: Path, model: type[R]) -> None:
        self.path = path
        self.model = model
        self.records: dict[Any, R] = {}
        self._writer: RecordWriter | None = None

    def load(self, *, repair: bool = False) -> dict[Any, R]:
        """Read what earlier sessions recorded (a later line for a key wins); with
        `repair`, cut a torn last line first."""
        if repair:
            repair_partial_tail(self.path)
        self.records = {_key(r): r for r in iter_jsonl(self.path, self.model)}
        return self.records

    def open(self) -> None:
        """Start appending (creating the file, cutting a torn last line)."""
        self._writer = RecordWriter(self.path)

    def resume(self) -> dict[Any, R]:
        """Open for appending, then read what is there: a stage picking up its file."""
        self.open()
        return self.load()

    def append(self, record: R) -> None:
        assert self._writer is not None, "RecordLog.open() first"
        self._writer.write(record)
        self.records[_key(record)] = record

    @property
    def written(self) -> int:
        return self._writer.written if self._writer is not None else 0

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()


def _key(record: Any) -> Any:
    """Every record model has a `key` property naming what it is a record of."""
    return record.key
