"""The run directory on disk: an append-only judgments file and atomic JSON files.

A process killed mid-write can leave a partial last line; it is cut off on the next
open, so a resumed run neither loses a completed line nor reads a broken one.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Generic, TypeVar

from pydantic import BaseModel

from assay.core.atomic import atomic_writer
from assay.core.manifest import Manifest
from assay.core.outcomes import Status
from assay.core.rundir import (
    iter_jsonl,
)
from assay.redaction import redact_with_paths
from assay.runs.store._counters import JudgeCounters, count_into, counters_of


def write_json_atomic(path: Path, value: Any) -> None:
    """Write-then-rename so readers never see half a manifest."""
    with atomic_writer(path) as fh:
        json.dump(value, fh, indent=2, ensure_ascii=False, default=str)
        fh.write("\n")


def redact_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    """The one redaction pass every manifest goes through; `redacted_fields` keeps what
    earlier passes redacted, so a rewritten manifest never forgets or leaks a field."""
    body = dict(manifest)
    previous = body.pop("redacted_fields", None) or []
    clean, paths = redact_with_paths(body)
    clean["redacted_fields"] = sorted(set(previous) | set(paths))
    return dict(clean)


def write_manifest(path: Path, manifest: Manifest) -> dict[str, Any]:
    """Write a manifest, typed, redacted, so a command that rewrites an older run's
    manifest never carries a credential forward. The one writer of manifest.json."""
    clean = redact_manifest(manifest.dump())
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


FLUSH_LINES = 256
"""A batch is written once it holds this many lines..."""
FLUSH_DELAY_S = 0.5
"""...or once its oldest line has waited this long (an event-loop timer sees to it)."""


class RecordWriter:
    """Appends one JSON line per record, in batches.

    Flushing every line cost ~170 µs a record, so lines are buffered and written in one
    `write` per batch: at `flush_lines` lines, `flush_delay_s` after the batch's first
    line (a timer on the running event loop; without one, every line is written at
    once), and on `close` (normal end, error, Ctrl-C, SIGTERM). Batches are appended in
    order as whole lines, so a SIGKILL loses at most the unwritten batch (which
    `--resume` redoes) plus a torn last line, cut off on the next open; never a line in
    the middle, never a line twice.
    """

    def __init__(
        self,
        path: Path,
        *,
        flush_lines: int = FLUSH_LINES,
        flush_delay_s: float = FLUSH_DELAY_S,
    ) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        repair_partial_tail(path)
        self._fh: IO[bytes] = path.open("ab", buffering=0)
        self._pending: list[bytes] = []
        self._timer: asyncio.TimerHandle | None = None
        self.flush_lines = flush_lines
        self.flush_delay_s = flush_delay_s
        self.written = 0

    def write(self, record: BaseModel) -> None:
        self._pending.append(record.model_dump_json(exclude_none=False).encode() + b"\n")
        self.written += 1
        full = len(self._pending) >= self.flush_lines
        if full or (self._timer is None and not self._schedule()):
            self.flush()

    def _schedule(self) -> bool:
        """Flush this batch `flush_delay_s` from now; False outside an event loop."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return False
        self._timer = loop.call_later(self.flush_delay_s, self.flush)
        return True

    @property
    def pending(self) -> int:
        """Lines written to this writer but not yet to the file."""
        return len(self._pending)

    def flush(self) -> None:
        """Append the buffered lines to the file in one write."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not self._pending or self._fh.closed:
            return
        data = b"".join(self._pending)
        self._pending.clear()
        view = memoryview(data)
        while view:
            view = view[self._fh.write(view) or 0 :]

    def close(self) -> None:
        if not self._fh.closed:
            self.flush()
            os.fsync(self._fh.fileno())
            self._fh.close()


JudgmentWriter = RecordWriter  # the name this writer had when it wrote judgments only


def write_jsonl_atomic(path: Path, records: Iterable[BaseModel]) -> None:
    """Rewrite a derived JSONL file in one rename, so readers never see half of it."""
    with atomic_writer(path) as fh:
        for record in records:
            fh.write(record.model_dump_json() + "\n")


R = TypeVar("R", bound=BaseModel)
V = TypeVar("V")


class KeyedLog(ABC, Generic[R, V]):
    """One append-only record file of a run and, per key, what this session keeps of
    its latest record (`keep`), current as this session appends to the file."""

    def __init__(self, path: Path, model: type[R]) -> None:
        self.path = path
        self.model = model
        self.records: dict[Any, V] = {}
        self._writer: RecordWriter | None = None

    @abstractmethod
    def keep(self, record: R) -> V:
        """What this session keeps of a record: the record itself, or a tally of it."""

    def load(self, *, repair: bool = False) -> dict[Any, V]:
        """Read what earlier sessions recorded (a later line for a key wins); with
        `repair`, cut a torn last line first."""
        if repair:
            repair_partial_tail(self.path)
        self.records = {_key(r): self.keep(r) for r in iter_jsonl(self.path, self.model)}
        return self.records

    def open(self) -> None:
        """Start appending (creating the file, cutting a torn last line)."""
        self._writer = RecordWriter(self.path)

    def resume(self) -> dict[Any, V]:
        """Open for appending, then read what is there: a stage picking up its file."""
        self.open()
        return self.load()

    def append(self, record: R) -> None:
        assert self._writer is not None, "open() the log first"
        self._writer.write(record)
        self.records[_key(record)] = self.keep(record)

    @property
    def written(self) -> int:
        return self._writer.written if self._writer is not None else 0

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()


class RecordLog(KeyedLog[R, R]):
    """A record file whose latest records a stage reads back (sentences, verifications,
    gates: later stages derive from them)."""

    def keep(self, record: R) -> R:
        return record


class TallyLog(KeyedLog[R, Status]):
    """A judgment file (`judgments.jsonl`, `item_judgments.jsonl`): records go to disk;
    what stays is per-judge counters (the manifest, progress, the failure count) and, for
    resume, the status of each key recorded *before* this session (`records`, read by
    `load`). This session's own records only add to the counters and to `written`: a
    fresh run holds nothing per judgment, however long it is.

    The counters sum the latest record per key. A key forgotten (about to be redone) or
    recorded twice makes them stale; they are then summed again from the file, latest
    line per key winning, the next time they are read."""

    def __init__(self, path: Path, model: type[R]) -> None:
        super().__init__(path, model)
        self._counters: dict[str, JudgeCounters] = {}
        self._forgotten: set[Any] = set()
        self._stale = False

    def keep(self, record: R) -> Status:
        status: Status = record.status  # type: ignore[attr-defined]
        return status

    def load(self, *, repair: bool = False) -> dict[Any, Status]:
        if repair:
            repair_partial_tail(self.path)
        self.records, self._counters, self._stale = {}, {}, False
        self._forgotten = set()
        for record in iter_jsonl(self.path, self.model):
            key = _shared(_key(record))
            self._stale = self._stale or key in self.records
            self.records[key] = self.keep(record)
            self._add(record)
        return self.records

    def append(self, record: R) -> None:
        assert self._writer is not None, "open() the log first"
        self._writer.write(record)
        key = _key(record)
        if key in self.records:  # recorded before and not forgotten: not expected, but exact
            self.records[key] = self.keep(record)
            self._stale = True
        self._forgotten.discard(key)
        self._add(record)

    def forget(self, key: Any) -> None:
        """Drop a key whose record this session redoes: it no longer counts."""
        del self.records[key]
        self._forgotten.add(key)
        self._stale = True

    def _add(self, record: Any) -> None:
        count_into(self._counters, record)

    def counters(self) -> dict[str, JudgeCounters]:
        """Per judge id, the counters of the latest record of every key not forgotten."""
        if self._stale:
            if self._writer is not None:
                self._writer.flush()
            latest = _latest_lines(self.path, self.model, self._forgotten)
            self._counters = counters_of(latest)
            self._stale = False
        return self._counters

    def failed(self, failing: set[Status]) -> int:
        """Latest records (not forgotten) whose status is in `failing`."""
        return sum(c.by_status[s.value] for c in self.counters().values() for s in failing)


def _shared(key: tuple[Any, ...]) -> tuple[Any, ...]:
    """A judgment key whose dataset, member/order and judge are shared strings (every
    record's own copies cost ~110 bytes a judgment); the id (index 1) stays as it is."""
    return tuple(
        sys.intern(part) if i != 1 and isinstance(part, str) else part for i, part in enumerate(key)
    )


def _latest_lines(path: Path, model: type[R], forgotten: set[Any]) -> Iterator[R]:
    """The last line of each key not in `forgotten`, read in two passes (where each
    key's last line is, then those lines), so the records are never all in memory."""
    last: dict[Any, int] = {}
    for line, record in enumerate(iter_jsonl(path, model)):
        last[_key(record)] = line
    for line, record in enumerate(iter_jsonl(path, model)):
        key = _key(record)
        if last.get(key) == line and key not in forgotten:
            yield record


def _key(record: Any) -> Any:
    """Every record model has a `key` property naming what it is a record of."""
    return record.key
