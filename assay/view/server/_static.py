"""The viewer's CSS and JS: a fixed list of package files, never a path from the URL.

The report's stylesheet (`assay/report/templates/report.css`) is served as is, so the
run page looks like `assay report`'s page; `view.css` adds the viewer's own parts.
"""

from __future__ import annotations

from importlib import resources

from starlette.requests import Request
from starlette.responses import Response

from assay.view.server._render import page

FILES = {  # URL name -> (package, file, media type)
    "report.css": ("assay.report", "templates/report.css", "text/css"),
    "view.css": ("assay.view", "static/view.css", "text/css"),
    "view.js": ("assay.view", "static/view.js", "text/javascript"),
}


def static_file(request: Request) -> Response:
    """One of FILES, or 404."""
    entry = FILES.get(request.path_params["name"])
    if entry is None:
        return page("message.html.j2", 404, title="404", message="no such file")
    package, name, media = entry
    body = resources.files(package).joinpath(name).read_bytes()
    return Response(body, media_type=media, headers={"cache-control": "no-cache"})
