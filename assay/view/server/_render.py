"""The viewer's Jinja environment: its own templates, the report's filters, autoescaping.

Every `{{ value }}` is HTML-escaped (autoescape on for every template, whatever its file
name), so item text, ids and judge outputs are always text: a `<script>` in a raw response
is shown, never run. JSON goes into a page only through the `tojson` filter, which escapes
`<`, `>`, `&` and `'`. The report's number filters (`count`, `f3`, `money`, `when`, ...)
are reused so a number reads the same here as in `assay report`.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined
from starlette.responses import HTMLResponse

from assay._values import FILTERS
from assay.view.server._highlight import highlight


def _finalize(value: object) -> object:
    """`{{ none }}` prints nothing, not the word "None"."""
    return "" if value is None else value


def seg(value: object) -> str:
    """One URL path segment: every reserved character (`/`, `?`, `#`, `%`, `..`) encoded."""
    return quote(str(value), safe="")


def query(params: Mapping[str, Any] | list[tuple[str, Any]]) -> str:
    """A query string (lists repeat the key); None and empty values are left out."""
    pairs = params.items() if isinstance(params, Mapping) else params
    flat: list[tuple[str, str]] = []
    for key, value in pairs:
        values = value if isinstance(value, list | tuple) else [value]
        flat.extend((key, str(v)) for v in values if v is not None and v != "")
    return urlencode(flat)


def dict_with(params: Mapping[str, Any], **changes: Any) -> dict[str, Any]:
    """`params` with `changes` (as text): the link to the same table, one thing changed."""
    return {**params, **{k: str(v) for k, v in changes.items()}}


@cache
def environment() -> Environment:
    """Templates from `assay/view/templates`, autoescaped, undefined names an error."""
    env = Environment(
        loader=PackageLoader("assay.view", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        finalize=_finalize,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(FILTERS)
    env.filters.update(seg=seg, query=query, dict_with=dict_with, highlight=highlight)
    return env


def page(template: str, status_code: int = 200, **context: Any) -> HTMLResponse:
    """Render `template` with `context` as an HTML response."""
    html = environment().get_template(template).render(**context)
    return HTMLResponse(html, status_code=status_code)
