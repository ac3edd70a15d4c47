"""The HTML pages: each handler looks its data up by id and hands it to a template.

Handlers are plain functions: Starlette runs them in a worker thread, so a slow query
or report never blocks the event loop.
"""

from __future__ import annotations

from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse

from assay.adjudication import GOLD_SOURCES
from assay.errors import AssayError
from assay.view.server._params import BadParam, judgment_query, query_params
from assay.view.server._render import page
from assay.view.server._reports import comparison, comparison_html, differ_pairs, run_report_html
from assay.view.server._state import Viewer, viewer

PAGE_SIZES = (25, 50, 100, 200)


def _common(v: Viewer, **context: Any) -> dict[str, Any]:
    return {"read_only": v.read_only, "annotator": v.annotator, **context}


def runs_page(request: Request) -> HTMLResponse:
    """Every run under the given paths; pick two or more to compare."""
    v = viewer(request)
    return page("runs.html.j2", **_common(v, runs=v.index.runs()))


def run_page(request: Request) -> HTMLResponse:
    """The run report's content (`assay report -f html`), with links into the run."""
    v = viewer(request)
    run = v.summary(request.path_params["run_id"])
    try:
        report, problem = run_report_html(v.run_dir(run.id)), None
    except AssayError as exc:
        report, problem = None, str(exc)
    return page("run.html.j2", **_common(v, run=run, report=report, problem=problem))


def items_page(request: Request) -> HTMLResponse:
    """The judgments table's first render (filters from the URL); JS takes over after."""
    v = viewer(request)
    run = v.summary(request.path_params["run_id"])
    try:
        q = judgment_query(request.query_params.multi_items())
        table = v.index.query(run.id, q)
    except (BadParam, ValueError) as exc:
        return page("message.html.j2", 400, title="bad request", message=str(exc))
    facets = v.index.facets(run.id)
    pages = max(1, -(-table.total // table.page_size))
    context = _common(
        v, run=run, q=q, table=table, facets=facets, pages=pages, page_sizes=PAGE_SIZES
    )
    return page("items.html.j2", params=query_params(q), **context)


def _judge_keys(detail: Any) -> list[str]:
    keys: list[str] = []
    for j in detail.judgments:
        if j.judge_id not in keys:
            keys.append(j.judge_id)
    return keys


def _label_choices(detail: Any) -> list[str]:
    """What a person may pick: the prompts' labels, else every label seen on the item."""
    if detail.labels:
        return list(detail.labels)
    seen = [detail.gold.get("label"), *(j.label for j in detail.judgments)]
    return sorted({str(x) for x in seen if x is not None})


def item_page(request: Request) -> HTMLResponse:
    """One item: variables, gold, raters, every judgment; `?a=J&b=J` puts two side by side."""
    from assay.view.detail import item_detail

    v = viewer(request)
    run = v.summary(request.path_params["run_id"])
    dataset, item_id = request.path_params["dataset"], request.path_params["item_id"]
    try:
        detail = item_detail(v.run_dir(run.id), dataset, item_id)
    except KeyError:
        raise HTTPException(
            404, f"no item {item_id!r} in dataset {dataset!r} of this run"
        ) from None
    judges = _judge_keys(detail)
    a, b = request.query_params.get("a"), request.query_params.get("b")
    if (a or b) and not (a in judges and b in judges):
        raise HTTPException(400, f"a and b must be judges of this item: {', '.join(judges)}")
    sides = [[j for j in detail.judgments if j.judge_id == k] for k in (a, b)] if a else None
    context = _common(v, run=run, item=detail, judges=judges, a=a, b=b, sides=sides)
    context["choices"] = _label_choices(detail)
    return page("item.html.j2", **context)


def factuality_page(request: Request) -> HTMLResponse:
    """The run's factuality answers, each linking to its chain."""
    from assay.view.detail import answers

    v = viewer(request)
    run = v.summary(request.path_params["run_id"])
    listed = answers(v.run_dir(run.id))
    return page("factuality.html.j2", **_common(v, run=run, answers=listed))


def answer_page(request: Request) -> HTMLResponse:
    """One answer -> sentences -> claims -> verdicts, evidence and policies."""
    from assay.view.detail import answer_detail

    v = viewer(request)
    run = v.summary(request.path_params["run_id"])
    answer_id = request.path_params["answer_id"]
    dataset = request.query_params.get("dataset") or None
    try:
        detail = answer_detail(v.run_dir(run.id), answer_id, dataset=dataset)
    except KeyError as exc:
        raise HTTPException(404, str(exc.args[0]) if exc.args else "no such answer") from None
    return page("answer.html.j2", **_common(v, run=run, answer=detail))


def compare_page(request: Request) -> HTMLResponse:
    """`assay compare` of the chosen runs, and links to the items two judges differ on."""
    v = viewer(request)
    ids = [i for i in request.query_params.getlist("run") if i]
    if not ids:
        raise HTTPException(400, "choose at least one run: /compare?run=ID&run=ID")
    gold = request.query_params.get("gold") or "dataset"
    if gold not in GOLD_SOURCES:
        raise HTTPException(400, f"gold={gold!r}: choose one of {', '.join(GOLD_SOURCES)}")
    dirs = {run_id: v.run_dir(run_id) for run_id in dict.fromkeys(ids)}
    runs = [v.summary(run_id) for run_id in dirs]
    try:
        report = comparison(list(dirs.values()), gold)
    except AssayError as exc:
        return page("message.html.j2", 400, title="nothing to compare", message=str(exc))
    by_dir = {str(d): run_id for run_id, d in dirs.items()}
    pairs = differ_pairs(report, by_dir)
    body = comparison_html(report)
    context = _common(v, runs=runs, body=body, pairs=pairs, gold=gold, golds=GOLD_SOURCES)
    return page("compare.html.j2", **context)
