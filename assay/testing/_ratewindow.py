"""The fake server's rate limits: requests and tokens per window, as OpenAI counts them.

OpenAI's limits refill evenly (a 60 rpm limit frees one request a second) up to the
full window, and every answer says where the account stands:
``x-ratelimit-{limit,remaining,reset}-{requests,tokens}``, the reset being the time until
the window is full again (``1.5s``). Over a limit the answer is a 429 with
``Retry-After`` (seconds until the request would fit). The server admits a request
when one request and its prompt tokens are left, then charges the tokens its answer
reports (prompt + completion), so the usage a client reads back is what was counted.
"""

from __future__ import annotations

import json
import math
import threading
import time
from typing import Any

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from assay.testing._behaviors import _error_json, _json_response, _message_text, _ntokens

__all__ = ["RateWindows"]


class _Bucket:
    """`capacity` units, refilled evenly over `period_s`; starts full."""

    def __init__(self, capacity: int, period_s: float) -> None:
        self.capacity = float(capacity)
        self.rate = capacity / period_s
        self.level = float(capacity)
        self._at = time.monotonic()

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self._at) * self.rate)
        self._at = now

    def wait_for(self, amount: float) -> float:
        """Seconds until `amount` (at most the capacity) is available."""
        missing = min(amount, self.capacity) - self.level
        return max(0.0, missing / self.rate)

    def headers(self, kind: str) -> dict[str, str]:
        reset = (self.capacity - self.level) / self.rate
        return {
            f"x-ratelimit-limit-{kind}": str(int(self.capacity)),
            f"x-ratelimit-remaining-{kind}": str(max(0, math.floor(self.level))),
            f"x-ratelimit-reset-{kind}": f"{reset:.3f}s",
        }


class RateWindows(BaseModel):
    """Limits a `FakeOpenAIServer` enforces: `rpm` requests and `tpm` tokens per
    `period_s` (60: per minute; tests shorten it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rpm: int | None = Field(default=None, ge=1)
    tpm: int | None = Field(default=None, ge=1)
    period_s: float = Field(default=60.0, gt=0)

    def start(self) -> RateState:
        return RateState(self)


class RateState:
    """The running windows of one server (thread-safe: the control API may reset it)."""

    def __init__(self, limits: RateWindows) -> None:
        self.limits = limits
        self._lock = threading.Lock()
        self.requests = _Bucket(limits.rpm, limits.period_s) if limits.rpm else None
        self.tokens = _Bucket(limits.tpm, limits.period_s) if limits.tpm else None
        self.refused = 0

    def _buckets(self) -> list[tuple[str, _Bucket]]:
        return [(k, b) for k, b in (("requests", self.requests), ("tokens", self.tokens)) if b]

    def refuse(self, body: dict[str, Any]) -> web.Response | None:
        """The 429 for a request over a limit, or None (the request is admitted)."""
        admitted, headers = self.admit(_ntokens(_message_text(body)))
        if admitted:
            return None
        message = "Rate limit reached (fake server). Please try again later."
        text = _error_json(429, message, "rate_limit_exceeded")
        return _json_response(429, text, headers)

    def stamp(self, response: web.Response) -> web.Response:
        """Charge an answer's reported tokens and add the windows' headers to it."""
        used = 0
        if response.status == 200 and isinstance(response.body, bytes):
            try:
                usage = json.loads(response.body).get("usage") or {}
                used = int(usage.get("total_tokens") or 0)
            except (ValueError, AttributeError, TypeError):
                used = 0
        response.headers.update(self.charge(used))
        return response

    def admit(self, prompt_tokens: int) -> tuple[bool, dict[str, str]]:
        """(admitted, headers): one request and `prompt_tokens` taken, or a 429's
        headers with Retry-After when either window lacks them."""
        with self._lock:
            now = time.monotonic()
            for _, bucket in self._buckets():
                bucket.refill(now)
            waits = []
            if self.requests is not None:
                waits.append(self.requests.wait_for(1))
            if self.tokens is not None:
                waits.append(self.tokens.wait_for(prompt_tokens))
            wait = max(waits, default=0.0)
            if wait > 0:
                self.refused += 1
                headers = self._headers()
                headers["retry-after"] = f"{max(wait, 0.001):.3f}"
                return False, headers
            if self.requests is not None:
                self.requests.level -= 1
            return True, self._headers()

    def charge(self, tokens: int) -> dict[str, str]:
        """Count an answer's tokens; the headers it goes out with."""
        with self._lock:
            if self.tokens is not None:
                self.tokens.refill(time.monotonic())
                self.tokens.level -= tokens
            return self._headers()

    def _headers(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for kind, bucket in self._buckets():
            out.update(bucket.headers(kind))
        return out
