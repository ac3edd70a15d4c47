"""Adaptive concurrency: requests in flight adapt to what the provider accepts (AIMD).

A provider's limits are per account and shared with whatever else uses it, so no
setting can be right in advance. TCP's answer works here too: start at the configured
maximum, halve on a sign of overload (a 429, or headers saying the window is nearly
spent), and add one slot per window of successes (as many successes as the limit).
Halving once per overload, not once per failed request: requests already in flight when
the limit was cut answer with the same news, and do not cut it again.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque

__all__ = ["AdaptiveLimit"]


class AdaptiveLimit:
    """At most `limit` requests in flight, `limit` between 1 and `maximum`.

    `async with` takes a slot and gives the time it was taken, which `backoff` needs.
    With `adaptive=False` it is a fixed bound (the old `ConcurrencyLimit`). Waiters are
    per event loop: a client outlives `asyncio.run` calls.
    """

    def __init__(self, maximum: int, *, adaptive: bool = True) -> None:
        self.maximum = maximum
        self.adaptive = adaptive
        self.limit = maximum
        self.lowest = maximum
        self.in_flight = 0
        self.peak = 0
        self.cuts = 0
        self._successes = 0
        self._cut_at = float("-inf")
        self._loop: asyncio.AbstractEventLoop | None = None
        self._waiters: deque[asyncio.Future[None]] = deque()

    def _waiting(self) -> deque[asyncio.Future[None]]:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._loop, self._waiters = loop, deque()
            self.in_flight = 0  # slots of an ended loop are gone with it
        return self._waiters

    async def __aenter__(self) -> float:
        waiters = self._waiting()
        if self.in_flight >= self.limit or waiters:
            future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            waiters.append(future)
            try:
                await future
            except asyncio.CancelledError:
                if future.done() and not future.cancelled():
                    self.in_flight -= 1  # granted just as it was cancelled: give it back
                    self._wake()
                raise
        else:
            self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        return time.monotonic()

    async def __aexit__(self, *exc_info: object) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        """Hand free slots to waiters in arrival order (a granted slot is counted here,
        so no later arrival can take it first)."""
        waiters = self._waiters
        while waiters and self.in_flight < self.limit:
            future = waiters.popleft()
            if not future.done():
                self.in_flight += 1
                future.set_result(None)

    def succeeded(self) -> None:
        """One answer without a sign of overload: one more slot per `limit` of them."""
        if not self.adaptive or self.limit >= self.maximum:
            return
        self._successes += 1
        if self._successes >= self.limit:
            self._successes = 0
            self.limit += 1
            self._wake()

    def backoff(self, started: float) -> bool:
        """Halve the limit for an overload seen by a request that took its slot at
        `started`; False (nothing cut) when the limit was already cut since then."""
        if not self.adaptive or started < self._cut_at:
            return False
        self.limit = max(1, self.limit // 2)
        self.lowest = min(self.lowest, self.limit)
        self._cut_at = time.monotonic()
        self._successes = 0
        self.cuts += 1
        return True
