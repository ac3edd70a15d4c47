"""Appending to and reading a run's labels file.

Appends hold an `flock` on the labels file itself, not the run's writer lock
(`.assay.lock`): a run may still be writing its records while a person adjudicates, and
two viewers (or a viewer and a script) may adjudicate at once. Under the lock a writer
reads the item's current latest entry (its `previous`), drops a torn tail a killed writer
left, and writes one whole line, so no two entries interleave and no entry is lost.
Readers take no lock: they skip a torn last line like every run-file reader does.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from assay.adjudication._check import checked
from assay.adjudication._model import LABELS_FILE, Adjudication, AdjudicationError
from assay.core.rundir import iter_jsonl

__all__ = [
    "adjudication_history",
    "append_adjudication",
    "iter_adjudications",
    "read_adjudications",
]

_LOCK_WAIT_S = 10.0  # an append holds the lock for one read and one write: milliseconds


@contextmanager
def _locked(path: Path) -> Iterator[int]:
    """An append-mode descriptor of `path`, exclusively flock-ed while the block runs."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as exc:
        raise AdjudicationError(f"cannot open the labels file: {exc.strerror}", file=path) from None
    try:
        deadline = time.monotonic() + _LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise AdjudicationError(
                        "the labels file stayed locked by another process; try again",
                        file=path,
                    ) from None
                time.sleep(0.01)
        yield fd
    finally:
        os.close(fd)  # closing releases the lock


def _drop_torn_tail(fd: int) -> None:
    """Cut a last line without its newline (a writer killed mid-line): appending after
    it would glue the next entry onto it and turn a skippable torn line into a corrupt one."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    chunk = 1 << 16
    end = size
    while end > 0:
        start = max(0, end - chunk)
        cut = os.pread(fd, end - start, start).rfind(b"\n")
        if cut >= 0:
            os.ftruncate(fd, start + cut + 1)
            return
        end = start
    os.ftruncate(fd, 0)


def append_adjudication(
    run_dir: Path,
    *,
    dataset: str,
    item_id: str,
    annotator: str,
    label: str | None = None,
    preference: str | None = None,
    note: str | None = None,
) -> Adjudication:
    """Record a person's gold for one item of `run_dir` and return the entry written.

    Refused (`AdjudicationError`, one line) for an item the run does not hold, a label
    for a pairwise item or a preference for a single-response one, an empty annotator or
    an overlong note. Nothing already in the file changes; the new line wins."""
    run_dir = Path(run_dir)
    values = checked(
        run_dir,
        dataset=dataset,
        item_id=item_id,
        annotator=annotator,
        label=label,
        preference=preference,
        note=note,
    )
    path = run_dir / LABELS_FILE
    with _locked(path) as fd:
        _drop_torn_tail(fd)
        current = read_adjudications(run_dir).get((dataset, item_id))
        entry = Adjudication.model_validate(
            {
                **values,
                "at": datetime.now(UTC),
                "previous": current.value if current is not None else None,
            }
        )
        line = (entry.model_dump_json(exclude_none=True) + "\n").encode("utf-8")
        _write_all(fd, line, path)
    return entry


def _write_all(fd: int, data: bytes, path: Path) -> None:
    """One write of the whole line (O_APPEND); a short write (disk full) is an error."""
    try:
        written = os.write(fd, data)
        if written != len(data):
            raise AdjudicationError("the labels file took part of the line (disk full?)", file=path)
        os.fsync(fd)
    except OSError as exc:
        raise AdjudicationError(
            f"cannot write the labels file: {exc.strerror}", file=path
        ) from None


def iter_adjudications(run_dir: Path) -> Iterator[Adjudication]:
    """Every entry of the labels file in file order (the history of all items); none
    when there is no file."""
    return iter_jsonl(Path(run_dir) / LABELS_FILE, Adjudication)


def read_adjudications(run_dir: Path) -> dict[tuple[str, str], Adjudication]:
    """The latest entry per (dataset, item_id); a later line wins. A torn last line is
    skipped; a corrupt line is a `RunError` naming the file and line."""
    return {entry.key: entry for entry in iter_adjudications(run_dir)}


def adjudication_history(run_dir: Path, dataset: str, item_id: str) -> list[Adjudication]:
    """Every entry for one item, oldest first (the last one is the item's gold)."""
    return [e for e in iter_adjudications(run_dir) if e.dataset == dataset and e.item_id == item_id]
