"""URL query parameters -> `JudgmentQuery`, with one-line errors for anything wrong.

The items page and `/api/runs/{id}/judgments` read the same parameters, so a table's
URL is shareable and the JSON endpoint answers exactly what the page shows. Every
parameter is checked (by the query model): an unknown name, a non-integer page or a
malformed boolean is a 400 naming the parameter, never a silent default.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from assay.view.index import JudgmentQuery

IGNORED = ("token", "a", "b")  # the session token; the item page's two compared judges
OPTIONAL = ("cache_hit", "retried", "outcome", "search")  # "" = any (a form's blank choice)


class BadParam(ValueError):
    """A query parameter the server cannot use; its text is the 400's one line."""


def _lists() -> set[str]:
    return {n for n, f in JudgmentQuery.model_fields.items() if f.annotation == list[str]}


def _one_line(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"]) or "query"
    message = str(err["msg"]).removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        message = "unknown parameter"
    return f"{where}: {message}"


def judgment_query(items: Sequence[tuple[str, str]]) -> JudgmentQuery:
    """Parse `request.query_params.multi_items()`; BadParam on the first problem."""
    lists = _lists()
    fields: dict[str, Any] = {}
    for name, value in items:
        if name in IGNORED:
            continue
        if name in lists:
            fields.setdefault(name, [])
            if value:
                fields[name].append(value)
        elif name in fields:
            raise BadParam(f"{name}: given more than once")
        elif not (name in OPTIONAL and value == ""):
            fields[name] = value
    try:
        return JudgmentQuery.model_validate(fields)
    except ValidationError as exc:
        raise BadParam(_one_line(exc)) from None


def query_params(q: JudgmentQuery, **changes: Any) -> dict[str, Any]:
    """The URL parameters of `q` (with `changes`) that differ from the defaults."""
    default = JudgmentQuery()
    values = {**q.model_dump(), **changes}
    out: dict[str, Any] = {}
    for name, value in values.items():
        if value != getattr(default, name):
            out[name] = [str(v) for v in value] if isinstance(value, list) else _text(value)
    return out


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)
