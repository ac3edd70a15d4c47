"""A scriptable fake of the OpenAI chat-completions endpoint, served over real HTTP.

Why a real server and not a mock: the judges talk to providers through litellm, and the
interesting failures (429 with Retry-After, 5xx, slow responses, bodies that are not
JSON, refusals, truncation) only behave faithfully when they travel through the real
HTTP client stack. This server binds 127.0.0.1 on an ephemeral port and can run

* in a background thread with its own event loop (``with FakeOpenAIServer() as srv``),
  which is what unit tests want, or
* as a separate process (``python -m assay.testing`` / ``FakeOpenAIServer.spawn_process``),
  which is what the benchmark wants so the server does not share the client's GIL.

Responses are chosen per request: scripted queues first (``srv.script``), then an
optional ``responder`` callable, then the ``default`` behavior. A control API under
``/_control/`` lets a parent process script a spawned server.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay.redaction import redact

__all__ = [
    "DEFAULT_CONTENT",
    "Behavior",
    "FakeOpenAIServer",
    "FakeServerClient",
    "Responder",
    "ServerStats",
    "delay",
    "http_error",
    "main",
    "malformed_body",
    "refusal",
    "reply",
    "truncated",
]

DEFAULT_CONTENT = '{"label": "fully_supported", "confidence": 0.9, "rationale": "ok"}'
"""What the server answers when nothing is scripted: a well-formed judge verdict."""

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
_MAX_DELAY_S = 3600.0  # a delay is a test knob, never a way to hang forever
_START_TIMEOUT_S = 10.0
_SHUTDOWN_GRACE_S = 0.5  # how long aiohttp may wait for handlers once stop() is called
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

    kind: Literal["reply", "error", "malformed", "refusal", "default"] = "reply"
    content: str | None = None
    finish_reason: str = "stop"
    model_returned: str | None = None
    status: int = Field(default=200, ge=100, le=599)
    retry_after: float | None = Field(default=None, ge=0)
    body: dict[str, Any] | str | None = None
    delay_s: float = Field(default=0.0, ge=0, le=_MAX_DELAY_S)
    headers: dict[str, str] = Field(default_factory=dict)


Responder = Callable[[dict[str, Any]], Behavior | None]
"""Computes a behavior from the request body; returning None falls through to the default."""


def reply(
    content: str,
    *,
    delay_s: float = 0.0,
    finish_reason: str = "stop",
    model_returned: str | None = None,
) -> Behavior:
    """A 200 with ``content`` as the assistant message: the happy path."""
    return Behavior(
        kind="reply",
        content=content,
        delay_s=delay_s,
        finish_reason=finish_reason,
        model_returned=model_returned,
    )


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
    text: str = _DEFAULT_MALFORMED, *, status: int = 200, delay_s: float = 0.0
) -> Behavior:
    """A response labelled application/json whose body does not parse: a broken proxy."""
    return Behavior(kind="malformed", body=text, status=status, delay_s=delay_s)


def refusal(text: str = "I can't help with that.", *, delay_s: float = 0.0) -> Behavior:
    """A safety refusal: content null, ``message.refusal`` set, finish_reason content_filter."""
    return Behavior(kind="refusal", content=text, finish_reason="content_filter", delay_s=delay_s)


def truncated(content: str, *, delay_s: float = 0.0) -> Behavior:
    """A reply cut off by max_tokens (finish_reason "length"), usually unparseable JSON."""
    return reply(content, delay_s=delay_s, finish_reason="length")


@dataclass
class ServerStats:
    """A snapshot of what the server has seen since start or the last reset.

    ``requests``/``headers`` keep at most ``max_recorded`` entries (the oldest are dropped)
    so a long benchmark cannot grow memory without bound; the counters are exact.
    Header names are lower-cased.
    """

    total: int = 0
    by_path: dict[str, int] = field(default_factory=dict)
    by_status: dict[int, int] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    scripted_remaining: int = 0

    def to_json(self) -> dict[str, Any]:
        """JSON form for ``GET /_control/stats`` (status codes become string keys)."""
        return {
            "total": self.total,
            "by_path": dict(self.by_path),
            "by_status": {str(k): v for k, v in self.by_status.items()},
            "requests": list(self.requests),
            "headers": list(self.headers),
            "scripted_remaining": self.scripted_remaining,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ServerStats:
        """Inverse of :meth:`to_json`, for clients of a spawned server."""
        return cls(
            total=int(data.get("total", 0)),
            by_path={str(k): int(v) for k, v in data.get("by_path", {}).items()},
            by_status={int(k): int(v) for k, v in data.get("by_status", {}).items()},
            requests=list(data.get("requests", [])),
            headers=list(data.get("headers", [])),
            scripted_remaining=int(data.get("scripted_remaining", 0)),
        )


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


class FakeOpenAIServer:
    """An OpenAI-compatible chat-completions server on 127.0.0.1, scriptable per request.

    Use ``with FakeOpenAIServer() as srv:`` (background thread), ``async with`` (current
    event loop) or :meth:`spawn_process` (separate process). Point clients at
    ``srv.base_url`` (``srv.url + "/v1"``). All public methods are thread-safe.
    """

    def __init__(
        self,
        *,
        default: Behavior | None = None,
        responder: Responder | None = None,
        latency_s: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        max_recorded: int = 10_000,
    ) -> None:
        if not 0 <= latency_s <= _MAX_DELAY_S:
            raise ValueError(f"latency_s must be in [0, {_MAX_DELAY_S}], got {latency_s}")
        self._lock = threading.Lock()
        self._default = self._check_default(default or reply(DEFAULT_CONTENT))
        self._responder = responder
        self.latency_s = latency_s
        self._host = host
        self._port = port
        self._max_recorded = max_recorded
        self._scripts: list[tuple[str | None, deque[Behavior]]] = []
        self._stats = ServerStats()
        self._bodies: deque[dict[str, Any]] = deque(maxlen=max_recorded)
        self._headers: deque[dict[str, str]] = deque(maxlen=max_recorded)
        self._ids = itertools.count(1)
        self._url: str | None = None
        self._runner: web.AppRunner | None = None
        self._stopping: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ configuration

    @staticmethod
    def _check_default(behavior: Behavior) -> Behavior:
        if behavior.kind == "default":
            raise ValueError("the default behavior cannot itself be kind='default'")
        return behavior

    @property
    def default(self) -> Behavior:
        """The behavior used when no script matches and the responder returns None."""
        with self._lock:
            return self._default

    @default.setter
    def default(self, behavior: Behavior) -> None:
        with self._lock:
            self._default = self._check_default(behavior)

    @property
    def responder(self) -> Responder | None:
        """Called (on the server's loop thread) for requests no script claimed."""
        return self._responder

    @responder.setter
    def responder(self, fn: Responder | None) -> None:
        self._responder = fn

    def script(self, match: str | None, behaviors: Sequence[Behavior]) -> None:
        """Queue ``behaviors`` (FIFO) for requests whose message text contains ``match``.

        ``match=None`` matches every request. Scripts with a substring are tried before
        catch-all ones, each group in registration order; an exhausted queue is skipped.
        Scripting the same ``match`` twice extends its queue.
        """
        with self._lock:
            for m, queue in self._scripts:
                if m == match:
                    queue.extend(behaviors)
                    return
            self._scripts.append((match, deque(behaviors)))

    def pending(self) -> int:
        """How many scripted behaviors have not been consumed yet."""
        with self._lock:
            return sum(len(q) for _, q in self._scripts)

    def reset(self) -> None:
        """Forget scripts and statistics (default, responder and latency stay)."""
        with self._lock:
            self._scripts.clear()
            self._stats = ServerStats()
            self._bodies.clear()
            self._headers.clear()

    @property
    def stats(self) -> ServerStats:
        """A consistent snapshot; mutating it does not affect the server. Credential headers
        (Authorization, api-key, cookies, ...) read ``<redacted>``: this is what
        ``GET /_control/stats`` serves; `headers_seen` keeps them for in-process checks."""
        with self._lock:
            return ServerStats(
                total=self._stats.total,
                by_path=dict(self._stats.by_path),
                by_status=dict(self._stats.by_status),
                requests=list(self._bodies),
                headers=[redact(h) for h in self._headers],
                scripted_remaining=sum(len(q) for _, q in self._scripts),
            )

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Chat request bodies received, oldest first (invalid JSON as ``{"_raw": ...}``)."""
        with self._lock:
            return list(self._bodies)

    @property
    def headers_seen(self) -> list[dict[str, str]]:
        """Headers of each chat request (lower-cased names), parallel to :attr:`requests`;
        unredacted, and never served over HTTP."""
        with self._lock:
            return list(self._headers)

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` once started."""
        if self._url is None:
            raise RuntimeError("FakeOpenAIServer is not running")
        return self._url

    @property
    def base_url(self) -> str:
        """What to pass as ``api_base``/``base_url`` to OpenAI-style clients."""
        return self.url + "/v1"

    # ------------------------------------------------------------------ request handling

    def _choose(self, body: dict[str, Any]) -> Behavior:
        text = _message_text(body)
        chosen: Behavior | None = None
        with self._lock:
            ordered = [s for s in self._scripts if s[0] is not None] + [
                s for s in self._scripts if s[0] is None
            ]
            for match, queue in ordered:
                if queue and (match is None or match in text):
                    chosen = queue.popleft()
                    break
            default = self._default
        if chosen is None and self._responder is not None:
            chosen = self._responder(body)
        if chosen is None:
            return default
        if chosen.kind == "default":
            return default.model_copy(update={"delay_s": default.delay_s + chosen.delay_s})
        return chosen

    def _count(self, path: str | None, status: int | None) -> None:
        with self._lock:
            if path is not None:
                self._stats.total += 1
                self._stats.by_path[path] = self._stats.by_path.get(path, 0) + 1
            if status is not None:
                self._stats.by_status[status] = self._stats.by_status.get(status, 0) + 1

    async def _sleep(self, seconds: float) -> bool:
        """Sleep without blocking the loop; False if the server started stopping meanwhile."""
        if seconds <= 0:
            return True
        assert self._stopping is not None
        try:
            await asyncio.wait_for(self._stopping.wait(), timeout=seconds)
        except TimeoutError:
            return True
        return False

    async def _handle_chat(self, request: web.Request) -> web.Response:
        raw = await request.read()
        headers = {k.lower(): v for k, v in request.headers.items()}
        try:
            parsed: Any = json.loads(raw)
        except ValueError:
            parsed = None
        body: dict[str, Any] = (
            parsed if isinstance(parsed, dict) else {"_raw": raw.decode("utf-8", "replace")}
        )
        with self._lock:
            self._bodies.append(body)
            self._headers.append(headers)
        self._count(request.path, None)
        resp = await self._respond(body, parsed)
        self._count(None, resp.status)
        return resp

    async def _respond(self, body: dict[str, Any], parsed: Any) -> web.Response:
        if not isinstance(parsed, dict):
            return _json_response(400, _error_json(400, "Request body is not a JSON object."))
        if parsed.get("stream"):
            return _json_response(
                400, _error_json(400, "FakeOpenAIServer does not stream.", "stream_unsupported")
            )
        if not isinstance(parsed.get("messages"), list):
            return _json_response(400, _error_json(400, "'messages' is required."))
        try:
            behavior = self._choose(body)
        except Exception as exc:  # a buggy responder should fail the request, loudly
            return _json_response(500, _error_json(500, f"responder raised {exc!r}"))
        if not await self._sleep(self.latency_s + behavior.delay_s):
            return _json_response(503, _error_json(503, "Fake server shutting down."))
        return self._render(behavior, body)

    def _render(self, b: Behavior, body: dict[str, Any]) -> web.Response:
        headers = {"x-request-id": f"req_fake{next(self._ids):08x}", **b.headers}
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
            return _json_response(b.status, text, headers)

        is_refusal = b.kind == "refusal"
        message: dict[str, Any] = {
            "role": "assistant",
            "content": None if is_refusal else b.content,
            "refusal": b.content if is_refusal else None,
        }
        n = body.get("n")
        n_choices = n if isinstance(n, int) and 1 <= n <= 128 else 1
        prompt_tokens = _ntokens(_message_text(body))
        completion_tokens = _ntokens(b.content) * n_choices
        payload = {
            "id": f"chatcmpl-fake{next(self._ids):08x}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": b.model_returned or str(body.get("model") or "fake-model"),
            "system_fingerprint": "fp_fake",
            "choices": [
                {"index": i, "message": message, "logprobs": None, "finish_reason": b.finish_reason}
                for i in range(n_choices)
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        return _json_response(200, json.dumps(payload), headers)

    async def _handle_models(self, request: web.Request) -> web.Response:
        """Some clients probe /v1/models; answer so they do not fail before chatting."""
        model = {"id": "fake-model", "object": "model", "owned_by": "assay"}
        data = {"object": "list", "data": [model]}
        return _json_response(200, json.dumps(data))

    async def _handle_unknown(self, request: web.Request) -> web.Response:
        """Count and 404 stray paths, so a misconfigured api_base shows up in stats."""
        await request.read()
        self._count(request.path, 404)
        return _json_response(404, _error_json(404, f"Unknown path {request.path}", "unknown_url"))

    # ------------------------------------------------------------------ control API

    async def _control_script(self, request: web.Request) -> web.Response:
        try:
            data = await request.json()
            match = data.get("match")
            if match is not None and not isinstance(match, str):
                raise ValueError("'match' must be a string or null")
            behaviors = [Behavior.model_validate(b) for b in data.get("behaviors", [])]
        except (ValueError, ValidationError, AttributeError) as exc:
            return _json_response(400, _error_json(400, f"bad script: {exc}"))
        self.script(match, behaviors)
        return _json_response(200, json.dumps({"ok": True, "queued": len(behaviors)}))

    async def _control_default(self, request: web.Request) -> web.Response:
        try:
            data = await request.json()
            self.default = Behavior.model_validate(data.get("behavior", data))
        except (ValueError, ValidationError, AttributeError) as exc:
            return _json_response(400, _error_json(400, f"bad default: {exc}"))
        return _json_response(200, json.dumps({"ok": True}))

    async def _control_reset(self, request: web.Request) -> web.Response:
        self.reset()
        return _json_response(200, json.dumps({"ok": True}))

    async def _control_stats(self, request: web.Request) -> web.Response:
        return _json_response(200, json.dumps(self.stats.to_json()))

    # ------------------------------------------------------------------ lifecycle

    def _make_app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        for path in CHAT_PATHS:
            app.router.add_post(path, self._handle_chat)
        app.router.add_get("/v1/models", self._handle_models)
        app.router.add_post("/_control/script", self._control_script)
        app.router.add_post("/_control/default", self._control_default)
        app.router.add_post("/_control/reset", self._control_reset)
        app.router.add_get("/_control/stats", self._control_stats)
        app.router.add_route("*", "/{tail:.*}", self._handle_unknown)
        return app

    async def _astart(self) -> None:
        if self._runner is not None:
            raise RuntimeError("FakeOpenAIServer is already running")
        self._stopping = asyncio.Event()
        runner = web.AppRunner(
            self._make_app(), access_log=None, shutdown_timeout=_SHUTDOWN_GRACE_S
        )
        await runner.setup()
        site = web.TCPSite(runner, self._host, self._port)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        host, port = runner.addresses[0][:2]
        self._url = f"http://{host}:{port}"

    async def _astop(self) -> None:
        runner, self._runner = self._runner, None
        if runner is None:
            return
        if self._stopping is not None:
            self._stopping.set()  # wakes delayed handlers, which answer 503 at once
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(runner.cleanup(), timeout=_SHUTDOWN_GRACE_S + 1.0)
        self._url = None

    def start(self) -> Self:
        """Serve from a daemon thread with its own loop; returns once the port is bound."""
        if self._thread is not None or self._runner is not None:
            raise RuntimeError("FakeOpenAIServer is already running")
        loop = asyncio.new_event_loop()
        started = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._astart())
            except BaseException as exc:
                failure.append(exc)
                started.set()
                loop.close()
                return
            started.set()
            try:
                loop.run_forever()
            finally:
                _cancel_leftovers(loop)
                loop.close()

        thread = threading.Thread(target=run, name="FakeOpenAIServer", daemon=True)
        thread.start()
        if not started.wait(_START_TIMEOUT_S):
            raise RuntimeError("FakeOpenAIServer did not start in time")
        if failure:
            thread.join(1.0)
            raise RuntimeError("FakeOpenAIServer failed to start") from failure[0]
        self._loop, self._thread = loop, thread
        return self

    def stop(self, timeout: float = 2.0) -> None:
        """Stop serving; bounded by ``timeout`` even with slow requests in flight."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        deadline = time.monotonic() + timeout
        fut = asyncio.run_coroutine_threadsafe(self._astop(), loop)
        with contextlib.suppress(Exception):
            fut.result(timeout=max(0.0, deadline - time.monotonic() - 0.2))
        with contextlib.suppress(RuntimeError):  # loop already closed
            loop.call_soon_threadsafe(loop.stop)
        thread.join(max(0.05, deadline - time.monotonic()))
        self._loop = self._thread = None
        self._url = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    async def __aenter__(self) -> Self:
        """Serve on the caller's running loop (no thread); handy inside async tests."""
        await self._astart()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await asyncio.wait_for(self._astop(), timeout=2.0)

    async def serve_until_signal(self, *, exit_on_stdin_eof: bool = False) -> None:
        """Serve, print the URL as the first stdout line, stop on SIGTERM/SIGINT.

        ``exit_on_stdin_eof`` makes an orphaned server die with its parent: the parent
        holds our stdin pipe, and its death closes it.
        """
        await self._astart()
        print(self.url, flush=True)
        loop = asyncio.get_running_loop()
        done = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, done.set)
        if exit_on_stdin_eof:
            fd = sys.stdin.fileno()

            def on_stdin() -> None:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:
                    chunk = b""
                if not chunk:
                    loop.remove_reader(fd)
                    done.set()

            loop.add_reader(fd, on_stdin)
        try:
            await done.wait()
        finally:
            await self._astop()

    # ------------------------------------------------------------------ process mode

    @staticmethod
    def spawn_process(
        *,
        content: str | None = None,
        latency_s: float = 0.0,
        port: int = 0,
        python: str = sys.executable,
        startup_timeout: float = _START_TIMEOUT_S,
        extra_args: Sequence[str] = (),
    ) -> tuple[subprocess.Popen[bytes], str]:
        """Start ``python -m assay.testing`` and return ``(process, url)``.

        A separate process keeps the server's CPU off the client's GIL (benchmarks).
        The child exits when the process is terminated or when this process dies (its
        stdin pipe closes). Call ``proc.terminate(); proc.wait()`` when done, or use
        :meth:`spawned`.
        """
        args = [python, "-m", "assay.testing", "--port", str(port), "--exit-on-stdin-eof"]
        args += ["--latency-ms", repr(latency_s * 1000.0)]
        if content is not None:
            args += ["--content", content]
        args += list(extra_args)
        env = dict(os.environ)
        root = str(Path(__file__).resolve().parents[2])  # so `assay` imports uninstalled
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        proc = subprocess.Popen(
            args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=root
        )
        try:
            url = _read_first_line(proc, startup_timeout)
        except BaseException:
            _terminate(proc)
            raise
        return proc, url

    @staticmethod
    @contextlib.contextmanager
    def spawned(
        *, content: str | None = None, latency_s: float = 0.0, extra_args: Sequence[str] = ()
    ) -> Iterator[FakeServerClient]:
        """Context manager around :meth:`spawn_process` yielding a control client."""
        proc, url = FakeOpenAIServer.spawn_process(
            content=content, latency_s=latency_s, extra_args=extra_args
        )
        client = FakeServerClient(url, process=proc)
        try:
            yield client
        finally:
            client.close()
            _terminate(proc)


def _read_first_line(proc: subprocess.Popen[bytes], timeout: float) -> str:
    """The child's URL line, without risking a hang if it never prints."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    buf = b""
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        while b"\n" not in buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError(f"fake server did not print its URL within {timeout}s")
            if not sel.select(left):
                continue
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                raise RuntimeError(f"fake server exited early (code {proc.poll()})")
            buf += chunk
    return buf.split(b"\n", 1)[0].decode().strip()


def _terminate(proc: subprocess.Popen[bytes], timeout: float = 2.0) -> None:
    """SIGTERM, then SIGKILL if the child lingers; always reaps it."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


def _cancel_leftovers(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel tasks still pending when the thread's loop stops, to avoid warnings."""
    tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for t in tasks:
        t.cancel()
    if tasks:
        with contextlib.suppress(Exception):
            loop.run_until_complete(
                asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 1.0)
            )


class FakeServerClient:
    """Scripts a server in another process through its ``/_control`` API."""

    def __init__(
        self, url: str, *, process: subprocess.Popen[bytes] | None = None, timeout: float = 5.0
    ) -> None:
        import httpx  # local: only control clients need it

        self.url = url.rstrip("/")
        self.process = process
        self._http = httpx.Client(base_url=self.url, timeout=timeout)

    @property
    def base_url(self) -> str:
        """What to pass as ``api_base`` to OpenAI-style clients."""
        return self.url + "/v1"

    def script(self, match: str | None, behaviors: Sequence[Behavior]) -> None:
        """Same semantics as :meth:`FakeOpenAIServer.script`."""
        payload = {"match": match, "behaviors": [b.model_dump() for b in behaviors]}
        self._http.post("/_control/script", json=payload).raise_for_status()

    def set_default(self, behavior: Behavior) -> None:
        """Replace the server's default behavior."""
        payload = {"behavior": behavior.model_dump()}
        self._http.post("/_control/default", json=payload).raise_for_status()

    def reset(self) -> None:
        """Clear scripts and statistics."""
        self._http.post("/_control/reset").raise_for_status()

    def stats(self) -> ServerStats:
        """Snapshot of the remote server's statistics."""
        resp = self._http.get("/_control/stats")
        resp.raise_for_status()
        return ServerStats.from_json(resp.json())

    def close(self) -> None:
        """Close the HTTP client (not the server process)."""
        self._http.close()


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m assay.testing``: serve until killed, URL on the first stdout line."""
    parser = argparse.ArgumentParser(
        prog="python -m assay.testing",
        description="Fake OpenAI chat-completions server for offline dry runs and benchmarks.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="added to every reply")
    parser.add_argument("--content", default=DEFAULT_CONTENT, help="default reply content")
    parser.add_argument("--max-recorded", type=int, default=10_000)
    parser.add_argument(
        "--exit-on-stdin-eof", action="store_true", help="exit when stdin closes (parent died)"
    )
    ns = parser.parse_args(argv)
    server = FakeOpenAIServer(
        default=reply(ns.content),
        latency_s=ns.latency_ms / 1000.0,
        host=ns.host,
        port=ns.port,
        max_recorded=ns.max_recorded,
    )
    asyncio.run(server.serve_until_signal(exit_on_stdin_eof=ns.exit_on_stdin_eof))
    return 0
