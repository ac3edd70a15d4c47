"""A few fields of every line of a JSONL record file, as columns, read by DuckDB.

Validating each line into a record model costs ~12 µs for the ~900-byte item judgments a
run writes (all of the line is parsed, however few fields are wanted): 5 s for a
comparison of 100,000 items x 4 judges. DuckDB reads only the fields asked for, on every
core. It is optional (the `view` extra): without it `read_columns` gives None and the
caller reads the records (`rundir.iter_jsonl`).

The columnar read is all or nothing. Each field is read as JSON and must have the JSON
type its record model gives it (a string, a number, an integer, a boolean, an object; null or absent
where optional) and, for enumerations, one of the values; a line that is not a JSON
object, a torn last line, a duplicated key or any other surprise gives None, and the
caller's record-by-record read then skips the torn line or names the line at fault.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

ColumnKind = Literal["str", "float", "int", "bool", "object"]

_JSON_TYPES: dict[ColumnKind, str] = {
    "str": "('VARCHAR')",
    "float": "('DOUBLE', 'BIGINT', 'UBIGINT')",
    "int": "('BIGINT', 'UBIGINT')",
    "bool": "('BOOLEAN')",
    "object": "('OBJECT')",
}
_VALUES: dict[ColumnKind, str] = {
    "str": "{c} ->> '$'",
    "float": "CAST({c} AS DOUBLE)",
    "int": "CAST({c} AS BIGINT)",
    "bool": "CAST({c} AS BOOLEAN)",
    "object": "CAST({c} AS VARCHAR)",  # the object's JSON text
}


@dataclass(frozen=True)
class Column:
    """One field as its record model types it: `required` (not null), `values` (an
    enumeration's members)."""

    kind: ColumnKind
    required: bool = False
    values: tuple[str, ...] = ()


def _select(name: str, column: Column) -> str:
    """The field's value, or an error() (DuckDB stops the read) where the model would
    refuse it."""
    c = '"' + name.replace('"', '""') + '"'
    kind = f"json_type({c})"
    accepted = f"{kind} IN {_JSON_TYPES[column.kind]}"
    value = _VALUES[column.kind].format(c=c)
    if column.values:
        accepted += f" AND {value} IN ({', '.join(_literal(v) for v in column.values)})"
    refused = "error('column read refused')"
    missing = refused if column.required else "NULL"
    return (
        f"CASE WHEN {c} IS NULL OR {kind} = 'NULL' THEN {missing} "
        f"WHEN {accepted} THEN {value} ELSE {refused} END AS {c}"
    )


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def read_columns(path: Path, columns: Mapping[str, Column]) -> dict[str, list[Any]] | None:
    """`columns` of every line of `path`, in line order (None where a field is null or
    absent; an object field gives its JSON text); None when DuckDB is not installed or
    any line is not as the record model wants it (see the module docstring)."""
    try:
        import duckdb
    except ImportError:
        return None
    if not columns or not path.is_file() or not _ends_whole(path):
        return None
    schema = "{" + ", ".join(f"{_literal(name)}: 'JSON'" for name in columns) + "}"
    query = (
        f"SELECT {', '.join(_select(n, c) for n, c in columns.items())} FROM read_json(?, "
        f"format = 'newline_delimited', columns = {schema})"
    )
    try:
        with duckdb.connect(":memory:") as con:
            con.execute("SET enable_progress_bar = false")  # never draw on a command's output
            found = con.execute(query, [str(path)]).fetchnumpy()
    except duckdb.Error:
        return None
    return {name: found[name].tolist() for name in columns}


def _ends_whole(path: Path) -> bool:
    """The file ends with a newline (else its last line is torn: read record by record)."""
    with path.open("rb") as fh:
        if fh.seek(0, 2) == 0:
            return True
        fh.seek(-1, 2)
        return fh.read(1) == b"\n"
