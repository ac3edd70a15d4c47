"""Rate limits per endpoint: requests and tokens per minute, shared by every model that
calls the same endpoint, and the pauses a provider asks for.

A provider counts an account's requests per endpoint and model, whichever judge,
decomposer or verifier sent them, so the windows live in one process-wide `Endpoint`
per (api_base or provider, model id), not in each `Model`. The windows are `aiolimiter`
leaky buckets (capacity `rpm` or `tpm`, refilled evenly over a minute: OpenAI's own
limits behave the same way). A request holds its estimated tokens (prompt estimate +
`max_tokens`, `assay.models._tokens`) until its reported usage corrects the count.

Per model, the `RateLayer` wraps each attempt: wait for the endpoint's pause and
windows, take an adaptive concurrency slot (`assay.models._aimd`), send, then read the
answer's rate-limit headers: a 429 or a nearly spent window halves the slots and pauses
the endpoint for as long as Retry-After / x-ratelimit-reset-* say.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, TypeVar

from aiolimiter import AsyncLimiter

from assay.core.manifest import RateLimitInfo
from assay.models._aimd import AdaptiveLimit
from assay.models._ratelimit_headers import Window, read_window, retry_after, unwatch, watch
from assay.models._tokens import request_token_bound
from assay.models._transport import TransportError
from assay.models._types import ChatRequest
from assay.redaction import redact_url

__all__ = ["Endpoint", "RateLayer", "endpoint_for", "rate_limits_of", "rate_limits_section"]

T = TypeVar("T")
RequestT = TypeVar("RequestT")
RATE_LIMITED = 429


class Window60(AsyncLimiter):
    """A per-minute leaky bucket whose level can be corrected after the fact (the
    library has no public call for it: `_level` is its documented state)."""

    def __init__(self, per_minute: int) -> None:
        super().__init__(per_minute, 60.0)

    async def take(self, amount: float) -> float:
        """Wait for `amount` and hold it; what was held (at most the whole window: a
        bigger request waits for an empty one rather than forever, and holds all of it)."""
        held = min(float(amount), self.max_rate)
        await self.acquire(held)
        return held

    @classmethod
    def after(cls, old: Window60 | None, per_minute: int | None) -> Window60 | None:
        """A bucket for a new event loop that remembers what `old` had counted (the
        provider does: a run's next loop must not start with a full window)."""
        if not per_minute:
            return None
        new = cls(per_minute)
        if old is not None:  # leaked here: old's own _leak would touch its closed loop
            now = time.monotonic()  # what asyncio's loop.time() reads
            new._level = max(0.0, old._level - (now - old._last_check) * old._rate_per_sec)
            new._last_check = now
        return new

    def correct(self, delta: float) -> None:
        """Count `delta` more (or, negative, fewer) units as used."""
        self._leak()
        self._level = max(0.0, self._level + delta)
        self._wake_next()


class Endpoint:
    """One endpoint's windows, its pause, and what the models calling it declared."""

    def __init__(self, name: str, model: str) -> None:
        self.name = name
        self.model = model
        self.rpm: int | None = None
        self.tpm: int | None = None
        self.paused_until = 0.0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._requests: Window60 | None = None
        self._tokens: Window60 | None = None
        self._layers: weakref.WeakSet[RateLayer] = weakref.WeakSet()

    def declare(self, layer: RateLayer) -> None:
        """A model's limits join the endpoint's: the strictest any live model declared
        is in force (a model no longer used no longer counts)."""
        self._layers.add(layer)
        rpm = tpm = None
        for live in self._layers:
            rpm, tpm = _strictest(rpm, live.rpm), _strictest(tpm, live.tpm)
        if (rpm, tpm) != (self.rpm, self.tpm):
            self.rpm, self.tpm = rpm, tpm
            self._loop = None  # remade with the new sizes on the next admit

    @property
    def limited(self) -> bool:
        return self.rpm is not None or self.tpm is not None

    def _windows(self) -> tuple[Window60 | None, Window60 | None]:
        """This loop's buckets (a bucket's waiters belong to one event loop)."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._loop = loop
            self._requests = Window60.after(self._requests, self.rpm)
            self._tokens = Window60.after(self._tokens, self.tpm)
        return self._requests, self._tokens

    async def admit(self, tokens: int) -> int:
        """Wait for a request and `tokens` in the windows; the tokens the token window
        holds for it (fewer than asked when the request is bigger than the window)."""
        if not self.limited:
            return 0
        requests, token_window = self._windows()
        if requests is not None:
            await requests.take(1)
        if token_window is not None and tokens:
            return int(await token_window.take(tokens))
        return 0

    def correct_tokens(self, delta: int) -> None:
        if self._tokens is not None and self._loop is asyncio.get_running_loop():
            self._tokens.correct(delta)

    async def paused(self) -> float:
        """Wait out a pause the provider asked for; the time it ended. Waited with a
        concurrency slot held, so that the requests queued behind it go one by one."""
        while (wait := self.paused_until - time.monotonic()) > 0:
            await asyncio.sleep(wait)
        return time.monotonic()

    def pause(self, seconds: float) -> None:
        """No request leaves for this endpoint before `seconds` from now."""
        self.paused_until = max(self.paused_until, time.monotonic() + seconds)


def _strictest(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)


_ENDPOINTS: dict[tuple[str, str], Endpoint] = {}


def endpoint_key(config: Any) -> tuple[str, str]:
    """(api_base or provider, model id): what a provider's limits are counted per."""
    return (getattr(config, "api_base", None) or config.provider, config.model)


def endpoint_for(config: Any) -> Endpoint:
    """The process-wide endpoint of `config`."""
    key = endpoint_key(config)
    endpoint = _ENDPOINTS.get(key)
    if endpoint is None:
        name = redact_url(key[0]) if getattr(config, "api_base", None) else key[0]
        endpoint = _ENDPOINTS[key] = Endpoint(str(name), key[1])
    return endpoint


class RateLayer:
    """One model's attempts through its endpoint's windows and its adaptive slots."""

    def __init__(self, config: Any, limit: AdaptiveLimit, accounting: Any) -> None:
        self.rpm: int | None = getattr(config, "rpm", None)
        self.tpm: int | None = getattr(config, "tpm", None)
        self.limit = limit
        self.accounting = accounting  # counts the 429s (`rate_limited`)
        retry = getattr(config, "retry", None)
        self.max_wait_s: float = getattr(retry, "max_wait_s", 60.0)
        self.endpoint = endpoint_for(config) if hasattr(config, "model") else None
        if self.endpoint is not None:
            self.endpoint.declare(self)

    def _tokens(self, request: Any) -> int:
        if self.endpoint is None or self.endpoint.tpm is None:
            return 0
        if not isinstance(request, ChatRequest):
            return 0
        prompt, completion = request_token_bound(request)
        return prompt + completion

    async def send(self, send: Callable[[RequestT], Awaitable[T]], request: RequestT) -> T:
        """One attempt of `send(request)` within the endpoint's limits and a slot."""
        endpoint = self.endpoint
        if endpoint is None:
            async with self.limit:
                return await send(request)
        # what the window holds, which the answer's usage then corrects (a request bigger
        # than the window holds all of it, and its usage counts in full after)
        held = await endpoint.admit(self._tokens(request))
        async with self.limit:
            started = await endpoint.paused()
            sink, token = watch()
            try:
                raw = await send(request)
            except TransportError as exc:
                self._refused(exc, sink.headers, started, held)
                raise
            finally:
                unwatch(token)
            self._answered(raw, sink.headers, started, held)
        return raw

    def _refused(
        self, exc: TransportError, headers: Mapping[str, str], started: float, held: int
    ) -> None:
        if exc.status_code != RATE_LIMITED:
            return
        assert self.endpoint is not None
        self.accounting.rate_limited += 1
        self.limit.backoff(started)
        # a refused request keeps its place in the windows: giving it back would let
        # the next one out at once, into the same refusal
        wait = exc.retry_after_s if exc.retry_after_s is not None else retry_after(headers)
        if wait is None:
            windows = [read_window(headers, kind) for kind in ("requests", "tokens")]
            waits = [w.refill_s(1) for w in windows if w is not None]
            wait = max([w for w in waits if w is not None], default=None)
        if wait is not None:
            self.endpoint.pause(min(wait, self.max_wait_s))

    def _answered(self, raw: Any, headers: Mapping[str, str], started: float, held: int) -> None:
        assert self.endpoint is not None
        usage = getattr(raw, "usage", None)
        used = getattr(usage, "total_tokens", 0) or 0
        if held and used:
            self.endpoint.correct_tokens(int(used) - held)
        # this answer's tokens: what the next request will likely need of a tokens window
        windows = self._unset_windows(headers, int(used)) if headers else []
        in_flight = self.limit.in_flight
        if not any(left < in_flight * need for _, left, need in windows):
            self.limit.succeeded()
            return
        self.limit.backoff(started)  # fewer left than may be on their way: fewer slots
        waits = [w.refill_s(need) or 0.0 for w, left, need in windows if left < need]
        if waits:  # none left: wait until the next request fits
            self.endpoint.pause(min(max(waits), self.max_wait_s))

    def _unset_windows(
        self, headers: Mapping[str, str], tokens: int
    ) -> list[tuple[Window, float, float]]:
        """The reported windows the user set no limit for, each with what one request
        needs of it (the windows the user set are paced by their own bucket)."""
        assert self.endpoint is not None
        checks: list[tuple[Window | None, float]] = []
        if self.endpoint.rpm is None:
            checks.append((read_window(headers, "requests"), 1.0))
        if self.endpoint.tpm is None:
            checks.append((read_window(headers, "tokens"), float(max(tokens, 1))))
        return [
            (w, w.remaining, need)
            for w, need in checks
            if w is not None and w.remaining is not None
        ]


def rate_limits_section(models: Iterable[Any]) -> list[RateLimitInfo]:
    """`rate_limits_of` as the manifest's typed entries."""
    return [RateLimitInfo.model_validate(entry) for entry in rate_limits_of(models)]


def rate_limits_of(models: Iterable[Any]) -> list[dict[str, Any]]:
    """Per endpoint, for the manifest: the limits in force, the 429s the models saw,
    and the lowest concurrency any reached."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for model in models:
        layer = getattr(model, "rate", None)
        if not isinstance(layer, RateLayer) or layer.endpoint is None:
            continue
        e, limit = layer.endpoint, layer.limit
        entry = out.setdefault(
            (e.name, e.model),
            {
                "endpoint": e.name,
                "model": e.model,
                "rpm": e.rpm,
                "tpm": e.tpm,
                "adaptive_concurrency": limit.adaptive,
                "max_concurrency": limit.maximum,
                "rate_limited": 0,
                "lowest_concurrency": limit.lowest,
            },
        )
        entry["max_concurrency"] = max(entry["max_concurrency"], limit.maximum)
        entry["adaptive_concurrency"] = entry["adaptive_concurrency"] or limit.adaptive
        entry["rate_limited"] += getattr(layer.accounting, "rate_limited", 0)
        entry["lowest_concurrency"] = min(entry["lowest_concurrency"], limit.lowest)
    return list(out.values())
