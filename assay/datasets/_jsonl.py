"""JSON Lines files, read once, with errors that name the file and the line.

Every reader of a JSONL file in assay (ForceBench pairs, answers, MedScore's outputs,
retrieval corpora) goes through `json_lines`, so a broken file reads the same everywhere.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field, SerializerFunctionWrapHandler, model_serializer

from assay.core.answer_fields import omit_absent
from assay.datasets._rows import validate_row
from assay.errors import DatasetError

M = TypeVar("M", bound=BaseModel)


class DatasetFile(BaseModel):
    """A dataset's name plus the identity of the file it was read from."""

    name: str
    path: str
    sha256: str
    delimiter: str | None = Field(
        default=None, description="A CSV/TSV file's delimiter (given or detected)."
    )

    @model_serializer(mode="wrap")
    def _omit_absent_delimiter(self, handler: SerializerFunctionWrapHandler) -> Any:
        """No `delimiter` key for a file that has none: JSONL datasets dump as before."""
        return omit_absent(handler(self), ("delimiter",))


def decode_utf8(data: bytes, path: Path) -> str:
    """UTF-8 text (a byte-order mark is dropped); the error names the line of the bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise DatasetError("file is not valid UTF-8", file=path, line=line) from None


def json_lines(data: bytes, path: Path) -> Iterator[tuple[int, object]]:
    """Each non-blank line's JSON value with its 1-based line number."""
    # split on "\n" only: U+2028 and friends are legal inside JSON strings
    for lineno, text in enumerate(decode_utf8(data, path).split("\n"), start=1):
        if not text.strip():
            continue
        try:
            yield lineno, json.loads(text)
        except json.JSONDecodeError as exc:
            raise DatasetError(f"invalid JSON: {exc.msg}", file=path, line=lineno) from None


def _row(text: str, path: Path, lineno: int) -> dict[str, Any] | None:
    """One line's JSON object (None for a blank line), errors as `json_lines` words them."""
    if not text.strip():
        return None
    try:
        row = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"invalid JSON: {exc.msg}", file=path, line=lineno) from None
    if not isinstance(row, dict):
        raise DatasetError("each row must be a JSON object", file=path, line=lineno)
    return row


def stream_json_objects(path: Path, digest: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    """`json_objects` of a file read a line at a time, each line fed to `digest` (a
    hashlib object): memory stays one line however large the file. Same rows, lines and
    errors as reading the whole file."""
    with path.open("rb") as fh:
        for lineno, raw in enumerate(fh, start=1):
            digest.update(raw)
            try:
                text = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError:
                raise DatasetError("file is not valid UTF-8", file=path, line=lineno) from None
            row = _row(text, path, lineno)
            if row is not None:
                yield lineno, row


def json_objects(data: bytes, path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """`json_lines` where every value must be a JSON object (a row)."""
    for lineno, row in json_lines(data, path):
        if not isinstance(row, dict):
            raise DatasetError("each row must be a JSON object", file=path, line=lineno)
        yield lineno, row


@dataclass
class JsonlFile:
    """A JSONL file's rows plus the identity (sha256 of its bytes) of what was read."""

    path: Path
    sha256: str
    rows: list[tuple[int, dict[str, Any]]] = field(default_factory=list)

    def validated(self, model: type[M]) -> Iterator[tuple[int, dict[str, Any], M]]:
        """Each row with its line, and as `model` (a DatasetError names file:line field)."""
        for line, row in self.rows:
            yield line, row, validate_row(model, row, self.path, line)


def read_jsonl(path: Path, *, allow_empty: bool = False) -> JsonlFile:
    """Every JSON object with its line number; blank lines are skipped."""
    if not path.is_file():
        raise DatasetError("file not found", file=path)
    data = path.read_bytes()
    rows = list(json_objects(data, path))
    if not rows and not allow_empty:
        raise DatasetError("dataset has no rows", file=path)
    return JsonlFile(path=path, sha256=hashlib.sha256(data).hexdigest(), rows=rows)


def default_name(given: Path) -> str:
    """A dataset's name when none is given: the folder's name or the file's stem."""
    return given.name if given.is_dir() else given.stem


def member(directory: Path, names: Sequence[str], what: str) -> Path:
    """The first of `names` present in `directory`; the error lists them all."""
    for name in names:
        if (directory / name).is_file():
            return directory / name
    raise DatasetError(f"no {what} file ({' or '.join(names)}) in this folder", file=directory)


def file_in(given: Path, name: str, what: str) -> Path:
    """`given` itself, or the file `name` inside it when `given` is a folder."""
    return member(given, [name], what) if given.is_dir() else given
