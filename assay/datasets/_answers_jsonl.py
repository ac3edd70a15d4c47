"""Plain JSONL answers: one row per answer, a few common key names accepted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.core.answer_fields import RESPONSE_FIELDS
from assay.core.answers import AnswerItem
from assay.core.registry import IMPORTERS
from assay.datasets._answers import AnswersDataset, answer_item, answers_dataset, single_file
from assay.datasets._jsonl import read_jsonl
from assay.datasets._rows import check_unique, first_key
from assay.errors import DatasetError

ANSWER_KEYS = ("answer", "response", "output")
QUESTION_KEYS = ("question", "prompt", "query")
EVIDENCE_KEYS = ("evidence", "context")
PASSED_THROUGH = ("gold_factuality", "gold_claims", "source", *RESPONSE_FIELDS)


@IMPORTERS.register("jsonl")
def read_answers_jsonl(path: Path, /, *, name: str) -> AnswersDataset:
    """Answers as JSONL: answer|response|output, question|prompt|query, evidence|context.

    The id defaults to the line number.
    """
    src = read_jsonl(single_file(path, "jsonl"))
    items: list[AnswerItem] = []
    seen: dict[str, int] = {}
    for line, row in src.rows:
        item = _answer_from_row(row, src.path, line)
        check_unique(item.id, seen, src.path, line, "id")
        items.append(item)
    return answers_dataset(src, name, "jsonl", items)


def _answer_from_row(row: dict[str, Any], path: Path, line: int) -> AnswerItem:
    answer_key = first_key(row, ANSWER_KEYS)
    if answer_key is None:
        needed = f"missing; each row needs one of {', '.join(map(repr, ANSWER_KEYS))}"
        raise DatasetError(needed, file=path, line=line, field="answer")
    item_id = line if row.get("id") is None else row["id"]  # AnswerItem reads 7 as "7"
    fields: dict[str, str] = {"answer": answer_key}  # AnswerItem field -> the row's key
    data: dict[str, Any] = {"id": item_id, "answer": row[answer_key]}
    question_key = first_key(row, QUESTION_KEYS)
    if question_key is not None:
        fields["question"] = question_key
        data["question"] = row[question_key]
    evidence_key = first_key(row, EVIDENCE_KEYS)
    if evidence_key is not None:
        fields["evidence"] = evidence_key
        data["evidence"] = _evidence_passages(row[evidence_key], str(item_id))
        if data["evidence"] is None:
            raise DatasetError(
                "must be a string, or a list of strings or {id, text} objects",
                file=path,
                line=line,
                field=evidence_key,
            )
    data |= {key: row[key] for key in PASSED_THROUGH if key in row}
    return answer_item(data, fields, path, line)


def _evidence_passages(value: object, item_id: str) -> list[object] | None:
    """A string is one passage `<id>:ctx`; a list holds strings or passage objects."""
    if isinstance(value, str):
        return [{"id": f"{item_id}:ctx", "text": value}]
    if not isinstance(value, list):
        return None
    out: list[object] = []
    for k, entry in enumerate(value):
        if isinstance(entry, str):
            out.append({"id": f"{item_id}:ctx{k}", "text": entry})
        elif isinstance(entry, dict) and entry.get("id") is None:
            out.append({**entry, "id": f"{item_id}:ctx{k}"})
        else:
            out.append(entry)  # pydantic names the bad entry: `<key>.<k>`
    return out
