"""What `assay view` does between parsing its flags and serving.

Starlette and uvicorn are imported only here, when the command runs, so `assay --help`
and every other command stay fast and work without the `view` extra.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from assay.errors import AssayError

EXTRA = "pip install 'assay[view]'"
LOCAL_HOSTS = ("127.0.0.1", "localhost")


def _check_extra() -> None:
    """One line naming the extra when starlette, uvicorn or duckdb is missing."""
    import importlib.util

    missing = [m for m in ("starlette", "uvicorn", "duckdb") if importlib.util.find_spec(m) is None]
    if missing:
        raise AssayError(f"`assay view` needs {', '.join(missing)}: {EXTRA}")


def _check_paths(paths: Sequence[Path]) -> None:
    for path in paths:
        if not path.exists():
            raise AssayError(
                "no such file or directory; give run directories or a folder of them", file=path
            )
        if not path.is_dir():
            raise AssayError("not a directory; give run directories or a folder of them", file=path)


def view_command(
    paths: Sequence[Path],
    *,
    host: str,
    port: int,
    open_browser: bool,
    read_only: bool,
    annotator: str | None,
) -> None:
    """Check the paths and the extra, warn about a non-local host, then serve until Ctrl-C."""
    _check_paths(paths)
    _check_extra()
    if host not in LOCAL_HOSTS:
        print(
            f"warning: --host {host} makes the viewer reachable from other machines; "
            "anyone with the printed URL (it holds the token) can read these runs",
            file=sys.stderr,
        )
    from assay.view.server import serve

    try:
        serve(
            paths,
            host=host,
            port=port,
            open_browser=open_browser,
            read_only=read_only,
            annotator=annotator,
        )
    except OSError as exc:
        raise AssayError(str(exc)) from None


__all__ = ["view_command"]
