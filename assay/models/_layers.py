"""The policy layers a `Model` puts around any transport, each small and usable alone:
the response cache, the concurrency bound, finite retries, and call accounting."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from assay.core.outcomes import Usage
from assay.models._cache import ResponseCache
from assay.models._config import RetryPolicy
from assay.models._transport import TransportError
from assay.models._types import ModelResult

T = TypeVar("T")
RequestT = TypeVar("RequestT")
StoredT = TypeVar("StoredT", bound=BaseModel)


class CachedResponses(Generic[RequestT, StoredT]):
    """One transport's view of the response cache: its keys, its response type."""

    def __init__(
        self,
        cache: ResponseCache | None,
        key_of: Callable[[RequestT], str],
        kind: type[StoredT],
    ) -> None:
        self.cache = cache
        self.key_of = key_of
        self.kind = kind

    def key(self, request: RequestT) -> str | None:
        """The request's key, or None when there is no cache."""
        return self.key_of(request) if self.cache is not None else None

    def read(self, key: str | None) -> StoredT | None:
        if key is None or self.cache is None:
            return None
        return self.cache.get(key, self.kind)

    def read_many(self, keys: Sequence[str]) -> list[StoredT | None]:
        """`read` for each key, in one cache query."""
        if self.cache is None:
            return [None] * len(keys)
        return self.cache.get_many(keys, self.kind)

    def write(self, key: str | None, response: StoredT) -> None:
        """Store a response (the cache itself skips uncacheable ones)."""
        if key is not None and self.cache is not None:
            self.cache.set(key, response)


class ConcurrencyLimit:
    """At most `limit` requests in flight; counts the peak, for tests and benchmarks.

    The semaphore is re-made per event loop: a client outlives `asyncio.run` calls, and
    an asyncio semaphore is bound to the loop it first waited on.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.in_flight = 0
        self.peak = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._semaphore: asyncio.Semaphore | None = None

    def _current(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if self._semaphore is None or self._loop is not loop:
            self._semaphore, self._loop = asyncio.Semaphore(self.limit), loop
        return self._semaphore

    async def __aenter__(self) -> None:
        await self._current().acquire()
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)

    async def __aexit__(self, *exc_info: object) -> None:
        self.in_flight -= 1
        self._current().release()


def make_wait(
    policy: RetryPolicy, *, attempts_before: int = 0
) -> Callable[[RetryCallState], float]:
    """Exponential backoff with jitter, replaced by Retry-After when the server sent one.

    `attempts_before` shifts the exponent for a retry loop that starts after attempts
    made outside it, so backoff keeps growing across the hand-over.
    """

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, TransportError) and exc.retry_after_s is not None:
            return min(exc.retry_after_s, policy.max_wait_s)
        n = state.attempt_number + attempts_before
        backoff = policy.initial_wait_s * 2 ** (n - 1) + random.uniform(0, policy.jitter_s)
        return float(min(backoff, policy.max_wait_s))

    return wait


def _retryable(exc: BaseException) -> bool:
    return isinstance(exc, TransportError) and exc.retryable


def _state_after(exc: BaseException) -> RetryCallState:
    """A tenacity call state for 'attempt 1 failed with exc', to compute the first wait."""
    state = RetryCallState(retry_object=AsyncRetrying(), fn=None, args=(), kwargs={})
    state.set_exception((type(exc), exc, exc.__traceback__))
    return state


class Retrier:
    """Finite retries of `TransportError`s their transport marked retryable.

    The first attempt runs straight away; tenacity takes over only after a retryable
    failure (it costs more than the call on the hot path). Any other exception is fatal
    and passes through at once.
    """

    def __init__(self, policy: RetryPolicy) -> None:
        self.policy = policy
        self._wait = make_wait(policy)
        self._wait_later = make_wait(policy, attempts_before=1)

    async def call(self, attempt: Callable[[], Awaitable[T]]) -> tuple[T, int]:
        """The first successful result and the attempts it took; raises the last
        `TransportError` (its `attempts` set) when none succeeded."""
        try:
            return await attempt(), 1
        except TransportError as first:
            if self.policy.max_attempts == 1 or not first.retryable:
                raise
            await asyncio.sleep(self._wait(_state_after(first)))
        attempts = 1
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.policy.max_attempts - 1),
            wait=self._wait_later,
            retry=retry_if_exception(_retryable),
            reraise=True,
        )
        try:
            async for state in retrying:
                with state:
                    attempts += 1
                    value = await attempt()
        except TransportError as exc:
            exc.attempts = attempts
            raise
        return value, attempts


def requests_of(response: BaseModel) -> int:
    """HTTP requests one successful send took: 1, unless the response says it took more
    (an instructor answer counts its re-asks)."""
    requests = getattr(response, "requests", 1)
    return requests if isinstance(requests, int) and requests > 1 else 1


def usage_of(response: BaseModel | None) -> Usage | None:
    """A response's token/cost usage, when its type reports one."""
    usage = getattr(response, "usage", None)
    return usage if isinstance(usage, Usage) else None


@dataclass
class Accounting:
    """Running totals over a model's results: what was asked, sent, served and spent.

    Tokens and cost count responses the transport produced in this process; cache hits
    are counted apart (they cost nothing now).
    """

    results: int = 0
    cache_hits: int = 0
    errors: int = 0
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    rate_limited: int = 0  # 429 answers, retried or not (counted by the rate layer)

    def add(self, result: ModelResult[Any]) -> None:
        self.results += 1
        self.attempts += result.attempts
        self.latency_s += result.latency_s
        if result.cache_hit:
            self.cache_hits += 1
            return
        if result.error is not None:
            self.errors += 1
        usage = usage_of(result.response)
        if usage is not None:
            self.prompt_tokens += usage.prompt_tokens
            self.completion_tokens += usage.completion_tokens
            self.cost_usd += usage.cost_usd or 0.0

    def snapshot(self) -> dict[str, Any]:
        return asdict(self)
