"""One run's judgments in DuckDB: the table, how new lines enter it, and its gold.

Tables per run (`<id>` is the run id, 12 hex digits, so safe in a name):
`j_<id>` the judgments of all record files, one row per key (latest line wins);
`items_<id>` items.jsonl (gold); `adj_<id>` the adjudicated labels; `v_<id>` a view
adding each row's gold, gold source, outcome and verdict. Labels are compared as the
metrics compare them (`comparable_label`), through `labelmap`: the few distinct labels
are normalised in Python, once each, so the comparison is the metrics' own function."""

from __future__ import annotations

from pathlib import Path

import duckdb

from assay.adjudication import LABELS_FILE, read_adjudications
from assay.core.rundir import ITEM_JUDGMENTS_FILE, ITEMS_FILE, JUDGMENTS_FILE, VERIFICATIONS_FILE
from assay.metrics._item_metrics import comparable_label
from assay.view.index._ingest import Chunk, FileCursor
from assay.view.index._outcome import view_sql
from assay.view.index._schema import COLUMNS, SELECTS

__all__ = ["RunTable", "create_shared"]

RECORD_FILES = (JUDGMENTS_FILE, ITEM_JUDGMENTS_FILE, VERIFICATIONS_FILE)
_UNIT = {JUDGMENTS_FILE: "pair", ITEM_JUDGMENTS_FILE: "item", VERIFICATIONS_FILE: "claim"}
_KEY: tuple[str, ...] = ("unit", "dataset", "item_id", "variant", "judge_id")
_ITEM_KEY: tuple[str, ...] = ("dataset", "item_id")
_TABLE = """unit VARCHAR, dataset VARCHAR, item_id VARCHAR, variant VARCHAR,
    preference VARCHAR, claim_gold VARCHAR, answer_id VARCHAR, claim_id VARCHAR,
    judge_id VARCHAR, model VARCHAR, prompt_id VARCHAR, prompt_version BIGINT,
    status VARCHAR, label VARCHAR, score DOUBLE, error VARCHAR, raw_output VARCHAR,
    attempts BIGINT, latency_s DOUBLE, cache_hit BOOLEAN, tokens BIGINT,
    cost_usd DOUBLE, recorded_at VARCHAR"""
_ITEMS = "dataset VARCHAR, item_id VARCHAR, pairwise BOOLEAN, gold_label VARCHAR, "
_ITEMS += "gold_preference VARCHAR"
_ADJ = "dataset VARCHAR, item_id VARCHAR, label VARCHAR, preference VARCHAR"


def create_shared(con: duckdb.DuckDBPyConnection) -> None:
    """Tables every run shares: the label normalisation map."""
    con.execute("CREATE TABLE IF NOT EXISTS labelmap (raw VARCHAR PRIMARY KEY, norm VARCHAR)")


def _columns_arg(columns: dict[str, str]) -> str:
    """The `columns` struct of read_json; names and types come from the record models."""
    return "{" + ", ".join(f"'{name}': '{kind}'" for name, kind in columns.items()) + "}"


def _read(path: Path, name: str) -> str:
    cols = _columns_arg(COLUMNS[name])
    return f"read_json(?, format='newline_delimited', columns={cols})"


def _same(cols: tuple[str, ...], a: str, b: str) -> str:
    return " AND ".join(f"{a}.{c} IS NOT DISTINCT FROM {b}.{c}" for c in cols)


class RunTable:
    """The DuckDB tables of one run and the cursors of its files. Not thread-safe:
    the index calls it under its lock."""

    def __init__(self, con: duckdb.DuckDBPyConnection, rid: str, run_dir: Path, scratch: Path):
        self.con, self.rid, self.run_dir, self.scratch = con, rid, run_dir, scratch
        self.version = 0
        self.cursors = {name: FileCursor(run_dir / name) for name in (*RECORD_FILES, ITEMS_FILE)}
        self._labels_seen: tuple[int, int] | None = None
        con.execute(f"CREATE OR REPLACE TABLE j_{rid} ({_TABLE})")
        con.execute(f"CREATE OR REPLACE TABLE items_{rid} ({_ITEMS})")
        con.execute(f"CREATE OR REPLACE TABLE adj_{rid} ({_ADJ})")
        con.execute(view_sql(rid))

    def refresh(self) -> int:
        """Read what changed (stat only when nothing did); the version after."""
        changed = False
        for name, cursor in self.cursors.items():
            if cursor.changed():
                chunk = cursor.take(self.scratch / f"{self.rid}-{name}")
                if chunk is not None:
                    self._ingest(name, chunk)
                    changed = True
        changed = self._refresh_labels() or changed
        if changed:
            self.version += 1
        return self.version

    def _ingest(self, name: str, chunk: Chunk) -> None:
        if name == ITEMS_FILE:
            table, key, select = f"items_{self.rid}", _ITEM_KEY, "*"
            wipe = f"DELETE FROM {table}"
        else:
            table, key, select = f"j_{self.rid}", _KEY, SELECTS[name]
            wipe = f"DELETE FROM {table} WHERE unit = '{_UNIT[name]}'"
        if chunk.reset:
            self.con.execute(wipe)
        if chunk.n_bytes:
            self._upsert(table, key, f"SELECT {select} FROM {_read(chunk.path, name)}", chunk)
        chunk.path.unlink(missing_ok=True)

    def _upsert(self, table: str, key: tuple[str, ...], select: str, chunk: Chunk) -> None:
        """Stage the lines in file order, keep the last per key, replace old rows."""
        con = self.con
        con.execute(f"CREATE OR REPLACE TEMP TABLE stage AS {select}", [str(chunk.path)])
        keys = ", ".join(key)
        con.execute(
            "CREATE OR REPLACE TEMP TABLE fresh AS SELECT * FROM stage WHERE "
            + " AND ".join(f"{c} IS NOT NULL" for c in key if c != "variant")
            + f" QUALIFY row_number() OVER (PARTITION BY {keys} ORDER BY rowid DESC) = 1"
        )
        if not chunk.reset:
            con.execute(f"DELETE FROM {table} t USING fresh f WHERE {_same(key, 't', 'f')}")
        con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM fresh")
        labels = "gold_label" if table.startswith("items_") else "label, claim_gold"
        self._map_labels(f"SELECT DISTINCT unnest([{labels}]) FROM fresh")
        con.execute("DROP TABLE stage")
        con.execute("DROP TABLE fresh")

    def _map_labels(self, distinct_sql: str) -> None:
        """Add the normal form of each label not seen before to `labelmap`."""
        new = self.con.execute(
            f"SELECT l FROM ({distinct_sql}) AS t(l) WHERE l IS NOT NULL "
            "AND l NOT IN (SELECT raw FROM labelmap)"
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

    def drop(self) -> None:
        for kind in ("VIEW v", "TABLE j", "TABLE items", "TABLE adj"):
            what, prefix = kind.split()
            self.con.execute(f"DROP {what} IF EXISTS {prefix}_{self.rid}")
