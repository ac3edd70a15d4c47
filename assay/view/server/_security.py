"""The session token, the security headers and the Host check of the viewer.

As in Jupyter, `serve()` draws a random token per session and prints it in the URL. The
first request carrying `?token=` sets an HttpOnly, SameSite=Strict cookie and is
redirected to the same URL without the token (so it stays out of history and Referer).
Reads need the token too: the pages show model outputs and item text that may be
private, and another local user or a web page in the browser must not read them. A
request without it gets a small "token required" page (403). Writes (POST) need the
token as the cookie or the `X-Assay-Token` header, and a same-origin `Origin` when the
browser sends one. Static CSS/JS is public: it holds nothing of the runs.

The Host check refuses requests whose Host is not one the server answers to: a DNS
rebinding page cannot then talk to the server under its own domain name.
"""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Awaitable, Callable, Sequence
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from assay.view.server._render import page, query

COOKIE = "assay_view_token"
HEADER = "x-assay-token"
PUBLIC_PREFIXES = ("/static/",)
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}
LOOPBACK = ("127.0.0.1", "localhost", "::1")

Next = Callable[[Request], Awaitable[Response]]


def new_token() -> str:
    """A fresh session token (URL-safe, 256 bits)."""
    return secrets.token_urlsafe(32)


def _matches(given: str | None, token: str) -> bool:
    return given is not None and secrets.compare_digest(given.encode(), token.encode())


def _host_name(host: str) -> str:
    """`127.0.0.1:8000` -> `127.0.0.1`, `[::1]:80` -> `::1`."""
    return (urlsplit(f"//{host}").hostname or "").lower()


def cookie_name(request: Request) -> str:
    """One cookie per port: browsers share cookies across ports of a host, and two
    viewers on 127.0.0.1 must not log each other out."""
    port = request.url.port
    return COOKIE if port is None else f"{COOKIE}_{port}"


def _without_token(request: Request) -> str:
    """The same URL without `token`, always a path on this server (`//host` is not)."""
    rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
    text = query(rest)
    return "/" + request.url.path.lstrip("/") + (f"?{text}" if text else "")


def _refused(request: Request, message: str, status: int = 403) -> Response:
    """JSON for the API, a small page for everything else."""
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": message}, status_code=status)
    title = {403: "token required", 500: "internal error"}.get(status, str(status))
    return page("message.html.j2", status, title=title, message=message)


class Guard:
    """The checks every request passes, in order: Host, token (cookie/header/query), Origin."""

    def __init__(self, token: str | None, allowed_hosts: Sequence[str] | None) -> None:
        self.token = token
        self.hosts = {h.lower() for h in allowed_hosts} if allowed_hosts else None

    def authorised(self, request: Request) -> bool:
        """The request carries the session token as cookie or header (always, without one)."""
        if self.token is None:
            return True
        given = request.headers.get(HEADER) or request.cookies.get(cookie_name(request))
        return _matches(given, self.token)

    def _cross_origin(self, request: Request) -> bool:
        origin = request.headers.get("origin")
        if origin is None or origin == "null":
            return origin == "null"
        return urlsplit(origin).netloc.lower() != request.headers.get("host", "").lower()

    async def __call__(self, request: Request, call_next: Next) -> Response:
        try:
            response = await self._check(request, call_next)
        except Exception as exc:  # a bug: one line on the console and the page, no traceback
            if os.environ.get("ASSAY_DEBUG"):
                raise
            text = " ".join(f"{type(exc).__name__}: {exc}".split())
            line = f"internal error: {text} (rerun with ASSAY_DEBUG=1)"
            print(f"assay view: {request.url.path}: {line}", file=sys.stderr)
            response = _refused(request, line, 500)
        for key, value in HEADERS.items():
            response.headers.setdefault(key, value)
        return response

    async def _check(self, request: Request, call_next: Next) -> Response:
        host = _host_name(request.headers.get("host", ""))
        if self.hosts is not None and host not in self.hosts:
            return _refused(request, "unknown Host header (DNS rebinding guard)", 400)
        if request.url.path.startswith(PUBLIC_PREFIXES):
            return await call_next(request)
        in_url = self.token is not None and _matches(request.query_params.get("token"), self.token)
        if in_url and request.method == "GET":
            return self._login(request)
        if not (in_url or self.authorised(request)):
            return _refused(
                request, "token required: open the URL `assay view` printed (it ends ?token=…)"
            )
        if request.method not in ("GET", "HEAD") and self._cross_origin(request):
            return _refused(request, "cross-origin write refused")
        return await call_next(request)

    def _login(self, request: Request) -> Response:
        """Set the cookie and drop the token from the URL."""
        response = RedirectResponse(_without_token(request), status_code=303)
        assert self.token is not None
        name = cookie_name(request)
        response.set_cookie(name, self.token, httponly=True, samesite="strict", path="/")
        return response
