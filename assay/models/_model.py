"""A model = a transport wrapped once with cache, concurrency bound, retries and accounting.

Every transport (litellm, local causal LM, local NLI, a plugin's, the test mock) gets the
same layers here; no transport implements any of them itself.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from functools import partial
from typing import Any, Generic, NamedTuple, TypeVar

from pydantic import BaseModel

from assay.models._aimd import AdaptiveLimit
from assay.models._budget import Budget, Ticket
from assay.models._cache import ResponseCache
from assay.models._config import ModelConfig
from assay.models._layers import (
    Accounting,
    CachedResponses,
    Retrier,
    requests_of,
)
from assay.models._ratelimit import RateLayer
from assay.models._transport import Transport, TransportError
from assay.models._types import ModelResult
from assay.redaction import scrub_text

RequestT = TypeVar("RequestT")
ResponseT = TypeVar("ResponseT", bound=BaseModel)


def failed_result(exc: TransportError, started: float) -> ModelResult[Any]:
    """A request's failure as a recorded result (credentials scrubbed from the text)."""
    return ModelResult(
        error=scrub_text(exc.render()),
        error_type=exc.error_type,
        attempts=exc.attempts,
        latency_s=time.perf_counter() - started,
    )


class Lookup(NamedTuple, Generic[ResponseT]):
    """A request's response-cache lookup (`Model.lookup`): its key, and the cached
    result, or None for a miss."""

    key: str
    result: ModelResult[ResponseT] | None


class Model(Generic[RequestT, ResponseT]):
    """Answers requests through `transport`: from the cache when it can, else within the
    concurrency bound with finite retries; every result is added to `accounting`.

    `use_cache=False` neither reads nor writes the cache; `refresh_cache=True` sends
    anyway and overwrites the entry.
    """

    def __init__(
        self, transport: Transport[RequestT, ResponseT], cache: ResponseCache | None = None
    ) -> None:
        self.transport = transport
        self.cache = cache
        self.cached = CachedResponses(cache, transport.cache_key, transport.response_type)
        adaptive = getattr(transport.config, "adaptive_concurrency", False)
        self.limit = AdaptiveLimit(transport.max_concurrency, adaptive=adaptive)
        self.retrier = Retrier(transport.config.retry)
        self.accounting = Accounting()
        # per attempt: the endpoint's rpm/tpm windows and pauses, then a slot of `limit`
        self.rate = RateLayer(transport.config, self.limit, self.accounting)
        self.budget: Budget | None = None  # a run's spending caps (`assay.models._budget`)

    @property
    def config(self) -> ModelConfig:
        return self.transport.config

    def describe(self) -> dict[str, Any]:
        return self.transport.describe()

    def cache_key(self, request: RequestT) -> str:
        """The response-cache key for a request (also read by `assay run --dry-run`)."""
        return self.transport.cache_key(request)

    def preflight(self) -> None:
        """Let the transport fail early (missing credentials, a model that cannot load)."""
        check = getattr(self.transport, "preflight", None)
        if check is not None:
            check()

    @property
    def stop_if_unreachable(self) -> bool:
        return bool(getattr(self.transport, "stop_if_unreachable", False))

    @stop_if_unreachable.setter
    def stop_if_unreachable(self, value: bool) -> None:
        """A run sets it: a transport that knows its server never answered then stops it."""
        if hasattr(self.transport, "stop_if_unreachable"):
            self.transport.stop_if_unreachable = value

    def _finish(self, result: ModelResult[ResponseT]) -> ModelResult[ResponseT]:
        self.accounting.add(result)
        return result

    def lookup(
        self, request: RequestT, *, use_cache: bool = True, refresh_cache: bool = False
    ) -> Lookup[ResponseT]:
        """The request's key and, when the cache holds its response, the finished result
        (counted like any other): no coroutine, so a caller answers a cache hit without
        a turn of the event loop, and hands the lookup to `complete` on a miss."""
        return self.lookup_many([request], use_cache=use_cache, refresh_cache=refresh_cache)[0]

    def lookup_many(
        self, requests: Sequence[RequestT], *, use_cache: bool = True, refresh_cache: bool = False
    ) -> list[Lookup[ResponseT]]:
        """`lookup` for each request: every key first, then the cache read for all of
        them (one query, `_cache_reads.stored_values`)."""
        started = time.perf_counter()
        keys = [self.cached.key_of(r) for r in requests]  # once: the cache's and the record's
        if not (use_cache and not refresh_cache) or self.cache is None:
            return [Lookup(key, None) for key in keys]
        hits = self.cached.read_many(keys)
        elapsed = time.perf_counter() - started
        return [
            Lookup(key, None if hit is None else self._hit(hit, key, elapsed))
            for key, hit in zip(keys, hits, strict=True)
        ]

    def _hit(self, response: ResponseT, key: str, elapsed: float) -> ModelResult[ResponseT]:
        result: ModelResult[ResponseT] = ModelResult(
            response=response, cache_hit=True, latency_s=elapsed, request_key=key
        )
        return self._finish(result)

    async def complete(
        self,
        request: RequestT,
        *,
        use_cache: bool = True,
        refresh_cache: bool = False,
        lookup: Lookup[ResponseT] | None = None,
    ) -> ModelResult[ResponseT]:
        """One request's response or recorded error; fatal errors propagate. `lookup`:
        the request's own `lookup`, already made (its key is not computed again; the
        result's latency counts from this call, not from the lookup, which a caller may
        have made well before a worker took the request)."""
        started = time.perf_counter()
        looked = lookup or self.lookup(request, use_cache=use_cache, refresh_cache=refresh_cache)
        if looked.result is not None:
            return looked.result
        key = looked.key
        # over a cap: raises BudgetExhausted, nothing sent, nothing recorded
        ticket = None if self.budget is None else self.budget.admit(self.config, request)
        try:
            send = partial(self.rate.send, self.transport.send, request)
            raw, attempts = await self.retrier.call(send)
        except TransportError as exc:
            self._settle(ticket, None, exc.attempts)
            failed = failed_result(exc, started)
            failed.request_key = key
            return self._finish(failed)
        except BaseException:  # cut off in flight: it may still be billed
            self._settle(ticket, None, None)
            raise
        attempts += requests_of(raw) - 1  # the last send's own re-asks (instructor)
        self._settle(ticket, raw, attempts)
        if use_cache or refresh_cache:
            self.cached.write(key, raw)
        elapsed = time.perf_counter() - started
        result: ModelResult[ResponseT] = ModelResult(
            response=raw, attempts=attempts, latency_s=elapsed, request_key=key
        )
        return self._finish(result)

    def _settle(self, ticket: Ticket | None, raw: Any, attempts: int | None) -> None:
        """The budget learns what an admitted request cost (`attempts` None: cancelled)."""
        if ticket is None or self.budget is None:
            return
        if attempts is None:
            self.budget.cancelled(ticket)
        else:
            self.budget.settle(ticket, raw, attempts)

    async def complete_many(
        self, requests: Sequence[RequestT], *, use_cache: bool = True, refresh_cache: bool = False
    ) -> list[ModelResult[ResponseT]]:
        """Results in request order. A transport with `send_batch` gets every cache miss
        in one call (one slot, retried as a whole); others get concurrent `complete`s.
        Every result's `latency_s` is the whole call's wall time."""
        if getattr(self.transport, "send_batch", None) is None:
            coros = (
                self.complete(r, use_cache=use_cache, refresh_cache=refresh_cache) for r in requests
            )
            return list(await asyncio.gather(*coros))
        started = time.perf_counter()
        keys = [self.cached.key_of(r) for r in requests]  # records carry them, cache or not
        read = use_cache and not refresh_cache
        hits = self.cached.read_many(keys) if read else [None] * len(keys)
        results: list[ModelResult[ResponseT] | None] = [_hit(hit) for hit in hits]
        misses = [i for i, r in enumerate(results) if r is None]
        if misses:
            writes = use_cache or refresh_cache
            for i, result in zip(
                misses, await self._send_batch(requests, misses, keys, started, writes), strict=True
            ):
                results[i] = result
        elapsed = time.perf_counter() - started
        done = [r for r in results if r is not None]
        for result, key in zip(done, keys, strict=True):
            result.latency_s = elapsed
            result.request_key = key
            self.accounting.add(result)
        return done

    async def _send_batch(
        self,
        requests: Sequence[RequestT],
        misses: list[int],
        keys: list[str],
        started: float,
        writes: bool,
    ) -> list[ModelResult[ResponseT]]:
        send_batch = self.transport.send_batch  # type: ignore[attr-defined]
        try:
            async with self.limit:
                raws, attempts = await self.retrier.call(
                    partial(send_batch, [requests[i] for i in misses])
                )
        except TransportError as exc:
            return [failed_result(exc, started) for _ in misses]
        for i, raw in zip(misses, raws, strict=True):
            if writes:
                self.cached.write(keys[i], raw)
        return [ModelResult(response=raw, attempts=attempts) for raw in raws]


def _hit(response: ResponseT | None) -> ModelResult[ResponseT] | None:
    return None if response is None else ModelResult(response=response, cache_hit=True)
