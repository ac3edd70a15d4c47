"""The viewer's web server: Starlette pages and JSON endpoints, run by uvicorn.

`create_app` builds the application (used by tests and by `serve`); `serve` runs it on
127.0.0.1 with a per-session token. See `_security` for what the token guards.
"""

from assay.view.server._app import create_app, default_annotator
from assay.view.server._serve import serve

__all__ = ["create_app", "default_annotator", "serve"]
