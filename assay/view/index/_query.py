"""A `JudgmentQuery` as SQL over `m_<id>` (assay.view.index._outcome): filters, flags,
sort and page.

Every value the user gives is a bound parameter; only whitelisted column names (the
sort, from `SORTS`) and the run id (12 hex digits) are put into the SQL text."""

from __future__ import annotations

from typing import Any

import duckdb

from assay.view.index._models import SORTS, Facets, JudgmentQuery, JudgmentRow

__all__ = ["facets", "search_pattern", "select_page"]

_ROW_FIELDS = tuple(JudgmentRow.model_fields)
# Judgments are compared on the same variant: `slot` (see assay.view.index._outcome).
# Then the row key `k`: rows tie nowhere, so pages neither repeat nor skip a row.
_TIEBREAK = ("dataset", "item_id", "variant", "judge_id", "k")


def _in(column: str, values: list[str], params: list[Any]) -> str:
    params.extend(values)
    return f"{column} IN ({', '.join('?' for _ in values)})"


def search_pattern(text: str) -> str:
    """`text` as a case-insensitive RE2 pattern matching it literally: every character
    but letters, digits and spaces written as its code point (RE2's regexp search is
    faster than ILIKE over long raw outputs, and this leaves nothing to interpret)."""
    literal = "".join(c if c.isalnum() or c == " " else f"\\x{{{ord(c):x}}}" for c in text)
    return f"(?i){literal}"


def _filters(q: JudgmentQuery, rid: str, params: list[Any]) -> list[str]:
    where: list[str] = []
    for column, values in (
        ("judge_id", q.judge),
        ("status", q.status),
        ("label", q.label),
        ("dataset", q.dataset),
        ("unit", q.unit),
    ):
        if values:
            where.append(_in(column, values, params))
    if q.outcome is not None:
        where.append("outcome = ?")
        params.append(q.outcome)
    if q.cache_hit is not None:
        where.append("cache_hit = ?")
        params.append(q.cache_hit)
    if q.retried is not None:
        where.append("(attempts > 1) = ?")
        params.append(q.retried)
    if q.search:  # hits_<id>: built by RunTable.ensure_search for this text
        where.append(f"k IN (SELECT k FROM hits_{rid})")
    return where


def _flags(q: JudgmentQuery, rid: str, params: list[Any]) -> list[str]:
    """Row conditions of the derived flags: disagreeing, inconsistent, differ (their
    tables are built by `RunTable.ensure_flags` / `ensure_differ` before the query)."""
    where: list[str] = []
    if q.disagreeing:
        where.append(f"slot IN (SELECT slot FROM dis_{rid})")
    if q.inconsistent:
        where.append(f"pairwise AND judged IN (SELECT judged FROM inc_{rid})")
    if q.differ:
        where.append(_in("judge_id", q.differ, params))
        where.append(f"slot IN (SELECT slot FROM dif_{rid})")
    return where


def _order(q: JudgmentQuery) -> str:
    if q.sort not in SORTS:  # a model built without validation still cannot inject
        raise ValueError(f"unknown sort {q.sort!r}; one of: {', '.join(SORTS)}")
    way = "DESC NULLS LAST" if q.desc else "ASC NULLS LAST"
    rest = [c for c in _TIEBREAK if c != q.sort]
    return ", ".join([f"{q.sort} {way}", *(f"{c} ASC NULLS FIRST" for c in rest)])


def select_page(
    con: duckdb.DuckDBPyConnection, rid: str, q: JudgmentQuery
) -> tuple[list[JudgmentRow], int]:
    """The page's rows and the total matching (two queries: a window count would make
    DuckDB carry every matching row's columns through the sort)."""
    params: list[Any] = []
    where = [*_filters(q, rid, params), *_flags(q, rid, params)]
    cond = (" WHERE " + " AND ".join(where)) if where else ""
    found = con.execute(f"SELECT count(*) FROM m_{rid} v{cond}", params).fetchone()
    total = int(found[0]) if found else 0
    sql = f"SELECT {', '.join(_ROW_FIELDS)} FROM m_{rid} v{cond} ORDER BY {_order(q)} "
    rows = con.execute(sql + "LIMIT ? OFFSET ?", [*params, q.page_size, (q.page - 1) * q.page_size])
    out = [JudgmentRow(**dict(zip(_ROW_FIELDS, r, strict=True))) for r in rows.fetchall()]
    return out, total


def facets(con: duckdb.DuckDBPyConnection, rid: str) -> Facets:
    """The distinct judges, statuses, labels, datasets and units of the run."""
    out: dict[str, list[str]] = {}
    for name, column in (
        ("judges", "judge_id"),
        ("statuses", "status"),
        ("labels", "label"),
        ("datasets", "dataset"),
        ("units", "unit"),
    ):
        found = con.execute(
            f"SELECT DISTINCT {column} FROM j_{rid} WHERE {column} IS NOT NULL ORDER BY 1"
        ).fetchall()
        out[name] = [str(v) for (v,) in found]
    return Facets(**out)
