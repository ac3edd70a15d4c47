"""How the fake server answers one request: behaviours and the OpenAI wire format.

A `Behavior` is data (it round-trips through JSON, so a parent process can script a
spawned server); `render_response` turns one into the HTTP response a provider sends.
"""

from __future__ import annotations

import itertools
import json
import re
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

MAX_DELAY_S = 3600.0  # a delay is a test knob, never a way to hang forever
DEFAULT_CONTENT = '{"label": "fully_supported", "confidence": 0.9, "rationale": "ok"}'

_DEFAULT_MALFORMED = '{"id": "chatcmpl-fake", "object": "chat.completion", "choices": [{"mess'

# (type, code, message) per status, mirroring what OpenAI sends, so client-side error
# mapping is exercised with realistic bodies.
_ERROR_DEFAULTS: dict[int, tuple[str, str | None, str]] = {
    400: ("invalid_request_error", None, "Invalid request (fake server)."),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided (fake)."),
    403: ("invalid_request_error", "unsupported_country_region_territory", "Forbidden (fake)."),
    404: ("invalid_request_error", "model_not_found", "The model does not exist (fake)."),
    408: ("timeout", None, "Request timed out (fake)."),
    409: ("invalid_request_error", None, "Conflict (fake)."),
    422: ("invalid_request_error", None, "Unprocessable entity (fake)."),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached (fake). Please retry later."),
    500: ("server_error", None, "The server had an error processing your request (fake)."),
    502: ("server_error", None, "Bad gateway (fake)."),
    503: ("server_error", None, "The engine is currently overloaded (fake)."),
    504: ("server_error", None, "Gateway timeout (fake)."),
}


class Behavior(BaseModel):
    """How the server answers one request. Build it with the constructor functions.

    A pydantic model (not a dataclass) so that it round-trips through JSON: the same
    objects script an in-thread server directly and a spawned one via ``/_control``.
    ``kind="default"`` means "whatever the server's default is" and only makes sense
    together with ``delay_s`` (see :func:`delay`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["reply", "error", "malformed", "refusal", "tool_call", "default"] = "reply"
    content: str | None = None
    finish_reason: str = "stop"
    model_returned: str | None = None
    status: int = Field(default=200, ge=100, le=599)
    retry_after: float | None = Field(default=None, ge=0)
    body: dict[str, Any] | str | None = None
    delay_s: float = Field(default=0.0, ge=0, le=MAX_DELAY_S)
    headers: dict[str, str] = Field(default_factory=dict)
    tool_name: str | None = None
    content_type: str = "application/json"
    logprobs: list[tuple[str, float]] | None = None
    """Tokens and log probabilities answered when the request asks for `logprobs` (None:
    the content's `tokens` at log probability 0); never sent to a request that did not."""


Responder = Callable[[dict[str, Any]], Behavior | None]
"""Computes a behavior from the request body; returning None falls through to the default."""


def reply(
    content: str,
    *,
    delay_s: float = 0.0,
    finish_reason: str = "stop",
    model_returned: str | None = None,
    logprobs: Mapping[str, float] | list[tuple[str, float]] | None = None,
) -> Behavior:
    """A 200 with ``content`` as the assistant message: the happy path. ``logprobs``
    scripts the token log probabilities sent when a request asks for them: a list of
    (token, logprob), or a mapping token -> logprob over the content's `tokens` (tokens
    it does not name get 0)."""
    if isinstance(logprobs, Mapping):
        logprobs = [(t, float(logprobs.get(t, 0.0))) for t in tokens(content)]
    return Behavior(
        kind="reply",
        content=content,
        delay_s=delay_s,
        finish_reason=finish_reason,
        model_returned=model_returned,
        logprobs=logprobs,
    )


_TOKEN = re.compile(r"\w+|\s+|[^\w\s]")


def tokens(content: str) -> list[str]:
    """How the fake server splits an answer into tokens: runs of word characters, runs
    of spaces, single punctuation marks. They join back to the content."""
    return _TOKEN.findall(content)


def _logprobs(b: Behavior, body: Mapping[str, Any]) -> dict[str, Any] | None:
    """OpenAI's `choices[i].logprobs` for a request that asked (`logprobs: true`)."""
    if body.get("logprobs") is not True or b.kind != "reply":
        return None
    scripted = b.logprobs
    if scripted is None:
        scripted = [(t, 0.0) for t in tokens(b.content or "")]
    top_n = body.get("top_logprobs")
    entries = []
    for token, logprob in scripted:
        entry = {"token": token, "logprob": logprob, "bytes": list(token.encode())}
        top = [entry.copy()] if isinstance(top_n, int) and top_n > 0 else []
        entries.append({**entry, "top_logprobs": top})
    return {"content": entries, "refusal": None}


def http_error(
    status: int,
    *,
    retry_after: float | None = None,
    body: dict[str, Any] | str | None = None,
    delay_s: float = 0.0,
) -> Behavior:
    """An HTTP error; ``body`` defaults to an OpenAI-style ``{"error": {...}}`` for ``status``.

    ``retry_after`` (seconds) becomes a ``Retry-After`` header, which is what retry layers
    are supposed to honour on 429/503. A ``str`` body is sent verbatim as text/plain.
    """
    return Behavior(
        kind="error", status=status, retry_after=retry_after, body=body, delay_s=delay_s
    )


def delay(seconds: float, then: Behavior | None = None) -> Behavior:
    """``then`` (or the server default) answered ``seconds`` late: to trip client timeouts."""
    if then is None:
        return Behavior(kind="default", delay_s=seconds)
    return then.model_copy(update={"delay_s": then.delay_s + seconds})


def malformed_body(
    text: str = _DEFAULT_MALFORMED,
    *,
    status: int = 200,
    delay_s: float = 0.0,
    content_type: str = "application/json",
) -> Behavior:
    """A response whose body is not a chat completion: a broken proxy. Labelled
    application/json unless `content_type` says otherwise (a login or error page is
    `text/html`)."""
    return Behavior(
        kind="malformed", body=text, status=status, delay_s=delay_s, content_type=content_type
    )


def refusal(text: str = "I can't help with that.", *, delay_s: float = 0.0) -> Behavior:
    """A safety refusal: content null, ``message.refusal`` set, finish_reason content_filter."""
    return Behavior(kind="refusal", content=text, finish_reason="content_filter", delay_s=delay_s)


def tool_call(
    arguments: str, *, name: str | None = None, finish_reason: str = "stop", delay_s: float = 0.0
) -> Behavior:
    """A 200 whose message calls a function with ``arguments`` (a JSON string, sent as
    is, so a test can send malformed ones); content null. ``name`` defaults to the
    function the request forced with ``tool_choice`` (else its first tool). OpenAI answers
    a forced tool choice with finish_reason "stop"."""
    return Behavior(
        kind="tool_call",
        content=arguments,
        tool_name=name,
        finish_reason=finish_reason,
        delay_s=delay_s,
    )


def truncated(content: str, *, delay_s: float = 0.0) -> Behavior:
    """A reply cut off by max_tokens (finish_reason "length"), usually unparseable JSON."""
    return reply(content, delay_s=delay_s, finish_reason="length")


def _message_text(body: Mapping[str, Any]) -> str:
    """All message contents joined by newlines: what ``script(match=...)`` searches."""
    parts: list[str] = []
    messages = body.get("messages")
    if not isinstance(messages, list):
        return ""
    for msg in messages:
        if not isinstance(msg, Mapping):
            continue
        content = msg.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            for part in content:
                if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                    parts.append(part["text"])
    return "\n".join(parts)


def _ntokens(text: str | None) -> int:
    """Whitespace token count: crude, deterministic, good enough for usage accounting."""
    return len(text.split()) if text else 0


def _error_json(status: int, message: str | None = None, code: str | None = None) -> str:
    etype, dcode, dmsg = _ERROR_DEFAULTS.get(
        status, ("server_error" if status >= 500 else "invalid_request_error", None, "Error.")
    )
    return json.dumps(
        {
            "error": {
                "message": message or dmsg,
                "type": etype,
                "param": None,
                "code": code if code is not None else dcode,
            }
        }
    )


def _json_response(
    status: int, text: str, headers: Mapping[str, str] | None = None
) -> web.Response:
    return web.Response(
        status=status, text=text, content_type="application/json", headers=dict(headers or {})
    )


def _tool_name(body: Mapping[str, Any]) -> str:
    """The function a request forced with ``tool_choice``, else its first tool's name."""
    choice = body.get("tool_choice")
    if isinstance(choice, Mapping) and isinstance(choice.get("function"), Mapping):
        return str(choice["function"].get("name") or "answer")
    tools = body.get("tools")
    if isinstance(tools, list) and tools and isinstance(tools[0], Mapping):
        function = tools[0].get("function")
        if isinstance(function, Mapping) and function.get("name"):
            return str(function["name"])
    return "answer"


def _message(b: Behavior, body: Mapping[str, Any], ids: itertools.count[int]) -> dict[str, Any]:
    """The assistant message of a 200: text, a refusal, or one function call."""
    if b.kind == "tool_call":
        call = {
            "id": f"call_fake{next(ids):08x}",
            "type": "function",
            "function": {"name": b.tool_name or _tool_name(body), "arguments": b.content or ""},
        }
        return {"role": "assistant", "content": None, "refusal": None, "tool_calls": [call]}
    is_refusal = b.kind == "refusal"
    return {
        "role": "assistant",
        "content": None if is_refusal else b.content,
        "refusal": b.content if is_refusal else None,
    }


def render_response(b: Behavior, body: dict[str, Any], ids: itertools.count[int]) -> web.Response:
    """The provider's HTTP response for behaviour `b` to request `body`."""
    headers = {"x-request-id": f"req_fake{next(ids):08x}", **b.headers}
    if b.kind == "error":
        if b.retry_after is not None:
            ra = b.retry_after
            headers["Retry-After"] = str(int(ra)) if float(ra).is_integer() else str(ra)
        if isinstance(b.body, str):
            return web.Response(
                status=b.status, text=b.body, content_type="text/plain", headers=headers
            )
        text = json.dumps(b.body) if b.body is not None else _error_json(b.status)
        return _json_response(b.status, text, headers)
    if b.kind == "malformed":
        text = b.body if isinstance(b.body, str) else _DEFAULT_MALFORMED
        headers["Content-Type"] = b.content_type
        return web.Response(status=b.status, text=text, headers=headers)

    message = _message(b, body, ids)
    n = body.get("n")
    n_choices = n if isinstance(n, int) and 1 <= n <= 128 else 1
    prompt_tokens = _ntokens(_message_text(body))
    completion_tokens = _ntokens(b.content) * n_choices
    payload = {
        "id": f"chatcmpl-fake{next(ids):08x}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": b.model_returned or str(body.get("model") or "fake-model"),
        "system_fingerprint": "fp_fake",
        "choices": [
            {
                "index": i,
                "message": message,
                "logprobs": _logprobs(b, body),
                "finish_reason": b.finish_reason,
            }
            for i in range(n_choices)
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
    return _json_response(200, json.dumps(payload), headers)
