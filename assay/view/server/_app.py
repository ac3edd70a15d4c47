"""The Starlette application of `assay view`: routes, state, errors, the session guard.

Runs are addressed by the index's ids, items by dataset and item id looked up in the
run's records, answers by answer id: no URL carries a file path, so nothing outside the
given run directories can be read. Static files are a fixed list served from the
package, not a folder.
"""

from __future__ import annotations

import getpass
import os
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from assay.errors import AssayError
from assay.view.index import ViewIndex
from assay.view.server import _api, _pages
from assay.view.server._render import page
from assay.view.server._security import Guard
from assay.view.server._state import Viewer
from assay.view.server._static import static_file


def default_annotator() -> str:
    """$USER (or the login name), else "anonymous"."""
    name = os.environ.get("USER") or os.environ.get("USERNAME")
    if not name:
        try:
            name = getpass.getuser()
        except (KeyError, OSError):
            name = None
    return name or "anonymous"


ROUTES = [
    Route("/", _pages.runs_page),
    Route("/runs/{run_id}", _pages.run_page),
    Route("/runs/{run_id}/items", _pages.items_page),
    Route("/runs/{run_id}/items/{dataset}/{item_id:path}", _pages.item_page),
    Route("/runs/{run_id}/factuality", _pages.factuality_page),
    Route("/runs/{run_id}/answers/{answer_id:path}", _pages.answer_page),
    Route("/compare", _pages.compare_page),
    Route("/api/runs", _api.runs),
    Route("/api/runs/{run_id}/judgments", _api.judgments),
    Route("/api/runs/{run_id}/version", _api.version),
    Route("/api/runs/{run_id}/labels", _api.labels, methods=["POST"]),
    Route("/static/{name}", static_file),
]


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return _error(request, exc.status_code, str(exc.detail))


async def _assay_error(request: Request, exc: Exception) -> Response:
    """A damaged record file or the like: its one line, not a traceback."""
    return _error(request, 500, str(exc))


def _error(request: Request, status: int, message: str) -> Response:
    if request.url.path.startswith("/api/"):
        return JSONResponse({"error": message}, status_code=status)
    return page("message.html.j2", status, title=f"{status}", message=message)


def _closing(index: ViewIndex) -> Callable[[Starlette], AbstractAsyncContextManager[None]]:
    """The app's lifespan: the index (its DuckDB connection) is closed on shutdown."""

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            index.close()

    return lifespan


def create_app(
    paths: Sequence[Path],
    *,
    token: str | None,
    read_only: bool = False,
    annotator: str | None = None,
    allowed_hosts: Sequence[str] | None = None,
) -> Starlette:
    """The viewer of every run under `paths`.

    `token`: the session token every request must carry (None: no token, for embedding
    behind another guard). `allowed_hosts`: Host header names accepted (None: any)."""
    index = ViewIndex([Path(p) for p in paths])
    guard = Guard(token, allowed_hosts)
    app = Starlette(
        routes=ROUTES,
        middleware=[Middleware(BaseHTTPMiddleware, dispatch=guard)],
        exception_handlers={HTTPException: _http_error, AssayError: _assay_error},
        lifespan=_closing(index),
    )
    app.state.viewer = Viewer(index, read_only, annotator or default_annotator(), token)
    return app
