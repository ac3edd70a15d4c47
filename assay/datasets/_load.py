"""Loading ForceBench pairs from JSONL or CSV with errors that point at file:line field."""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path

from pydantic import BaseModel, ValidationError

from assay.core.pairs import ForcePair
from assay.errors import DatasetError

BUILTIN_DATA_DIR = Path(__file__).resolve().parent.parent / "data"
JSONL_SUFFIXES = (".jsonl", ".ndjson")  # ForceBench file formats, by suffix
CSV_SUFFIXES = (".csv",)
BUILTIN_DATASETS = {
    "forcebench-demo": "forcebench_demo.jsonl",
    "factuality-demo": "factuality_demo.jsonl",
}


class LoadedDataset(BaseModel):
    """Pairs plus the identity of the file they came from."""

    name: str
    path: str
    sha256: str
    pairs: list[ForcePair]

    @property
    def rows(self) -> int:
        return len(self.pairs)


def resolve_dataset_path(path: str | Path, *, base: Path | None = None) -> Path:
    """`builtin:NAME` names a bundled dataset; relative paths resolve against `base`."""
    text = str(path)
    if text.startswith("builtin:"):
        name = text.removeprefix("builtin:")
        if name not in BUILTIN_DATASETS:
            raise DatasetError(
                f"unknown built-in dataset {name!r}; known: {', '.join(BUILTIN_DATASETS)}"
            )
        return BUILTIN_DATA_DIR / BUILTIN_DATASETS[name]
    p = Path(text).expanduser()
    if not p.is_absolute() and base is not None:
        p = base / p
    return p


def first_error(exc: ValidationError) -> tuple[str, str | None]:
    """The most useful error first: an unknown field (a typo) before the missing one."""
    errors = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
    err = errors[0]
    field = ".".join(str(p) for p in err["loc"]) or None
    return str(err["msg"]).removeprefix("Value error, "), field


def _validate(row: object, path: Path, line: int) -> ForcePair:
    if not isinstance(row, dict):
        raise DatasetError("each row must be a JSON object", file=path, line=line)
    if None in row:
        raise DatasetError("row has more cells than the header", file=path, line=line)
    cleaned = {k: (None if v == "" else v) for k, v in row.items()}
    try:
        return ForcePair.model_validate(cleaned)
    except ValidationError as exc:
        msg, field = first_error(exc)
        raise DatasetError(msg, file=path, line=line, field=field) from None


def _decode(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise DatasetError("file is not valid UTF-8", file=path, line=line) from None


def load_pairs(
    path: str | Path, *, name: str | None = None, base: Path | None = None
) -> LoadedDataset:
    """Read a `.jsonl` or `.csv` ForceBench file; ids must be unique."""
    resolved = resolve_dataset_path(path, base=base)
    if resolved.is_dir():
        raise DatasetError("is a directory; pass a ForceBench .jsonl or .csv file", file=resolved)
    if not resolved.is_file():
        raise DatasetError("dataset file not found", file=resolved)
    data = resolved.read_bytes()
    pairs: list[ForcePair] = []
    seen: dict[str, int] = {}
    suffix = resolved.suffix.lower()
    if suffix in JSONL_SUFFIXES:
        # split on "\n" only: U+2028 and friends are legal inside JSON strings
        for lineno, text in enumerate(_decode(data, resolved).split("\n"), start=1):
            if not text.strip():
                continue
            try:
                row = json.loads(text)
            except json.JSONDecodeError as exc:
                raise DatasetError(f"invalid JSON: {exc.msg}", file=resolved, line=lineno) from None
            pair = _validate(row, resolved, lineno)
            _check_unique(pair, seen, resolved, lineno)
            pairs.append(pair)
    elif suffix in CSV_SUFFIXES:
        reader = csv.DictReader(io.StringIO(_decode(data, resolved), newline=""))
        lineno = 2  # the header is line 1; a quoted cell may span several lines
        for row in reader:
            pair = _validate(dict(row), resolved, lineno)
            _check_unique(pair, seen, resolved, lineno)
            pairs.append(pair)
            lineno = reader.line_num + 1
    else:
        raise DatasetError("dataset must be .jsonl or .csv", file=resolved)
    if not pairs:
        raise DatasetError("dataset has no rows", file=resolved)
    return LoadedDataset(
        name=name or resolved.stem,
        path=str(resolved),
        sha256=hashlib.sha256(data).hexdigest(),
        pairs=pairs,
    )


def _check_unique(pair: ForcePair, seen: dict[str, int], path: Path, line: int) -> None:
    if pair.id in seen:
        raise DatasetError(
            f"duplicate id {pair.id!r} (first on line {seen[pair.id]})",
            file=path,
            line=line,
            field="id",
        )
    seen[pair.id] = line
