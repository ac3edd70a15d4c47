"""A `JudgmentQuery` as SQL over the view `v_<id>`: filters, flags, sort and page.

Every value the user gives is a bound parameter; only whitelisted column names (the
sort, from `SORTS`) and the run id (12 hex digits) are put into the SQL text."""

from __future__ import annotations

from typing import Any

import duckdb

from assay.view.index._models import SORTS, Facets, JudgmentQuery, JudgmentRow

__all__ = ["facets", "select_page"]

_ROW_FIELDS = tuple(JudgmentRow.model_fields)
# Judgments are compared on the same variant (pair member, pairwise order): a pair's two
# members differ by design, and one judge's two orders are consistency, not agreement.
_SLOT = ("dataset", "item_id", "variant")
_SLOT_ON = " AND ".join(f"v.{c} IS NOT DISTINCT FROM s.{c}" for c in _SLOT)
_TIEBREAK = ("dataset", "item_id", "variant", "judge_id")


def _in(column: str, values: list[str], params: list[Any]) -> str:
    params.extend(values)
    return f"{column} IN ({', '.join('?' for _ in values)})"


def _like(text: str) -> str:
    """`text` as a case-insensitive substring pattern: its % _ and \\ are literal."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _filters(q: JudgmentQuery, params: list[Any]) -> list[str]:
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
    if q.search:
        cols = ("item_id", "label", "raw_output", "error")
        where.append("(" + " OR ".join(f"{c} ILIKE ? ESCAPE '\\'" for c in cols) + ")")
        params.extend([_like(q.search)] * len(cols))
    return where


def _flags(q: JudgmentQuery, rid: str, params: list[Any]) -> list[str]:
    """Row conditions of the derived flags: disagreeing, inconsistent, differ."""
    where: list[str] = []
    slots = ", ".join(_SLOT)
    if q.disagreeing:
        where.append(
            f"EXISTS (SELECT 1 FROM (SELECT {slots} FROM v_{rid} WHERE verdict IS NOT NULL "
            f"GROUP BY {slots} HAVING count(DISTINCT verdict) > 1) s WHERE {_SLOT_ON})"
        )
    if q.inconsistent:
        where.append(
            f"EXISTS (SELECT 1 FROM v_{rid} o WHERE o.pairwise AND o.verdict IS NOT NULL "
            "AND v.pairwise AND v.verdict IS NOT NULL AND o.dataset = v.dataset "
            "AND o.item_id = v.item_id AND o.judge_id = v.judge_id "
            "AND o.variant IS DISTINCT FROM v.variant AND o.verdict <> v.verdict)"
        )
    if q.differ:
        where.append(_in("judge_id", q.differ, params))
        params.extend(q.differ)
        where.append(
            f"EXISTS (SELECT 1 FROM (SELECT {slots} FROM v_{rid} WHERE verdict IS NOT NULL "
            f"AND judge_id IN (?, ?) GROUP BY {slots} "
            "HAVING count(DISTINCT judge_id) = 2 AND count(DISTINCT verdict) > 1) s "
            f"WHERE {_SLOT_ON})"
        )
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
    """The page's rows and the total matching, in one pass over the view."""
    params: list[Any] = []
    where = [*_filters(q, params), *_flags(q, rid, params)]
    sql = f"SELECT {', '.join(_ROW_FIELDS)}, count(*) OVER () AS total FROM v_{rid} v"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += f" ORDER BY {_order(q)} LIMIT ? OFFSET ?"
    params += [q.page_size, (q.page - 1) * q.page_size]
    cur = con.execute(sql, params)
    rows = cur.fetchall()
    total = int(rows[0][-1]) if rows else _count(con, rid, where, params[:-2])
    return [JudgmentRow(**dict(zip(_ROW_FIELDS, r[:-1], strict=True))) for r in rows], total


def _count(con: duckdb.DuckDBPyConnection, rid: str, where: list[str], params: list[Any]) -> int:
    """The total when the page is past the end (the window gave no row to read it from)."""
    sql = f"SELECT count(*) FROM v_{rid} v" + (" WHERE " + " AND ".join(where) if where else "")
    found = con.execute(sql, params).fetchone()
    return int(found[0]) if found else 0


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
