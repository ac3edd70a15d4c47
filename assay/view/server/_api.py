"""The JSON endpoints: the judgments table, a run's version (for live refresh), labels.

Errors are `{"error": "<one line>"}` with 400 (a bad parameter or label), 403 (no token,
read-only) or 404 (an unknown run).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from assay.view.server._params import BadParam, judgment_query
from assay.view.server._render import seg
from assay.view.server._state import viewer

READ_ONLY = "read-only: this viewer was started with --read-only, so labels cannot be written"
LABEL_FIELDS = ("dataset", "item_id", "label", "preference", "note")


def _bad(message: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def runs(request: Request) -> JSONResponse:
    """Every run (the runs page's data)."""
    listed = viewer(request).index.runs()
    return JSONResponse([r.model_dump(mode="json") for r in listed])


def judgments(request: Request) -> JSONResponse:
    """One page of the judgments table: `JudgmentPage` as JSON."""
    v = viewer(request)
    run_id = request.path_params["run_id"]
    v.run_dir(run_id)
    try:
        q = judgment_query(request.query_params.multi_items())
        table = v.index.query(run_id, q)
    except (BadParam, ValueError) as exc:
        return _bad(str(exc))
    return JSONResponse(table.model_dump(mode="json"))


def version(request: Request) -> JSONResponse:
    """The run's data version and status: the items page polls it while a run runs."""
    from assay.view.index import writer_active

    v = viewer(request)
    run_id = request.path_params["run_id"]
    run_dir = v.run_dir(run_id)
    version = v.index.version(run_id)
    # polled every 2 s: the lock test is one flock; the full summary only once it stopped
    status = "running" if writer_active(run_dir) else v.summary(run_id).status
    return JSONResponse({"version": version, "status": status})


async def _label_fields(request: Request) -> tuple[dict[str, Any], bool]:
    """The posted fields (JSON body, or a plain form) and whether it came from a form."""
    body = await request.body()
    if request.headers.get("content-type", "").startswith("application/json"):
        try:
            data = json.loads(body or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise BadParam("body: not valid JSON") from None
        if not isinstance(data, dict):
            raise BadParam("body: expected a JSON object")
        return data, False
    return dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)), True


def _checked(fields: dict[str, Any]) -> dict[str, str | None]:
    unknown = sorted(set(fields) - set(LABEL_FIELDS))
    if unknown:
        raise BadParam(f"unknown field {unknown[0]!r}")
    out: dict[str, str | None] = {}
    for name in LABEL_FIELDS:
        value = fields.get(name)
        if value is not None and not isinstance(value, str):
            raise BadParam(f"{name}: expected a string")
        out[name] = value or None
    if not out["dataset"] or not out["item_id"]:
        raise BadParam("dataset and item_id are required")
    return out


async def labels(request: Request) -> Response:
    """Append a person's label (or preference) for one item to the run's labels file."""
    from starlette.concurrency import run_in_threadpool

    from assay.adjudication import AdjudicationError, append_adjudication

    v = viewer(request)
    run_id = request.path_params["run_id"]
    if v.read_only:
        return _bad(READ_ONLY, 403)
    run_dir = v.run_dir(run_id)
    try:
        raw, from_form = await _label_fields(request)
        f = _checked(raw)
        entry = await run_in_threadpool(
            lambda: append_adjudication(
                run_dir,
                dataset=str(f["dataset"]),
                item_id=str(f["item_id"]),
                annotator=v.annotator,
                label=f["label"],
                preference=f["preference"],
                note=f["note"],
            )
        )
    except (BadParam, AdjudicationError) as exc:
        return _bad(str(exc))
    if from_form:
        where = f"/runs/{seg(run_id)}/items/{seg(f['dataset'])}/{seg(f['item_id'])}#adjudication"
        return RedirectResponse(where, status_code=303)
    return JSONResponse(entry.model_dump(mode="json"))
