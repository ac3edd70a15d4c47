"""A Parquet copy of a run's record files (`records_parquet = true`), for analysis.

Written at the end of a run from the JSONL files, which stay the source of truth: one
row per key (the latest line, as every reader takes it), in batches, so writing the copy
holds a batch of rows and the keys, never the whole file. Scalar fields keep their type;
nested ones (usage, parsed, claims, spans) are JSON text.
"""

from __future__ import annotations

import json
import types
from collections.abc import Iterator
from enum import Enum
from pathlib import Path
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel

from assay.core.records import (
    GateRecord,
    ItemJudgmentRecord,
    JudgmentRecord,
    SentenceRecord,
    VerificationRecord,
)
from assay.core.rundir import (
    GATES_FILE,
    ITEM_JUDGMENTS_FILE,
    JUDGMENTS_FILE,
    SENTENCES_FILE,
    VERIFICATIONS_FILE,
    iter_jsonl,
    iter_rows,
)
from assay.errors import SpecError

PARQUET_FILES: dict[str, type[BaseModel]] = {
    JUDGMENTS_FILE: JudgmentRecord,
    ITEM_JUDGMENTS_FILE: ItemJudgmentRecord,
    SENTENCES_FILE: SentenceRecord,
    VERIFICATIONS_FILE: VerificationRecord,
    GATES_FILE: GateRecord,
}
BATCH_ROWS = 8192


def parquet_name(jsonl_name: str) -> str:
    return jsonl_name.removesuffix(".jsonl") + ".parquet"


def require_pyarrow(spec_path: Path | str) -> None:
    """`records_parquet` without pyarrow is one line naming the spec key and the extra."""
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise SpecError(
            "records_parquet = true needs pyarrow: pip install 'assay[parquet]'",
            file=spec_path,
            field="records_parquet",
        ) from None


def write_parquet_copies(run_dir: Path) -> list[Path]:
    """`<name>.parquet` next to each record file the run has; the paths written."""
    written = []
    for name, model in PARQUET_FILES.items():
        source = run_dir / name
        if source.is_file():
            written.append(write_parquet(source, model, run_dir / parquet_name(name)))
    return written


def write_parquet(source: Path, model: type[BaseModel], target: Path) -> Path:
    """Rewrite `target` (atomically) from the latest line per key of `source`."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = arrow_schema(model)
    tmp = target.with_name(f".{target.name}.tmp")
    with pq.ParquetWriter(tmp, schema) as writer:
        for rows in _batches(_latest_rows(source, model), BATCH_ROWS):
            columns = {f.name: [_cell(row.get(f.name), f.type) for row in rows] for f in schema}
            writer.write_table(pa.table(columns, schema=schema))
    tmp.replace(target)
    return target


def arrow_schema(model: type[BaseModel]) -> Any:
    """One column per record field: its scalar type, or JSON text for anything nested."""
    import pyarrow as pa

    return pa.schema([(name, _arrow_type(f.annotation)) for name, f in model.model_fields.items()])


def _arrow_type(annotation: Any) -> Any:
    import pyarrow as pa

    if get_origin(annotation) in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        annotation = args[0] if len(args) == 1 else Any
    if isinstance(annotation, type):
        if issubclass(annotation, bool):
            return pa.bool_()
        if issubclass(annotation, int) and not issubclass(annotation, Enum):
            return pa.int64()
        if issubclass(annotation, float):
            return pa.float64()
    return pa.string()  # str, enums, datetimes (ISO text) and nested values (JSON)


def _cell(value: Any, kind: Any) -> Any:
    import pyarrow as pa

    if value is None or kind != pa.string() or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _latest_rows(source: Path, model: type[BaseModel]) -> Iterator[dict[str, Any]]:
    """Each key's latest line as a JSON object, in file order of those lines. The keys
    come from the validated records (as every reader reads them); the rows from the
    same lines read again, so only the keys are held."""
    last: dict[Any, int] = {}
    for index, record in enumerate(iter_jsonl(source, model)):
        last[record.key] = index  # type: ignore[attr-defined]
    keep = set(last.values())
    del last
    for index, row in enumerate(iter_rows(source)):  # the same lines, as plain objects
        if index in keep:
            yield row


def _batches(rows: Iterator[dict[str, Any]], size: int) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
