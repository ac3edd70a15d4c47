"""A bounded pool of asyncio workers that stops cleanly on abort, error or cancel."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")


async def run_pool(
    items: Sequence[T],
    handle: Callable[[T], Awaitable[None]],
    *,
    workers: int,
    abort: asyncio.Event,
) -> None:
    """Run `handle` over `items` with at most `workers` in flight.

    Returns when all items are handled or `abort` is set; in-flight handlers are then
    cancelled (they recorded nothing, so a resumed run redoes them). The first
    exception raised by a handler is re-raised after every worker has stopped.
    """
    queue: asyncio.Queue[T] = asyncio.Queue()
    for item in items:
        queue.put_nowait(item)

    async def worker() -> None:
        while not abort.is_set():
            try:
                item = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            await handle(item)

    n = max(1, min(len(items), workers))
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
