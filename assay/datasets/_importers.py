"""`load_answers`: answers to score, read by the importer a format names.

Every answers format is an entry of `assay.core.registry.IMPORTERS` (the built-ins are
`jsonl`, `medscore-input`, `expertqa` and `wice`, one module each; a plugin adds its
own with `@IMPORTERS.register`). `auto` is an entry too: it asks each importer's
detector, in name order, whether a path is its own, and falls back to `jsonl`.
Field mappings and assumptions: docs/how-to/import-datasets.md.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from assay.core.registry import IMPORTERS
from assay.datasets._answers import AnswersDataset, AnswersImporter, SourceProbe, detector_of
from assay.datasets._jsonl import default_name, read_jsonl
from assay.datasets._load import resolve_dataset_path
from assay.errors import DatasetError

AUTO = "auto"
FALLBACK = "jsonl"
FORMATS = (AUTO, "jsonl", "medscore-input", "expertqa", "wice")  # the built-in formats
EVIDENCE_FILE = "evidence_file"


def answer_formats() -> list[str]:
    """Every format `load_answers` reads: the built-ins first, then plugins' by name."""
    return [*FORMATS, *(n for n in IMPORTERS if n not in FORMATS)]


def load_answers(
    path: str | Path,
    *,
    format: str = AUTO,
    name: str | None = None,
    base: Path | None = None,
    evidence_file: str | Path | None = None,
) -> AnswersDataset:
    """Read answers to score from `path` (a file, or a dataset folder).

    Formats: `jsonl` (an `answer`/`response`/`output` per row), `medscore-input`
    (MedScore's input rows; the doctor's answer becomes the provided evidence),
    `expertqa` (answers.jsonl with claims, evidence and expert labels), `wice` (WiCE
    oracle rows.jsonl: one item per claim, its chunks as passages), `auto` (by the
    folder's files or the first row's fields), or any format a plugin registered in
    `IMPORTERS`. Relative paths resolve against `base`. `evidence_file` is MedScore's
    `{"<id>": "<evidence>"}` JSON file (medscore-input only). `name` defaults to the
    folder's name or the file's stem.
    """
    given = resolve_dataset_path(path, base=base)
    if not given.exists():
        raise DatasetError("dataset file not found", file=given)
    if format not in IMPORTERS:
        known = ", ".join(answer_formats())
        raise DatasetError(f"unknown answers format {format!r}; known: {known}")
    options: dict[str, Any] = {}
    if evidence_file is not None:
        options[EVIDENCE_FILE] = resolve_dataset_path(evidence_file, base=base)
    return import_answers(format, given, name=name or default_name(given), **options)


def import_answers(fmt: str, path: Path, *, name: str, **options: Any) -> AnswersDataset:
    """Call the importer registered as `fmt`, refusing options it does not read."""
    importer: AnswersImporter = IMPORTERS.get(fmt)
    for option in options:
        if not _accepts(importer, option):
            readers = [
                n for n in answer_formats() if n != AUTO and _accepts(IMPORTERS.get(n), option)
            ]
            raise DatasetError(
                f"{option} is only read with format {' or '.join(map(repr, readers))}, not {fmt!r}"
            )
    return importer(path, name=name, **options)


def _accepts(importer: object, option: str) -> bool:
    """Whether the importer takes the keyword `option` (or any keyword)."""
    parameters = inspect.signature(importer).parameters.values()  # type: ignore[arg-type]
    return any(p.name == option or p.kind is p.VAR_KEYWORD for p in parameters)


@IMPORTERS.register("auto")
def read_auto(path: Path, /, *, name: str, **options: Any) -> AnswersDataset:
    """Pick the format from a folder's files or a file's first row, else plain JSONL."""
    return import_answers(detect_format(path), path, name=name, **options)


def detect_format(path: Path) -> str:
    """The format of a folder (by its files) or a file (by its first row)."""
    probe = SourceProbe(path=path)
    if not path.is_dir():
        line, row = read_jsonl(path).rows[0]
        probe = SourceProbe(path=path, first_row=row, first_line=line)
    for fmt in IMPORTERS:
        detect = None if fmt in (AUTO, FALLBACK) else detector_of(IMPORTERS.get(fmt))
        if detect is not None and detect(probe):
            return fmt
    if path.is_dir():
        raise DatasetError(
            "cannot tell the format of this folder (expected rows.jsonl for WiCE or "
            "answers.jsonl for ExpertQA); pass format=... or a file",
            file=path,
        )
    return FALLBACK
