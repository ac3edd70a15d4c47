"""Finding one item's records in a big record file without parsing every line.

An item page reads a handful of lines out of a run's possibly 100,000: the file is
searched as bytes for the item id's JSON string (both as `json.dumps` escapes it and as
raw UTF-8, which pydantic writes), and only the lines holding it are parsed and checked
field by field. A torn last line (a run still writing) is skipped, as `iter_jsonl` does.
"""

from __future__ import annotations

import json
import mmap
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from assay.errors import RunError

M = TypeVar("M", bound=BaseModel)

#: An index hook: (record file, dataset, item id) -> the byte offsets of the lines that
#: may hold the item (a superset is fine), or None to scan the file.
LineIndex = Callable[[Path, str, str], list[int] | None]


def needles(value: str) -> list[bytes]:
    """The ways a JSON writer may spell the string `value` (ASCII-escaped or not)."""
    found = {json.dumps(value).encode(), json.dumps(value, ensure_ascii=False).encode()}
    return sorted(found)


def _line_at(data: bytes | mmap.mmap, pos: int) -> tuple[int, int]:
    """The [start, end) of the line holding byte `pos`; end -1 when it has no newline."""
    start = data.rfind(b"\n", 0, pos) + 1
    return start, data.find(b"\n", pos)


def _hits(data: bytes | mmap.mmap, value: str) -> list[int]:
    """Start offsets of the complete lines containing `value` as a JSON string."""
    starts: set[int] = set()
    for needle in needles(value):
        pos = data.find(needle)
        while pos != -1:
            start, end = _line_at(data, pos)
            if end == -1:
                break  # a torn last line
            starts.add(start)
            pos = data.find(needle, end)
    return sorted(starts)


def matching_rows(
    path: Path, value: str, where: dict[str, Any], *, index: LineIndex | None = None
) -> Generator[tuple[int, dict[str, Any]], None, None]:
    """(byte offset, object) of the lines of `path` whose fields equal `where` (one of
    whose values is the string `value` searched for), in file order."""
    if not path.is_file() or path.stat().st_size == 0:
        return
    with path.open("rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as data:
        dataset = str(where.get("dataset", ""))
        offsets = index(path, dataset, value) if index is not None else None
        starts = _hits(data, value) if offsets is None else offsets
        for start in starts:
            end = data.find(b"\n", start)
            if end == -1:
                continue
            row = _parse(bytes(data[start:end]), path, start)
            if all(row.get(k) == v for k, v in where.items()):
                yield start, row


def _parse(line: bytes, path: Path, offset: int) -> dict[str, Any]:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise RunError(f"corrupt record at byte {offset}: {exc.msg}", file=path) from None
    return row if isinstance(row, dict) else {}


def matching_records(
    path: Path,
    model: type[M],
    value: str,
    where: dict[str, Any],
    *,
    index: LineIndex | None = None,
) -> list[M]:
    """The matching lines validated into `model`, the last per key (`model.key`)."""
    latest: dict[Any, M] = {}
    for offset, row in matching_rows(path, value, where, index=index):
        try:
            record = model.model_validate(row)
        except ValidationError as exc:
            problem = exc.errors()[0]
            field = ".".join(map(str, problem["loc"]))
            message = f"corrupt record at byte {offset}: {problem['msg']}"
            raise RunError(message, file=path, field=field) from None
        latest[record.key] = record  # type: ignore[attr-defined]
    return list(latest.values())
