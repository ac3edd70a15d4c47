"""How the lean OpenAI transport's failures become the `TransportError`s, and the record
`error` texts, that the litellm path produces for the same server answer.

Retryability and Retry-After come from `_retry` (one status table for both transports);
the error types and messages follow litellm's own mapping of OpenAI errors, so records,
reports and `--retry-errors` selections do not depend on which transport sent a request.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from typing import Any

from assay.models._retry import (
    CONNECTION_ERROR,
    ConnectFailure,
    retry_after_from_headers,
    retryable_status,
)
from assay.models._transport import TransportError

# status -> (litellm's exception name, whether litellm repeats the name in its message)
_LITELLM_NAMES: dict[int, tuple[str, bool]] = {
    401: ("AuthenticationError", True),
    404: ("NotFoundError", False),
    429: ("RateLimitError", True),
    500: ("InternalServerError", True),
    502: ("BadGatewayError", True),
    503: ("ServiceUnavailableError", True),
}
_MAX_MESSAGE = 300


def _name_of(status: int) -> tuple[str, bool]:
    if status in _LITELLM_NAMES:
        return _LITELLM_NAMES[status]
    return ("APIError", True) if status >= 500 else ("BadRequestError", False)


def _provider_message(status: int, body: bytes) -> str:
    """The provider's own words: `error.message` of a JSON error body, else the body."""
    text = body.decode("utf-8", "replace").strip()
    try:
        parsed: Any = json.loads(text)
    except ValueError:
        return text or "Error."
    if isinstance(parsed, Mapping):
        error = parsed.get("error")
        if isinstance(error, Mapping) and isinstance(error.get("message"), str):
            return str(error["message"]) or "Error."
        if isinstance(error, str) and error:
            return error
    return f"Error code: {status} - {parsed!r}"


def _one_line(text: str) -> str:
    """What a record keeps of a message: its first line, at most 300 characters."""
    stripped = text.strip()
    return stripped.splitlines()[0][:_MAX_MESSAGE] if stripped else "Error."


def status_error(status: int, body: bytes, headers: Mapping[str, str]) -> TransportError:
    """An HTTP error answer (4xx/5xx), typed and worded as litellm words it."""
    message = _provider_message(status, body)
    if status == 408:
        name, text = (
            "Timeout",
            "litellm.Timeout: APITimeoutError - Request timed out. "
            + (f"Error_str: Error code: 408 - {_parsed_or_text(body)!r}"),
        )
    elif status == 504:
        name, text = "Timeout", f"litellm.Timeout: Timeout Error: OpenAIException - {message}"
    else:
        name, repeated = _name_of(status)
        again = f"{name}: " if repeated else ""
        text = f"litellm.{name}: {again}OpenAIException - {message}"
    retryable = retryable_status(status)
    lowered = {str(k).lower(): str(v) for k, v in headers.items()}
    return TransportError(
        _one_line(text),
        error_type=name,
        status_code=status,
        retryable=retryable,
        retry_after_s=retry_after_from_headers(lowered) if retryable else None,
    )


def _parsed_or_text(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return body.decode("utf-8", "replace")


def bad_body_error(reason: str) -> TransportError:
    """A 200 whose body is not a chat completion (a broken proxy, a truncated answer):
    litellm reports it as a retryable 500."""
    text = f"litellm.InternalServerError: InternalServerError: OpenAIException - {reason}"
    return TransportError(
        _one_line(text), error_type="InternalServerError", status_code=500, retryable=True
    )


NOT_JSON = "InvalidResponse"
_LITELLM_RECEIVED = re.compile(
    r"Empty or invalid response from LLM endpoint\. Received: "
    r"('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\")\. Check the reverse proxy"
)
_HTML = re.compile(r"\s*<(?:!doctype\s+html|html|head|body)\b", re.IGNORECASE)


def media_type(headers: Mapping[str, str]) -> str | None:
    """The Content-Type's media type (`text/html`), lower case, without parameters."""
    for name, value in headers.items():
        if str(name).lower() == "content-type":
            return str(value).split(";")[0].strip().lower() or None
    return None


def not_json_error(content_type: str, body: bytes | str) -> TransportError:
    """A 2xx answer whose body is not JSON: a login or error page, a proxy's own answer,
    an api_base that is a web site. Said so, with its content type; not retried, since
    the same URL answers the same page again."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    start = " ".join(text.split())[:80]
    message = (
        f"response is not JSON (content-type {content_type}); check that api_base is an "
        f"OpenAI-compatible endpoint (usually ending in /v1); the body starts {start!r}"
    )
    return TransportError(message, error_type=NOT_JSON, status_code=200, retryable=False)


def litellm_not_json(exc: BaseException) -> TransportError | None:
    """`not_json_error` for litellm's "Empty or invalid response ... Received: '<text>'",
    which it raises when the OpenAI client handed back text (a non-JSON content type).
    litellm keeps no headers of that answer, so the type is read off the body: an HTML
    page is `text/html`, anything else `text/plain`."""
    found = _LITELLM_RECEIVED.search(str(exc))
    if found is None:
        return None
    try:
        body = ast.literal_eval(found.group(1))
    except (ValueError, SyntaxError):
        return None
    if not isinstance(body, str):
        return None
    return not_json_error("text/html" if _HTML.match(body) else "text/plain", body)


def timeout_error(timeout_s: float, took_s: float) -> TransportError:
    """No complete answer within the per-attempt `timeout_s`."""
    text = (
        "litellm.Timeout: APITimeoutError - Request timed out. Error_str: Request timed out. "
        f"- timeout value={timeout_s}, time taken={round(took_s, 2)} seconds"
    )
    return TransportError(_one_line(text), error_type="Timeout", status_code=408, retryable=True)


def connection_error(failure: ConnectFailure | None) -> TransportError:
    """A request that never reached its server (named host and port), or a connection
    the server dropped mid-answer: both worth another attempt."""
    if failure is not None:
        return TransportError(failure.message(), error_type=CONNECTION_ERROR, retryable=True)
    text = "litellm.APIConnectionError: APIConnectionError: OpenAIException - Connection error."
    return TransportError(text, error_type="APIConnectionError", status_code=500, retryable=True)
