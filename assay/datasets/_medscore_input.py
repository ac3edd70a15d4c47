"""MedScore's input rows: a chatbot's response, the doctor's answer as provided evidence."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from assay.core.answers import AnswerItem
from assay.core.registry import IMPORTERS
from assay.datasets._answers import (
    AnswersDataset,
    SourceProbe,
    answer_item,
    answers_dataset,
    detects,
    single_file,
)
from assay.datasets._jsonl import decode_utf8, read_jsonl
from assay.datasets._medscore_files import MEDSCORE_DECOMPOSITIONS, MEDSCORE_VERIFICATIONS
from assay.datasets._rows import RowId, SourceRow, check_unique
from assay.errors import DatasetError


class MedScoreInputRow(SourceRow):
    """One row of MedScore's input file."""

    id: RowId
    response: str
    question: str | None = None
    evidence: str | None = None
    doctor_response: str | None = None


def _is_medscore_input(probe: SourceProbe) -> bool:
    """MedScore input rows; MedScore's output files and folders are pointed elsewhere."""
    if any(probe.holds(n) for n in (MEDSCORE_DECOMPOSITIONS, MEDSCORE_VERIFICATIONS)):
        probe.refuse("this folder holds MedScore outputs; read them with import_medscore_outputs")
    if {"sentence_id", "claim"} <= probe.keys:
        probe.refuse("this looks like a MedScore output file; read it with import_medscore_outputs")
    return {"doctor_response", "response"} <= probe.keys


@IMPORTERS.register("medscore-input")
@detects(_is_medscore_input)
def read_medscore_input(
    path: Path, /, *, name: str, evidence_file: Path | None = None
) -> AnswersDataset:
    """MedScore's input rows; the doctor's answer (or evidence_file) is the evidence.

    `evidence_file` is MedScore's `{"<id>": "<evidence>"}` JSON file.
    """
    src = read_jsonl(single_file(path, "medscore-input"))
    provided = None if evidence_file is None else _read_evidence_file(evidence_file)
    items: list[AnswerItem] = []
    seen: dict[str, int] = {}
    for line, _, row in src.validated(MedScoreInputRow):
        data = _answer_fields(row, provided)
        item = answer_item(data, {"answer": "response"}, src.path, line)
        check_unique(item.id, seen, src.path, line, "id")
        items.append(item)
    return answers_dataset(src, name, "medscore-input", items)


def _answer_fields(row: MedScoreInputRow, provided: dict[str, str] | None) -> dict[str, Any]:
    """The row as AnswerItem fields: `evidence`, else `doctor_response`, else the file's."""
    evidence_key = "evidence" if row.evidence is not None else "doctor_response"
    text = row.evidence if row.evidence is not None else row.doctor_response
    if text is None and provided is not None:
        text, evidence_key = provided.get(row.id), "evidence_file"
    evidence = (
        [] if text is None else [{"id": f"{row.id}:ctx", "text": text, "source": evidence_key}]
    )
    return {"id": row.id, "question": row.question, "answer": row.response, "evidence": evidence}


def _read_evidence_file(path: Path) -> dict[str, str]:
    """MedScore's `provided_evidence_path`: one JSON object, id -> evidence text."""
    if not path.is_file():
        raise DatasetError("evidence file not found", file=path)
    try:
        data = json.loads(decode_utf8(path.read_bytes(), path))
    except json.JSONDecodeError as exc:
        raise DatasetError(f"invalid JSON: {exc.msg}", file=path, line=exc.lineno) from None
    if not isinstance(data, dict):
        raise DatasetError('expected one JSON object {"<id>": "<evidence>"}', file=path)
    for key, value in data.items():
        if not isinstance(value, str):
            raise DatasetError("evidence must be a string", file=path, field=str(key))
    return {str(k): v for k, v in data.items()}
