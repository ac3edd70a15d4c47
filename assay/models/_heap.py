"""The cyclic garbage collector's view of the heap while hosted requests are in flight.

litellm allocates thousands of container objects per request, so CPython's collector runs
often, and every full collection rescans the whole long-lived heap: litellm's model map,
pandas, scipy, assay itself (~450,000 objects in a run). Measured on the throughput
benchmark (2,000 requests, 2 cores), the three full collections of a plain litellm loop
took 1.4 s of its 8 s of CPU. While at least one request is in flight, the objects that
existed before the first one are frozen (`gc.freeze`), so full collections scan only
what the requests made; when the last one finishes they are unfrozen and collected as
usual (a cycle among them that became garbage during the burst waits for the first full
collection after it). Reference counting frees everything else as always.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class FrozenHeap:
    """Counts requests in flight (any thread, any event loop); the first freezes the
    heap, the last unfreezes it. It does nothing when the collector is disabled or when
    someone else has already frozen objects (a pre-fork server's `gc.freeze()` stays
    theirs: assay never unfreezes what it did not freeze)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()  # a finalizer run by gc.collect may re-enter
        self._in_flight = 0
        self._froze = False

    @property
    def frozen_by_us(self) -> bool:
        return self._froze

    def enter(self) -> None:
        with self._lock:
            self._in_flight += 1
            if self._in_flight == 1 and gc.isenabled() and gc.get_freeze_count() == 0:
                # the young generations first: their garbage is collected now and their
                # survivors promoted (and counted) as usual, not frozen along with the rest
                gc.collect(1)
                gc.freeze()
                self._froze = True

    def exit(self) -> None:
        with self._lock:
            self._in_flight -= 1
            if self._in_flight == 0 and self._froze:
                gc.unfreeze()
                self._froze = False

    @contextmanager
    def held(self) -> Iterator[None]:
        self.enter()
        try:
            yield
        finally:
            self.exit()


HOSTED_REQUESTS = FrozenHeap()
"""The one counter every hosted transport's requests share."""
