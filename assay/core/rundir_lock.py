"""One writer per run directory: an OS lock on `RUN_DIR/.assay.lock`.

Two processes appending to one run directory would each pay for, and record, every
judgment. Every command that writes a run directory (`run`, `recompute`, `reparse`,
`import-medscore`, `policies apply | tune | sweep | compare`) holds this lock while it
works; a second writer is refused at once, naming the holder's pid. The lock is
`flock(2)` on a file, so it dies with its process: a writer killed with SIGKILL never
blocks the next one and nothing needs cleaning up by hand. Readers (`report`, `compare`,
`assay.open_run`) never take it: what they read is written atomically (temp file +
rename, `assay.core.atomic`) or appended whole lines at a time (a torn last line is skipped).
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path
from types import TracebackType

from assay.errors import RunError

__all__ = ["AGAIN", "ELSEWHERE", "LOCK_FILE", "RunDirBusy", "WriterLock"]

LOCK_FILE = ".assay.lock"
AGAIN = "wait for it to finish, then run this command again"  # advice to a refused writer
ELSEWHERE = "wait for it to finish, or choose another --output-dir"  # ... to a new run
_READ_TRIES = 20  # a holder writes its pid right after locking: wait that long, at most


class RunDirBusy(RunError):
    """Another process (or another writer in this one) holds the run directory."""


class WriterLock:
    """The exclusive writer lock of `run_dir` (an existing directory).

    `command` is what the holder says it is (`assay run`); `fix` is the advice a refused
    writer gets. Released (and its file removed) on `release()` or leaving a `with`."""

    def __init__(self, run_dir: str | Path, *, command: str, fix: str) -> None:
        self.run_dir = Path(run_dir)
        self.command = command
        self.fix = fix
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock or raise `RunDirBusy` naming the holder; never waits."""
        if self._fd is not None:
            return
        path = self.run_dir / LOCK_FILE
        while True:
            fd = self._locked_fd(path)
            if _same_file(fd, path):
                break
            os.close(fd)  # the holder removed the file as it released: lock the new one
        os.ftruncate(fd, 0)
        info = {"pid": os.getpid(), "command": self.command}
        os.pwrite(fd, (json.dumps(info) + "\n").encode("utf-8"), 0)
        self._fd = fd

    def _locked_fd(self, path: Path) -> int:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise RunError(f"cannot lock the run directory: {exc.strerror}", file=path) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            busy = self._busy(fd)
            os.close(fd)
            raise busy from None
        except OSError as exc:
            os.close(fd)
            raise RunError(f"cannot lock the run directory: {exc.strerror}", file=path) from None
        return fd

    def check_free(self) -> None:
        """Raise `RunDirBusy` now if another writer holds the lock; takes nothing and
        creates nothing. For refusing before expensive work (datasets, local models):
        `acquire` is what keeps writers apart."""
        try:
            fd = os.open(self.run_dir / LOCK_FILE, os.O_RDONLY)
        except OSError:
            return  # no lock file, so no writer (or none we can see: `acquire` will say)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            raise self._busy(fd) from None
        except OSError:
            return
        finally:
            os.close(fd)

    def _busy(self, fd: int) -> RunDirBusy:
        return RunDirBusy(
            f"another assay process ({_holder(fd)}) is writing this run directory; {self.fix}",
            file=self.run_dir,
        )

    def release(self) -> None:
        """Remove the lock file, then let go (a writer that opened the old file sees
        it is gone and locks a new one)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            (self.run_dir / LOCK_FILE).unlink(missing_ok=True)
        except OSError:
            pass  # a read-only or vanished directory: the OS lock still ends below
        finally:
            os.close(fd)

    def __enter__(self) -> WriterLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def _same_file(fd: int, path: Path) -> bool:
    try:
        now = path.stat()
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (mine.st_dev, mine.st_ino) == (now.st_dev, now.st_ino)


def _holder(fd: int) -> str:
    """`pid 1234, assay run` from the lock file (the holder may still be writing it)."""
    for _ in range(_READ_TRIES):
        try:
            info = json.loads(os.pread(fd, 4096, 0).decode("utf-8"))
            pid, command = int(info["pid"]), str(info.get("command") or "assay")
        except (ValueError, KeyError, TypeError, OSError):
            time.sleep(0.01)
            continue
        this = ", this process" if pid == os.getpid() else ""
        return f"pid {pid}{this}, `{command}`"
    return "pid unknown"
