"""Which failures are worth another attempt, and how long to wait before it."""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Callable
from typing import Any

from tenacity import RetryCallState

from assay.models._config import RetryPolicy

_RETRY_STATUS = {408, 409, 425, 429}
_FINAL_STATUS = {400, 401, 402, 403, 404, 405, 413, 422}


def status_of(exc: BaseException) -> int | None:
    code = getattr(exc, "status_code", None)
    if isinstance(code, int):
        return code
    response = getattr(exc, "response", None)
    code = getattr(response, "status_code", None)
    return code if isinstance(code, int) else None


def is_retryable(exc: BaseException) -> bool:
    """429, 5xx, timeouts and connection errors are transient; client errors are not."""
    if isinstance(exc, asyncio.TimeoutError | TimeoutError | ConnectionError):
        return True
    name = type(exc).__name__
    if name == "ContextWindowExceededError":
        return False
    text = str(exc)
    if "Missing credentials" in text or "api_key" in text and "must be set" in text:
        return False  # litellm reports a missing key as a 500; retrying cannot help
    if name in {
        "Timeout",
        "APIConnectionError",
        "RateLimitError",
        "ServiceUnavailableError",
        "InternalServerError",
        "APITimeoutError",
    }:
        return True
    code = status_of(exc)
    if code is None:
        return False
    if code in _FINAL_STATUS:
        return False
    return code in _RETRY_STATUS or code >= 500


def _headers_of(exc: BaseException) -> dict[str, str]:
    for attr in ("litellm_response_headers", "headers"):
        headers = getattr(exc, attr, None)
        if headers:
            return {str(k).lower(): str(v) for k, v in dict(headers).items()}
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers:
        return {str(k).lower(): str(v) for k, v in dict(headers).items()}
    return {}


def retry_after_s(exc: BaseException) -> float | None:
    """Seconds the server asked us to wait (Retry-After as seconds or HTTP date)."""
    headers = _headers_of(exc)
    if "retry-after-ms" in headers:
        try:
            return max(0.0, float(headers["retry-after-ms"]) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        if parsed is None:
            return None
        return max(0.0, parsed.timestamp() - time.time())


def make_wait(
    policy: RetryPolicy, *, attempts_before: int = 0
) -> Callable[[RetryCallState], float]:
    """Exponential backoff with jitter, replaced by Retry-After when the server sends one.

    `attempts_before` shifts the exponent for a retry loop that starts after attempts
    made outside it, so backoff keeps growing across the hand-over.
    """

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if exc is not None:
            hinted = retry_after_s(exc)
            if hinted is not None:
                return min(hinted, policy.max_wait_s)
        n = state.attempt_number + attempts_before
        backoff = policy.initial_wait_s * 2 ** (n - 1) + random.uniform(0, policy.jitter_s)
        return float(min(backoff, policy.max_wait_s))

    return wait


def describe_error(exc: BaseException) -> dict[str, Any]:
    code = status_of(exc)
    message = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
    return {"error_type": type(exc).__name__, "status_code": code, "message": message}
