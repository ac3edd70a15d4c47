"""Cache reads that share one SQLite read transaction.

Every `diskcache.Cache.get` outside a transaction is a transaction of its own: in WAL
mode SQLite takes and drops a read lock on the shared-memory index for each, system calls
that cost more than the lookup itself (a fully cached run of 5,000 judgments spent most
of its cache time there). Reads that follow one another share one snapshot instead,
ended after `MAX_READS` reads or `MAX_AGE_S` seconds, before any write of this cache
(`ResponseCache.flush`), and when the cache closes. A snapshot only delays seeing what
another process wrote meanwhile: a response it misses is asked for again, as it would
be had that process written a moment later. `stored_values` reads many keys in one
query, what a run's chunk of lookups needs (one query, not one `get` per key).
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
from collections.abc import Sequence
from types import TracebackType
from typing import Any

MAX_READS = 256
MAX_AGE_S = 0.5
KEYS_PER_QUERY = 500  # bound parameters per query: under SQLite's oldest limit (999)

_SELECT_MANY = (
    "SELECT key, mode, filename, value FROM Cache WHERE raw = 1"
    " AND (expire_time IS NULL OR expire_time > ?) AND key IN ({marks})"
)


def stored_values(cache: Any, keys: Sequence[str]) -> dict[str, Any]:
    """The stored value of each of `keys` the diskcache `cache` holds: `Cache.get`'s
    query and its `Disk.fetch` (a value kept in a file is read from it), for many keys at
    once. A key absent or expired, or whose file went meanwhile, is left out. String keys
    only (diskcache stores them as they are, `raw = 1`), and a cache whose reads write
    nothing, as for `ReadSnapshot`."""
    found: dict[str, Any] = {}
    now = time.time()
    for start in range(0, len(keys), KEYS_PER_QUERY):
        part = keys[start : start + KEYS_PER_QUERY]
        query = _SELECT_MANY.format(marks=",".join("?" * len(part)))
        rows = cache._sql(query, (now, *part)).fetchall()  # noqa: SLF001 - this thread's
        for key, mode, filename, value in rows:
            with contextlib.suppress(OSError):  # a file deleted meanwhile: a miss, as in get
                found[key] = cache._disk.fetch(mode, filename, value, False)  # noqa: SLF001
    return found


class ReadSnapshot:
    """`with snapshot: cache.get(...)` (or `stored_values`, one read however many
    keys): the read joins the calling thread's open read
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


__all__ = ["KEYS_PER_QUERY", "MAX_AGE_S", "MAX_READS", "ReadSnapshot", "stored_values"]
