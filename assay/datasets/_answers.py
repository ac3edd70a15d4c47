"""Answers to score: the dataset model and the contract every answers importer meets.

An importer is any callable `(path, *, name) -> AnswersDataset` registered in
`assay.core.registry.IMPORTERS` under the name a spec's `format` gives; `auto` asks the
importers' detectors (attached with `detects`) which one reads a path.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, Protocol, TypeVar

from pydantic import ValidationError

from assay.core.answers import AnswerItem
from assay.datasets._jsonl import DatasetFile, JsonlFile
from assay.datasets._rows import first_error
from assay.errors import DatasetError


class AnswersDataset(DatasetFile):
    """Answers to score plus the identity of the file they came from."""

    format: str
    items: list[AnswerItem]

    @property
    def rows(self) -> int:
        return len(self.items)


class AnswersImporter(Protocol):
    """Reads one answers format (a file or a folder) into answers to score.

    `path` exists and is resolved; `name` is the dataset's name. An importer may take
    further keyword options (MedScore input takes `evidence_file`).
    """

    def __call__(self, path: Path, /, *, name: str) -> AnswersDataset: ...


@dataclass(frozen=True)
class SourceProbe:
    """What `auto` knows of a path: a folder, or a file and its first row."""

    path: Path
    first_row: dict[str, Any] | None = None
    first_line: int | None = None

    @property
    def keys(self) -> set[str]:
        return set(self.first_row or {})

    def holds(self, filename: str) -> bool:
        """A folder holding `filename`."""
        return self.first_row is None and (self.path / filename).is_file()

    def refuse(self, message: str) -> NoReturn:
        """This is a known file (or folder) that holds no answers: say what to pass."""
        raise DatasetError(message, file=self.path, line=self.first_line)


Detector = Callable[[SourceProbe], bool]
"""True when the path is this format's; raises DatasetError for a file of the same
source that holds no answers (so the user learns which file to pass instead)."""

F = TypeVar("F", bound=Callable[..., AnswersDataset])

DETECTOR_ATTRIBUTE = "detect"


def detects(detector: Detector) -> Callable[[F], F]:
    """Decorator: `auto` recognises this importer's files with `detector`."""

    def attach(importer: F) -> F:
        setattr(importer, DETECTOR_ATTRIBUTE, detector)
        return importer

    return attach


def detector_of(importer: object) -> Detector | None:
    found = getattr(importer, DETECTOR_ATTRIBUTE, None)
    return found if callable(found) else None


def single_file(path: Path, fmt: str) -> Path:
    """Formats of one file refuse a folder."""
    if path.is_dir():
        raise DatasetError(f"format {fmt!r} reads one .jsonl file, not a folder", file=path)
    return path


def answers_dataset(src: JsonlFile, name: str, fmt: str, items: list[AnswerItem]) -> AnswersDataset:
    return AnswersDataset(name=name, path=str(src.path), sha256=src.sha256, format=fmt, items=items)


def answer_item(data: dict[str, Any], fields: dict[str, str], path: Path, line: int) -> AnswerItem:
    """`data` as an AnswerItem; errors name the source's key (`fields`: item field -> key)."""
    try:
        item = AnswerItem.model_validate(data)
    except ValidationError as exc:
        msg, fld = first_error(exc)
        if fld is not None:
            head, _, rest = fld.partition(".")
            fld = fields.get(head, head) + (f".{rest}" if rest else "")
        raise DatasetError(msg, file=path, line=line, field=fld) from None
    if not item.answer.strip():
        answer_key = fields.get("answer", "answer")
        raise DatasetError("answer is empty", file=path, line=line, field=answer_key)
    return item
