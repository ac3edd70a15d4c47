"""Executors: what runs a stage's work items. The in-process one is a bounded pool of
asyncio workers that stops cleanly on abort, error or cancel.

A stage hands an executor its items and an async handler that turns one item into a
record; anything with the same `run` (a process pool, a queue of remote workers) can
stand in, since the items are plain serialisable data.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sized
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from assay.core.outcomes import Status
from assay.models._budget import BudgetExhausted
from assay.runs.execute._progress import Progress

T = TypeVar("T")
_END = object()  # the end of an executor's items


class _Pause:
    def __repr__(self) -> str:
        return "PAUSE"


PAUSE: Any = _Pause()
"""What a source of items that does work as it is read yields between chunks of that
work (the judge stage answers cached judgments itself, `_cache_first`): not an item to
handle, a point where the event loop may be given a turn."""
LOOP_TURN_S = 0.02
"""A worker whose items are answered without waiting (cache hits, in-process judges)
gives the event loop a turn this often: Ctrl-C and SIGTERM cancel the run through the
loop, which otherwise would not run again until every item was handled."""


class Executor(Protocol):
    """Runs `handle` over `items` with at most `workers` in flight, until `abort` is set."""

    async def run(
        self,
        items: Iterable[T],
        handle: Callable[[T], Awaitable[None]],
        *,
        workers: int,
        abort: asyncio.Event,
    ) -> None: ...


class AsyncPoolExecutor:
    """The in-process executor: a queue drained by `workers` asyncio tasks."""

    async def run(
        self,
        items: Iterable[T],
        handle: Callable[[T], Awaitable[None]],
        *,
        workers: int,
        abort: asyncio.Event,
    ) -> None:
        """Returns when all items are handled or `abort` is set; in-flight handlers are
        then cancelled (they recorded nothing, so a resumed run redoes them). The first
        exception raised by a handler is re-raised after every worker has stopped. An
        item a spending cap refused (`BudgetExhausted`) is left unhandled; a refusal of
        the whole run's budget also stops its worker taking more, so the run winds down
        with what is in flight answered and recorded.

        `items` is read as the workers take them (a generator is never held whole);
        reading it raises into the worker that asked; a `PAUSE` in it is skipped."""
        source = iter(items)
        turns = _LoopTurns(asyncio.get_running_loop())

        async def worker() -> None:
            while not abort.is_set():
                if turns.due():  # before taking an item: reading one may be work (PAUSE)
                    await turns.give()
                    continue
                item = next(source, _END)
                if item is _END:
                    return
                if item is PAUSE:
                    continue
                try:
                    await handle(item)  # type: ignore[arg-type]  # not _END: checked above
                except BudgetExhausted as exc:  # not sent, not recorded: a resume sends it
                    if exc.whole_run:
                        return  # take no more; the other workers finish what is in flight

        n = max(1, min(len(items), workers)) if isinstance(items, Sized) else max(1, workers)
        tasks = [asyncio.create_task(worker()) for _ in range(n)]
        all_done: asyncio.Future[list[None]] = asyncio.gather(*tasks)
        aborted: asyncio.Future[bool] = asyncio.create_task(abort.wait())
        try:
            waiting: list[asyncio.Future[Any]] = [all_done, aborted]
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for t in tasks:
                t.cancel()
            aborted.cancel()
            results = await asyncio.gather(*tasks, return_exceptions=True)
            if all_done.done() and not all_done.cancelled():
                all_done.exception()  # retrieved here, re-raised below
        for r in results:
            if isinstance(r, BaseException) and not isinstance(r, asyncio.CancelledError):
                raise r


class _LoopTurns:
    """When the event loop last had a turn of its own (its selector polled: signals,
    sockets, timers), so workers whose items never wait give it one every
    `LOOP_TURN_S`. A worker's own clock would not do: each of 64 workers would run its
    20 ms before the loop's next turn, and a Ctrl-C took 1.3 s to be seen."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.last = loop.time()
        self.asked = False

    def due(self) -> bool:
        return self.loop.time() - self.last >= LOOP_TURN_S

    async def give(self) -> None:
        """Let every ready task and then the loop run: a mark scheduled now runs in the
        loop's next iteration, after its poll, and says the turn was had."""
        if not self.asked:
            self.asked = True
            self.loop.call_soon(self._had_one)
        await asyncio.sleep(0)

    def _had_one(self) -> None:
        self.last = self.loop.time()
        self.asked = False


@dataclass
class StageContext:
    """What every stage of one session shares: who runs the items, how many at once,
    the progress display, the abort switch and the recorded outcomes to redo."""

    executor: Executor
    progress: Progress
    abort: asyncio.Event
    workers: int
    redo: set[Status] = field(default_factory=set)
    on_record: Callable[[Status], None] | None = None  # the stage's failure budget

    def count(self, status: Status) -> None:
        """Tell the stage's failure budget (if any) what a record ended in."""
        if self.on_record is not None:
            self.on_record(status)

    async def run(self, items: Iterable[T], handle: Callable[[T], Awaitable[None]]) -> None:
        await self.executor.run(items, handle, workers=self.workers, abort=self.abort)


@contextmanager
def cancel_on_sigterm() -> Iterator[None]:
    """SIGTERM cancels the running task like Ctrl-C, so the run ends `interrupted`; the
    handler before it (the CLI's, which raises) comes back after."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    installed = False
    previous = signal.getsignal(signal.SIGTERM)
    if task is not None:
        try:
            loop.add_signal_handler(signal.SIGTERM, task.cancel)
            installed = True
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    try:
        yield
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGTERM)  # leaves SIG_DFL
            signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
