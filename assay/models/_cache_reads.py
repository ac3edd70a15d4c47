"""Cache reads that share one SQLite read transaction.

Every `diskcache.Cache.get` outside a transaction is a transaction of its own: in WAL
mode SQLite takes and drops a read lock on the shared-memory index for each, system calls
that cost more than the lookup itself (a fully cached run of 5,000 judgments spent most
of its cache time there). Reads that follow one another share one snapshot instead,
ended after `MAX_READS` reads or `MAX_AGE_S` seconds, before any write of this cache
(`ResponseCache.flush`), and when the cache closes. A snapshot only delays seeing what
another process wrote meanwhile: a response it misses is asked for again, as it would
be had that process written a moment later.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from types import TracebackType
from typing import Any

MAX_READS = 256
MAX_AGE_S = 0.5


class ReadSnapshot:
    """`with snapshot: cache.get(...)`: the read joins the calling thread's open read
    transaction, or opens one. diskcache keeps a connection per thread (`Cache._con`),
    so each thread has its own snapshot. Only for a cache whose reads write nothing
    (diskcache's default eviction policy, which `ResponseCache` uses)."""

    def __init__(self, cache: Any) -> None:
        self._cache = cache
        self._local = threading.local()

    def __enter__(self) -> None:
        state = self._local
        if getattr(state, "con", None) is None:
            con = self._cache._con  # noqa: SLF001 - diskcache's connection for this thread
            if con.in_transaction:  # diskcache's own transaction (`transact`): join it
                return
            con.execute("BEGIN")
            state.con, state.reads, state.started = con, 0, time.monotonic()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        state = self._local
        if getattr(state, "con", None) is None:
            return
        state.reads += 1
        old = state.reads >= MAX_READS or time.monotonic() - state.started >= MAX_AGE_S
        if exc is not None or old:
            self.end()

    def end(self) -> None:
        """End this thread's snapshot, if it has one (the next read opens another)."""
        state = self._local
        con = getattr(state, "con", None)
        state.con = None
        if con is not None and con.in_transaction:
            with contextlib.suppress(sqlite3.Error):  # a closed connection holds no lock
                con.execute("COMMIT")  # a read transaction: nothing to commit, locks let go


__all__ = ["MAX_AGE_S", "MAX_READS", "ReadSnapshot"]
