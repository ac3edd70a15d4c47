"""Following an append-only record file: which bytes are new and complete.

Writers append whole lines (assay.core.rundir_lock), so a file only grows, except when
a command rewrites it whole (`reparse`, `recompute` with a rebuild): then it is a new
file (another inode) or shorter than what was read, and is read again from the start.
Only bytes up to the last newline are taken: a torn last line (a writer mid-append, or
one killed mid-write) is left for the refresh after it is completed."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Chunk", "FileCursor", "lines_before"]

_BLOCK = 1 << 20


@dataclass(frozen=True, slots=True)
class Chunk:
    """New complete lines of a file, at `path` (a copy, or the file itself when
    `direct`); `reset`: drop what was read of it before."""

    path: Path
    reset: bool
    n_bytes: int
    direct: bool = False
    start: int = 0  # the byte offset in the file where the chunk's lines begin


@dataclass(slots=True)
class FileCursor:
    """How far a record file was read: its identity and the byte offset after the last
    complete line taken. `stat` of an unchanged file is all a refresh costs."""

    source: Path
    inode: int | None = None
    offset: int = 0
    seen: tuple[int, int] | None = None  # (size, mtime_ns) at the last look

    def forget(self) -> None:
        """Read the file from the start next time (after a failed read)."""
        self.inode, self.offset, self.seen = None, 0, None

    def changed(self) -> bool:
        """Whether the file looks different from the last look (stat only)."""
        try:
            st = self.source.stat()
        except FileNotFoundError:
            return self.inode is not None
        return (st.st_ino != self.inode) or (st.st_size, st.st_mtime_ns) != self.seen

    def take(self, scratch: Path, *, direct: bool = False) -> Chunk | None:
        """The complete lines appended since the last call, copied into `scratch`
        (None when there are none). A replaced or shortened file starts over; a
        vanished one is a reset with no lines. `direct` (no writer is appending): a
        whole file ending in a newline is read where it is, not copied."""
        try:
            fd = os.open(self.source, os.O_RDONLY)
        except FileNotFoundError:
            was = self.inode is not None
            self.inode, self.offset, self.seen = None, 0, None
            return Chunk(scratch, reset=True, n_bytes=0) if was else None
        try:
            return self._take(fd, scratch, direct)
        finally:
            os.close(fd)

    def _take(self, fd: int, scratch: Path, direct: bool) -> Chunk | None:
        st = os.fstat(fd)
        reset = self.inode is not None and (st.st_ino != self.inode or st.st_size < self.offset)
        if reset or self.inode is None:
            self.offset = 0
        self.inode, self.seen = st.st_ino, (st.st_size, st.st_mtime_ns)
        if direct and self.offset == 0 and st.st_size and _ends_line(fd, st.st_size):
            self.offset = st.st_size
            return Chunk(self.source, reset=reset, n_bytes=st.st_size, direct=True)
        start = self.offset
        n = _copy_complete(fd, start, st.st_size, scratch)
        self.offset += n
        if n == 0 and not reset:
            return None
        return Chunk(scratch, reset=reset, n_bytes=n, start=start)


def _copy_complete(fd: int, start: int, end: int, scratch: Path) -> int:
    """Copy bytes [start, end) of `fd` into `scratch`, cut after the last newline;
    the number of bytes kept."""
    kept = 0
    with scratch.open("wb") as out:
        pos = start
        while pos < end:
            block = os.pread(fd, min(_BLOCK, end - pos), pos)
            if not block:
                break
            out.write(block)
            pos += len(block)
            cut = block.rfind(b"\n")
            if cut >= 0:
                kept = pos - len(block) + cut + 1 - start
        out.truncate(kept)
    return kept


def _ends_line(fd: int, size: int) -> bool:
    return os.pread(fd, 1, size - 1) == b"\n"


def lines_before(path: Path, offset: int) -> int:
    """Lines in `path` before byte `offset` (to turn a chunk's line into the file's)."""
    count, pos = 0, 0
    with path.open("rb") as fh:
        while pos < offset:
            block = fh.read(min(_BLOCK, offset - pos))
            if not block:
                break
            count += block.count(b"\n")
            pos += len(block)
    return count
