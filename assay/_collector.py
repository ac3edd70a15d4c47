"""The cyclic garbage collector around what a command loads, runs and hosted requests.

Loading: assay's modules, a spec, its datasets and litellm (imported at the first request)
make objects that live as long as the process and hold no garbage, yet the collector made
~150 passes over assay's as they loaded and ~0.9 s of full passes over litellm's (a plain
litellm loop pays the same at its `import litellm`). `paused()` turns collection off while
something loads; in the `assay` command's own process what was loaded is then frozen
(`gc.freeze`) for good, so no later pass scans it. Reference counting frees everything
else as always.

Requests: litellm allocates thousands of container objects per request, so CPython's
collector runs often, and every full collection rescans the whole long-lived heap. Where
nothing is frozen (assay used as a library), the objects that existed before the first
request in flight are frozen while any is (`FrozenHeap`), so full collections scan only
what the requests made; when the last one finishes they are unfrozen and collected as
usual (a cycle among them that became garbage during the burst waits for the first full
collection after it). Measured on the throughput benchmark (2,000 requests, 2 cores), the
three full collections of a plain litellm loop took 1.4 s of its 8 s of CPU.

Runs: a run made from Python (`Runner.run`) holds the heap frozen the same way from start
to end (`RUNS`), so a full collection during it scans only what the run made. After a
litellm run in the same process, a fully cached re-run of 5,000 judgments (no request
in flight, so nothing frozen) spent a third of its time in one full collection of
litellm's heap (~0.33 s of ~0.95 s).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class _Loaded:
    """Whether this process is the `assay` command line (the only place
    `paused(freeze=True)` freezes) and whether it froze there: the command's process is
    assay's, and what it froze stays frozen until it exits."""

    froze = False
    command_line = False


def command_line() -> None:
    """Mark this process as the `assay` command: what it loads lives until it exits, so
    `paused(freeze=True)` may freeze it (never in a library caller's process, whose
    heap is its own)."""
    _Loaded.command_line = True


def _frozen_already() -> bool:
    """Objects are frozen: by the command (known without asking: `gc.get_freeze_count()`
    walks every frozen object, ~4-8 ms in a loaded command, and a run asked it five
    times), or by someone else (asked only where assay froze nothing, so the walk is
    over their objects alone)."""
    return _Loaded.froze or gc.get_freeze_count() > 0


@contextmanager
def paused(*, freeze: bool = False) -> Iterator[None]:
    """No cyclic collection inside (nested uses are fine; one disabled by someone else
    stays disabled): for loading modules and inputs, which make no cycles worth finding.
    `freeze`: in the command line's process, what was loaded is then frozen, so later
    passes never scan it."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if freeze and _Loaded.command_line:
                gc.freeze()
                _Loaded.froze = True
            gc.enable()


YOUNG_THRESHOLD = 10_000
"""Allocations between passes over the youngest generation while a command runs
(`spaced_passes`); CPython's default is 700."""


@contextmanager
def spaced_passes() -> Iterator[None]:
    """Around a run (`Runner.run`: `assay run`, `assay rerun`). In the command line's
    process, the youngest generation collected every
    `YOUNG_THRESHOLD` allocations inside (then as before). A run holds a chunk of
    requests, responses and records at a time, all freed by reference counting, and the
    default threshold rescanned the chunk a few hundred times (a fully cached run of 5,000
    judgments: ~45 ms of passes that found nothing, ~25 ms spaced). A library caller's
    settings are its own: nothing changes outside the command line."""
    before = gc.get_threshold()
    spaced = _Loaded.command_line and before[0] < YOUNG_THRESHOLD
    if spaced:
        gc.set_threshold(YOUNG_THRESHOLD, *before[1:])
    try:
        yield
    finally:
        if spaced:
            gc.set_threshold(*before)


class FrozenHeap:
    """Counts requests in flight (any thread, any event loop); the first freezes the
    heap, the last unfreezes it. It does nothing when the collector is disabled or when
    objects are frozen already: by someone else (a pre-fork server's `gc.freeze()` stays
    theirs: assay never unfreezes what it did not freeze), or by the `assay` command,
    whose loaded heap (litellm's included) stays frozen for good, so the end of a burst
    brings no full pass over it."""

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
            if self._in_flight == 1 and gc.isenabled() and not _frozen_already():
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

RUNS = FrozenHeap()
"""Held by every run while it goes (any thread); inside one, the requests find the heap
frozen already and leave it to the run."""
