"""One run's judgments in DuckDB: the table, how new lines enter it, and its gold.

Tables per run (`<id>` is the run id, 12 hex digits, so safe in a name):
`j_<id>` the judgments of all record files, one row per key (latest line wins);
`items_<id>` items.jsonl (gold); `adj_<id>` the adjudicated labels; `v_<id>` a view
adding each row's gold, gold source, outcome and verdict (assay.view.index._outcome).

Lines go straight from `read_json` into the table, in file order (DuckDB keeps
insertion order), each read tagged with a batch number; then the keys seen twice, if
any, keep only their row of the latest batch and, within it, the last one. One pass
over the bytes: the cold start of a large run is its JSON parsing, little more.

Labels are compared as the metrics compare them, through `labelmap`: the few distinct
labels are normalised in Python once each (`comparable_label`)."""

from __future__ import annotations

from pathlib import Path

import duckdb

from assay.adjudication import LABELS_FILE, read_adjudications
from assay.core.labels import comparable_label
from assay.core.rundir import (
    ITEM_JUDGMENTS_FILE,
    ITEMS_FILE,
    JUDGMENTS_FILE,
    VERIFICATIONS_FILE,
    iter_jsonl,
)
from assay.errors import RunError
from assay.view.index._ingest import Chunk, FileCursor, lines_before
from assay.view.index._outcome import differ_sql, flags_sql, materialize_sql, view_sql
from assay.view.index._runs import writer_active
from assay.view.index._schema import COLUMNS, MODELS, SELECTS

__all__ = ["RECORD_FILES", "RunTable", "create_shared"]

RECORD_FILES = (JUDGMENTS_FILE, ITEM_JUDGMENTS_FILE, VERIFICATIONS_FILE)
_UNIT = {JUDGMENTS_FILE: "pair", ITEM_JUDGMENTS_FILE: "item", VERIFICATIONS_FILE: "claim"}
_SEP = "chr(31)"  # the unit separator: in no id a dataset gives
# A record file's key (docs/reference/file-formats.md); a claim's by its answer and claim
# ids apart, as `answer_id:claim_id` alone could be two claims when ids hold colons.
_KEY = f"""concat_ws({_SEP}, unit, dataset, item_id, coalesce(variant, ''), judge_id,
    coalesce(answer_id, ''), coalesce(claim_id, ''))"""
_ITEM_KEY = f"concat_ws({_SEP}, dataset, item_id)"
_NOT_NULL = "dataset IS NOT NULL AND item_id IS NOT NULL"
_TABLE = """k VARCHAR, batch BIGINT, unit VARCHAR, dataset VARCHAR, item_id VARCHAR,
    variant VARCHAR, preference VARCHAR, claim_gold VARCHAR, answer_id VARCHAR,
    claim_id VARCHAR, judge_id VARCHAR, model VARCHAR, prompt_id VARCHAR,
    prompt_version BIGINT, status VARCHAR, label VARCHAR, score DOUBLE, error VARCHAR,
    raw_output VARCHAR, attempts BIGINT, latency_s DOUBLE, cache_hit BOOLEAN,
    tokens BIGINT, cost_usd DOUBLE, recorded_at VARCHAR"""
_ITEMS = """k VARCHAR, batch BIGINT, dataset VARCHAR, item_id VARCHAR, pairwise BOOLEAN,
    gold_label VARCHAR, gold_preference VARCHAR"""
_ADJ = "dataset VARCHAR, item_id VARCHAR, label VARCHAR, preference VARCHAR"


def _corrupt(exc: duckdb.Error, name: str, source: Path, chunk: Chunk) -> RunError:
    """The error the run readers give for the first bad line of the chunk (its record
    model, through `iter_jsonl`: file, line and field), on the record file's own line
    numbers; DuckDB's first line when the model accepts every line."""
    try:
        for _ in iter_jsonl(chunk.path, MODELS[name]):
            pass
    except RunError as err:
        line = None if err.line is None else err.line + lines_before(source, chunk.start)
        return RunError(err.message, file=source, line=line, field=err.field)
    return RunError(f"cannot read its records: {str(exc).splitlines()[0]}", file=source)


def create_shared(con: duckdb.DuckDBPyConnection) -> None:
    """Tables every run shares: the label normalisation map."""
    con.execute("CREATE TABLE IF NOT EXISTS labelmap (raw VARCHAR PRIMARY KEY, norm VARCHAR)")


def _columns_arg(columns: dict[str, str]) -> str:
    """The `columns` struct of read_json; names and types come from the record models."""
    return "{" + ", ".join(f"'{name}': '{kind}'" for name, kind in columns.items()) + "}"


def _read(name: str) -> str:
    """read_json of a record file (its path the one parameter), every column typed."""
    cols = _columns_arg(COLUMNS[name])
    return f"read_json(?, format='newline_delimited', columns={cols})"


class RunTable:
    """The DuckDB tables of one run and the cursors of its files. Not thread-safe:
    the index calls it under its lock."""

    def __init__(self, con: duckdb.DuckDBPyConnection, rid: str, run_dir: Path, scratch: Path):
        self.con, self.rid, self.run_dir, self.scratch = con, rid, run_dir, scratch
        self.version = 0
        self.batch = 0
        self.cursors = {name: FileCursor(run_dir / name) for name in (*RECORD_FILES, ITEMS_FILE)}
        self._labels_seen: tuple[int, int] | None = None
        self._flags_version: int | None = None
        self._searched: tuple[int, str] | None = None
        self._differed: tuple[int, str, str] | None = None
        con.execute(f"CREATE OR REPLACE TABLE j_{rid} ({_TABLE})")
        con.execute(f"CREATE OR REPLACE TABLE items_{rid} ({_ITEMS})")
        con.execute(f"CREATE OR REPLACE TABLE adj_{rid} ({_ADJ})")
        con.execute(view_sql(rid))
        con.execute(materialize_sql(rid))

    def refresh(self) -> int:
        """Read what changed (stat only when nothing did); the version after."""
        stale = [name for name, cursor in self.cursors.items() if cursor.changed()]
        quiet = bool(stale) and not writer_active(self.run_dir)
        changed = False
        for name in stale:
            changed = self._follow(name, direct=quiet) or changed
        changed = self._refresh_labels() or changed
        if changed:
            self.con.execute(materialize_sql(self.rid))
            self.version += 1
        return self.version

    def _follow(self, name: str, *, direct: bool) -> bool:
        """Ingest the file's new lines; whether there were any (or it was reset). A
        direct read that fails (a writer started and tore a line meanwhile) is done
        again from a copy of the complete lines."""
        cursor = self.cursors[name]
        chunk = cursor.take(self.scratch / f"{self.rid}-{name}", direct=direct)
        if chunk is None:
            return False
        try:
            self._ingest(name, chunk)
        except duckdb.Error as exc:
            cursor.forget()
            if not chunk.direct:
                raise _corrupt(exc, name, cursor.source, chunk) from None
            return self._follow(name, direct=False)
        finally:
            if not chunk.direct:
                chunk.path.unlink(missing_ok=True)
        return True

    def _ingest(self, name: str, chunk: Chunk) -> None:
        if name == ITEMS_FILE:
            table, key, select, wipe = f"items_{self.rid}", _ITEM_KEY, "*", "true"
        else:
            table, key, select = f"j_{self.rid}", _KEY, SELECTS[name]
            wipe = f"unit = '{_UNIT[name]}'"
        if chunk.reset or chunk.direct:  # a direct read is of the whole file
            self.con.execute(f"DELETE FROM {table} WHERE {wipe}")
        if not chunk.n_bytes:
            return
        self.batch += 1
        self.con.execute(
            f"INSERT INTO {table} BY NAME SELECT {key} AS k, {self.batch} AS batch, * "
            f"FROM (SELECT {select} FROM {_read(name)}) WHERE {_NOT_NULL}",
            [str(chunk.path)],
        )
        self._latest_wins(table)
        labels = "gold_label" if name == ITEMS_FILE else "label, claim_gold"
        self._map_labels(f"SELECT DISTINCT unnest([{labels}]) FROM {table} WHERE batch = ?")

    def _latest_wins(self, table: str) -> None:
        """Keys the last batch brought twice (or again): keep the latest row only."""
        dups = f"SELECT k FROM {table} WHERE k IN (SELECT k FROM {table} WHERE batch = ?) "
        dups += "GROUP BY k HAVING count(*) > 1"
        if not self.con.execute(dups + " LIMIT 1", [self.batch]).fetchall():
            return
        self.con.execute(
            f"DELETE FROM {table} WHERE rowid IN (SELECT rid FROM (SELECT rowid AS rid, "
            "row_number() OVER (PARTITION BY k ORDER BY batch DESC, rowid DESC) AS n "
            f"FROM {table} WHERE k IN ({dups})) WHERE n > 1)",
            [self.batch],
        )

    def _map_labels(self, distinct_sql: str) -> None:
        """Add the normal form of each label not seen before to `labelmap`."""
        new = self.con.execute(
            f"SELECT l FROM ({distinct_sql}) AS t(l) WHERE l IS NOT NULL "
            "AND l NOT IN (SELECT raw FROM labelmap)",
            [self.batch] if "?" in distinct_sql else [],
        ).fetchall()
        if new:
            rows = [(raw, comparable_label(raw)) for (raw,) in new]
            self.con.executemany("INSERT OR IGNORE INTO labelmap VALUES (?, ?)", rows)

    def _refresh_labels(self) -> bool:
        """Re-read labels.jsonl when its size or mtime changed; whether it did."""
        try:
            st = (self.run_dir / LABELS_FILE).stat()
            seen: tuple[int, int] | None = (st.st_size, st.st_mtime_ns)
        except FileNotFoundError:
            seen = None
        if seen == self._labels_seen:
            return False
        self._labels_seen = seen
        rows = [
            (a.dataset, a.item_id, a.label, a.preference)
            for a in read_adjudications(self.run_dir).values()
        ]
        self.con.execute(f"DELETE FROM adj_{self.rid}")
        if rows:
            self.con.executemany(f"INSERT INTO adj_{self.rid} VALUES (?, ?, ?, ?)", rows)
            self._map_labels(f"SELECT DISTINCT label FROM adj_{self.rid}")
        return True

    def ensure_flags(self) -> None:
        """The disagreement and inconsistency tables of this version (built on demand)."""
        if self._flags_version != self.version:
            for sql in flags_sql(self.rid):
                self.con.execute(sql)
            self._flags_version = self.version

    def ensure_differ(self, first: str, second: str) -> None:
        """dif_<id>: where judges `first` and `second` differ, for this version."""
        if self._differed != (self.version, first, second):
            self.con.execute(differ_sql(self.rid), [first, second])
            self._differed = (self.version, first, second)

    def ensure_search(self, pattern: str) -> None:
        """hits_<id>: the keys whose item id, label, raw output or error matches
        `pattern` (an RE2 pattern), for this version. Kept until the next search or
        version: the count, the page and the next pages do not scan the text again."""
        if self._searched != (self.version, pattern):
            cols = ("item_id", "label", "error", "raw_output")
            found = " OR ".join(f"regexp_matches(coalesce({c}, ''), $p)" for c in cols)
            self.con.execute(
                f"CREATE OR REPLACE TABLE hits_{self.rid} AS SELECT k FROM j_{self.rid} "
                f"WHERE {found}",
                {"p": pattern},
            )
            self._searched = (self.version, pattern)
