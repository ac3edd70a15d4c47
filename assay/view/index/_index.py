"""`ViewIndex`: the runs under the given paths and a judgments table per run, in DuckDB.

One DuckDB connection, used under one lock: the server calls from its worker threads,
and the tables of a run being written change between calls. The database is in memory
(a file database spends the cold start compressing and writing), under a memory limit
with a spill folder in a private temporary folder, so a run larger than the limit still
loads; `close()` removes the folder."""

from __future__ import annotations

import re
import shutil
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

import duckdb

from assay.view.index._models import Facets, JudgmentPage, JudgmentQuery, RunSummary
from assay.view.index._query import facets, search_pattern, select_page
from assay.view.index._runs import discover, find_run_dirs, run_id
from assay.view.index._table import RunTable, create_shared

__all__ = ["MEMORY_LIMIT", "ViewIndex"]

_RUN_ID = re.compile(r"[0-9a-f]{12}")
MEMORY_LIMIT = "256MB"  # DuckDB's own buffers; beyond it, it spills to the temp folder


class ViewIndex:
    """Thread-safe; a run's records are loaded on its first query, then followed."""

    def __init__(self, paths: Sequence[Path], *, memory_limit: str = MEMORY_LIMIT) -> None:
        self.paths = [Path(p) for p in paths]
        self._lock = threading.RLock()
        self._dir = Path(tempfile.mkdtemp(prefix="assay-view-"))
        self._con: duckdb.DuckDBPyConnection | None = duckdb.connect(":memory:")
        self._con.execute("SET memory_limit = ?", [memory_limit])
        self._con.execute("SET temp_directory = ?", [str(self._dir / "spill")])
        self._con.execute("SET preserve_insertion_order = true")
        self._con.execute("SET enable_progress_bar = false")  # the server's log stays clean
        create_shared(self._con)
        self._dirs: dict[str, Path] = {}
        self._tables: dict[str, RunTable] = {}

    def runs(self) -> list[RunSummary]:
        """Every run under the paths, scanned again (runs started since appear)."""
        found = discover(self.paths)
        with self._lock:
            for summary in found:
                self._dirs.setdefault(summary.id, Path(summary.dir))
        return found

    def run_dir(self, run_id_: str) -> Path:
        """The directory of a run listed by `runs()` (KeyError for an unknown id)."""
        with self._lock:
            if run_id_ not in self._dirs:
                for _root, run_dir in find_run_dirs(self.paths):
                    self._dirs.setdefault(run_id(run_dir), run_dir)
            return self._dirs[run_id_]

    def _table(self, rid: str) -> RunTable:
        """The run's tables, refreshed. The id becomes part of table names: only the
        12 hex digits `run_id` makes, of a run found under the paths, get this far."""
        table = self._tables.get(rid)
        if table is None:
            if not _RUN_ID.fullmatch(rid):
                raise KeyError(rid)
            table = RunTable(self._connection(), rid, self.run_dir(rid), self._dir)
            self._tables[rid] = table
        table.refresh()
        return table

    def _connection(self) -> duckdb.DuckDBPyConnection:
        if self._con is None:
            raise RuntimeError("the view index is closed")
        return self._con

    def query(self, run_id_: str, q: JudgmentQuery) -> JudgmentPage:
        """One page of the run's judgments (new records read first)."""
        with self._lock:
            table = self._table(run_id_)
            if q.disagreeing or q.inconsistent:
                table.ensure_flags()
            if q.differ:
                table.ensure_differ(*q.differ)
            if q.search:
                table.ensure_search(search_pattern(q.search))
            rows, total = select_page(self._connection(), run_id_, q)
            return JudgmentPage(
                rows=rows,
                total=total,
                page=q.page,
                page_size=q.page_size,
                sort=q.sort,
                desc=q.desc,
                version=table.version,
            )

    def version(self, run_id_: str) -> int:
        """The run's version after reading what changed (a stat per file when nothing)."""
        with self._lock:
            return self._table(run_id_).version

    def facets(self, run_id_: str) -> Facets:
        with self._lock:
            self._table(run_id_)
            return facets(self._connection(), run_id_)

    def close(self) -> None:
        """Close the database and remove its folder; the index is unusable after."""
        with self._lock:
            con, self._con = self._con, None
            if con is not None:
                con.close()
            self._tables.clear()
            shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> ViewIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
