"""`serve()`: the viewer under uvicorn, on a port chosen before it starts.

Port 0 means "a free port": one is bound here first, so the URL printed (with the
session token) is the one the server answers on. Ctrl-C stops uvicorn's loop and
returns; the command then exits 0 without a traceback.
"""

from __future__ import annotations

import socket
import sys
import webbrowser
from collections.abc import Sequence
from pathlib import Path

from assay.view.server._app import create_app, default_annotator
from assay.view.server._security import LOOPBACK, new_token

LOCAL_NAMES = ("127.0.0.1", "localhost")


def _bound_socket(host: str, port: int) -> socket.socket:
    """A listening socket on (host, port); port 0 picks a free one."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def url_for(host: str, port: int, token: str) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/?token={token}"


def allowed_hosts(host: str) -> list[str] | None:
    """Loopback binds accept only loopback Host names (DNS rebinding guard); others any."""
    return [*LOOPBACK] if host in (*LOCAL_NAMES, "::1") else None


def serve(
    paths: Sequence[Path],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    open_browser: bool = False,
    read_only: bool = False,
    annotator: str | None = None,
) -> None:
    """Serve the runs under `paths` until Ctrl-C."""
    import uvicorn

    token = new_token()
    app = create_app(
        paths,
        token=token,
        read_only=read_only,
        annotator=annotator or default_annotator(),
        allowed_hosts=allowed_hosts(host),
    )
    n = len(app.state.viewer.index.runs())
    sock = _bound_socket(host, port)
    url = url_for(host, sock.getsockname()[1], token)
    mode = " (read-only)" if read_only else ""
    print(f"assay view: serving {n} runs at {url}{mode}", flush=True)
    print("press Ctrl-C to stop", file=sys.stderr, flush=True)
    if open_browser:
        webbrowser.open(url)
    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
