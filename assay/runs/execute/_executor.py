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
        reading it raises into the worker that asked."""
        source = iter(items)

        async def worker() -> None:
            while not abort.is_set():
                item = next(source, _END)
                if item is _END:
                    return
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
