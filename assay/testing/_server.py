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

import asyncio
import contextlib
import itertools
import json
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Sequence
from types import TracebackType
from typing import Any, Self

from aiohttp import web
from pydantic import ValidationError

from assay.redaction import redact_headers
from assay.testing._batches import FakeBatches
from assay.testing._behaviors import (
    DEFAULT_CONTENT,
    MAX_DELAY_S,
    Behavior,
    Responder,
    _error_json,
    _json_response,
    _message_text,
    render_response,
    reply,
)
from assay.testing._process import _START_TIMEOUT_S, spawn_process, spawned
from assay.testing._ratewindow import RateWindows
from assay.testing._stats import ServerStats

__all__ = ["FakeOpenAIServer"]

"""What the server answers when nothing is scripted: a well-formed judge verdict."""

CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
_SHUTDOWN_GRACE_S = 0.5  # how long aiohttp may wait for handlers once stop() is called


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
        rate_limits: RateWindows | None = None,
    ) -> None:
        if not 0 <= latency_s <= MAX_DELAY_S:
            raise ValueError(f"latency_s must be in [0, {MAX_DELAY_S}], got {latency_s}")
        self._lock = threading.Lock()
        self._default = self._check_default(default or reply(DEFAULT_CONTENT))
        self._responder = responder
        self.rate = rate_limits.start() if rate_limits else None  # rpm/tpm windows enforced
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
        self.batches = FakeBatches(self._choose)  # files and batches endpoints

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
        """A consistent snapshot; mutating it does not affect the server. Header values
        read ``<redacted>`` unless allow-listed (`assay.redaction.SAFE_HEADERS`): this is what
        ``GET /_control/stats`` serves; `headers_seen` keeps them for in-process checks."""
        with self._lock:
            return ServerStats(
                total=self._stats.total,
                by_path=dict(self._stats.by_path),
                by_status=dict(self._stats.by_status),
                requests=list(self._bodies),
                headers=[redact_headers(h) for h in self._headers],
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
        refused = self.rate.refuse(body) if self.rate is not None else None
        if refused is not None:
            return refused  # over a window: 429 with Retry-After and x-ratelimit-*
        try:
            behavior = self._choose(body)
        except Exception as exc:  # a buggy responder should fail the request, loudly
            return _json_response(500, _error_json(500, f"responder raised {exc!r}"))
        if not await self._sleep(self.latency_s + behavior.delay_s):
            return _json_response(503, _error_json(503, "Fake server shutting down."))
        response = render_response(behavior, body, self._ids)
        return self.rate.stamp(response) if self.rate is not None else response

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
        self.batches.add_routes(app)
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

    spawn_process = staticmethod(spawn_process)
    spawned = staticmethod(spawned)


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
