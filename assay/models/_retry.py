"""How a hosted request failed: worth another attempt or not, the wait the server asked
for, and whether the server was ever reached. `classify` turns any exception litellm
raises into the `TransportError` the retry layer reads."""

from __future__ import annotations

import asyncio
import email.utils
import re
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC
from typing import Any
from urllib.parse import urlsplit

from assay.models._transport import TransportError

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
    if isinstance(exc, TargetUnreachable):
        return False
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
    return code is not None and retryable_status(code)


def retryable_status(code: int) -> bool:
    """The one status table of both hosted transports: 408/409/425/429 and 5xx are
    worth another attempt, other client errors are not."""
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
    return retry_after_from_headers(_headers_of(exc))


def retry_after_from_headers(headers: dict[str, str]) -> float | None:
    """The wait asked by lower-cased response headers: `retry-after-ms`, else
    `Retry-After` in seconds or as an HTTP date."""
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
        pass
    try:  # an HTTP date; an unreadable one asks for nothing (the backoff decides)
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if parsed.tzinfo is None:  # "-0000": UTC, as the RFC has it
        parsed = parsed.replace(tzinfo=UTC)
    return max(0.0, parsed.timestamp() - time.time())


CONNECTION_ERROR = "connection_error"
_HOST_PORT = re.compile(r"host ([^\s:\[\]]+|\[[^\]]+\]):(\d+)")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_REACHED = {"ServerDisconnectedError", "RemoteProtocolError", "ClientConnectorCertificateError"}


@dataclass(frozen=True)
class ConnectFailure:
    """A request that never reached a server: nothing was sent, so nothing was answered."""

    reason: str  # "connection refused" | "host not found" | "host unreachable"
    host: str | None
    port: int | None

    def where(self) -> str:
        if self.host is None:
            return "the server"
        return f"{self.host}:{self.port}" if self.port is not None else self.host

    def hint(self) -> str:
        if self.reason == "connection refused":
            return "is the server running?"
        if self.reason == "host not found":
            return "check the host name in api_base"
        return "check api_base and the network"

    def message(self) -> str:
        return f"cannot connect to {self.where()}: {self.reason}"


class TargetUnreachable(Exception):
    """Every connection attempt to a model endpoint failed before any answer: the run
    stops instead of spending every retry of every request on a server that is not there."""

    def __init__(self, failure: ConnectFailure, model: str, api_base: str | None) -> None:
        self.failure = failure
        self.model = model
        self.api_base = api_base
        super().__init__(failure.message())


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(seen) < 12:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _reason(chain: list[BaseException]) -> str | None:
    names = {type(e).__name__ for e in chain}
    if any(isinstance(e, ConnectionRefusedError) for e in chain):
        return "connection refused"
    if any(isinstance(e, socket.gaierror) for e in chain) or "ClientConnectorDNSError" in names:
        return "host not found"
    if names & {"ClientConnectorError", "ConnectError"} or any(
        isinstance(e, OSError) and e.errno is not None for e in chain
    ):
        return "host unreachable"
    return None


def _host_port(chain: list[BaseException], api_base: str | None) -> tuple[str | None, int | None]:
    for e in chain:  # aiohttp's ClientConnectorError knows where it tried to connect
        host, port = getattr(e, "host", None), getattr(e, "port", None)
        if isinstance(host, str) and isinstance(port, int):
            return host, port
    for e in chain:
        found = _HOST_PORT.search(str(e))
        if found:
            return found.group(1).strip("[]"), int(found.group(2))
    if api_base:
        parts = urlsplit(api_base)
        try:
            port = parts.port or _DEFAULT_PORTS.get(parts.scheme)
        except ValueError:
            port = None
        return parts.hostname, port
    return None, None


def connection_failure(exc: BaseException, api_base: str | None = None) -> ConnectFailure | None:
    """Why a request never reached its server (refused, DNS, unreachable), or None when it
    did (litellm reports all of these as a 500 'Connection error.')."""
    chain = list(_chain(exc))
    if any(type(e).__name__ in _REACHED or "SSL" in type(e).__name__ for e in chain):
        return None  # a server answered (then dropped us, or failed TLS): not this case
    reason = _reason(chain)
    if reason is None:
        return None
    host, port = _host_port(chain, api_base)
    return ConnectFailure(reason=reason, host=host, port=port)


def describe_error(exc: BaseException, api_base: str | None = None) -> dict[str, Any]:
    """`error_type`, `status_code`, `message` of a failed call; a request that never
    reached its server is a `connection_error` naming host and port, with no status."""
    failure = connection_failure(exc, api_base)
    if failure is not None:
        return {"error_type": CONNECTION_ERROR, "status_code": None, "message": failure.message()}
    code = status_of(exc)
    message = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
    return {"error_type": type(exc).__name__, "status_code": code, "message": message}


def classify(exc: BaseException, api_base: str | None = None) -> TransportError:
    """The `TransportError` for a failed hosted request: retryable or final, the server's
    Retry-After, and the `describe_error` type, status and message."""
    info = describe_error(exc, api_base)
    retryable = is_retryable(exc)
    return TransportError(
        info["message"],
        error_type=info["error_type"],
        status_code=info["status_code"],
        retryable=retryable,
        retry_after_s=retry_after_s(exc) if retryable else None,
    )
