"""The rate-limit headers of a provider's answer, read into numbers.

OpenAI (and servers copying it: Azure, vLLM's router, LiteLLM proxy, Groq, Together)
send ``x-ratelimit-{limit,remaining,reset}-{requests,tokens}`` on every answer and
``Retry-After`` (or ``retry-after-ms``) on a 429. A reset is a duration such as ``1s``,
``6m0s`` or ``120ms``: the time until that window is full again. Each transport hands
the headers it saw to `note_headers`; the rate layer reads them after the send.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar, Token
from dataclasses import dataclass
from typing import Any

from assay.models._retry import retry_after_from_headers

__all__ = ["HeaderSink", "Window", "note_headers", "read_window", "unwatch", "watch", "watching"]

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_PREFIX = "llm_provider-"  # litellm keeps the provider's headers under this prefix too


def parse_duration(value: str | None) -> float | None:
    """Seconds in ``6m0s`` / ``1.5s`` / ``120ms`` / ``2`` (plain seconds); None if unreadable."""
    if value is None:
        return None
    text = value.strip().lower()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(float(n) * _UNIT_S[u] for n, u in parts)


def _number(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


@dataclass(frozen=True)
class Window:
    """One window as the provider reported it: its size, what is left, when it is full."""

    limit: float | None
    remaining: float | None
    reset_s: float | None

    def refill_s(self, needed: float) -> float | None:
        """Seconds until `needed` more units are free (the window refills evenly until
        `reset_s`); None when the headers do not say."""
        if self.reset_s is None:
            return None
        if self.limit is None or self.remaining is None or self.limit <= self.remaining:
            return self.reset_s
        per_unit = self.reset_s / (self.limit - self.remaining)
        return min(self.reset_s, per_unit * max(needed, 1.0))


def lowered(headers: Mapping[str, str]) -> dict[str, str]:
    """Lower-cased names; litellm's ``llm_provider-`` copies read as the originals."""
    out = {str(k).lower(): str(v) for k, v in headers.items()}
    for name in [n for n in out if n.startswith(_PREFIX)]:
        out.setdefault(name[len(_PREFIX) :], out[name])
    return out


def read_window(headers: Mapping[str, str], kind: str) -> Window | None:
    """The `kind` ("requests" or "tokens") window in lower-cased headers, or None."""
    window = Window(
        limit=_number(headers.get(f"x-ratelimit-limit-{kind}")),
        remaining=_number(headers.get(f"x-ratelimit-remaining-{kind}")),
        reset_s=parse_duration(headers.get(f"x-ratelimit-reset-{kind}")),
    )
    return None if window == Window(None, None, None) else window


def retry_after(headers: Mapping[str, str]) -> float | None:
    return retry_after_from_headers(dict(headers))


class HeaderSink:
    """Where a transport leaves the headers of the answer to the current send."""

    __slots__ = ("headers",)

    def __init__(self) -> None:
        self.headers: dict[str, str] = {}


_SINK: ContextVar[HeaderSink | None] = ContextVar("assay_rate_headers", default=None)


def watch() -> tuple[HeaderSink, Token[HeaderSink | None]]:
    """A fresh sink for the next send (one per attempt); `_SINK.reset(token)` after."""
    sink = HeaderSink()
    return sink, _SINK.set(sink)


def unwatch(token: Token[HeaderSink | None]) -> None:
    _SINK.reset(token)


@contextmanager
def watching() -> Iterator[HeaderSink]:
    """`watch` as a block (tests, one-off sends)."""
    sink, token = watch()
    try:
        yield sink
    finally:
        unwatch(token)


def note_headers(headers: Any) -> None:
    """A transport's hook: keep the rate-limit headers of an answer (success or error)
    for the rate layer; nothing to do when no layer is watching."""
    sink = _SINK.get()
    if sink is None or headers is None:
        return
    try:
        items = list(headers.items())
    except (AttributeError, TypeError):
        return
    kept = {}
    for name, value in items:  # on every answer: only the few names that matter
        key = str(name).lower()
        if "ratelimit" in key or "retry-after" in key:
            kept[key] = str(value)
    if kept:
        sink.headers.update(lowered(kept))


def litellm_headers(obj: Any) -> Any:
    """The provider headers litellm kept on a response or an exception, if any."""
    hidden = getattr(obj, "_hidden_params", None)
    if isinstance(hidden, dict) and isinstance(hidden.get("additional_headers"), Mapping):
        return hidden["additional_headers"]
    for name in ("litellm_response_headers", "headers"):
        found = getattr(obj, name, None)
        if found is not None and hasattr(found, "items"):
            return found
    response = getattr(obj, "response", None)
    return getattr(response, "headers", None)
