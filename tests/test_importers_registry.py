"""Answers formats are IMPORTERS entries: load_answers dispatches through the registry,
a plugin's format (and its detector) works like a built-in one, and the shared readers
behave the same for every caller."""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.core.registry import IMPORTERS
from assay.datasets import (
    FORMATS,
    AnswerItem,
    AnswersDataset,
    SourceProbe,
    answer_formats,
    detect_format,
    detects,
    json_lines,
    load_answers,
    read_jsonl,
)
from assay.errors import DatasetError
from assay.retrieval import load_corpus

DATASETS = Path(__file__).resolve().parents[1] / "assay" / "datasets"


@pytest.fixture
def plugin_format(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A third-party format registered the way a plugin would, removed afterwards."""
    monkeypatch.setattr(IMPORTERS, "_entries", dict(IMPORTERS._entries))

    def is_notes(probe: SourceProbe) -> bool:
        return "note" in probe.keys

    @IMPORTERS.register("notes")
    @detects(is_notes)
    def read_notes(path: Path, /, *, name: str) -> AnswersDataset:
        """Doctor's notes: one `note` per row."""
        src = read_jsonl(path)
        items = [AnswerItem(id=f"n{line}", answer=row["note"]) for line, row in src.rows]
        return AnswersDataset(
            name=name, path=str(src.path), sha256=src.sha256, format="notes", items=items
        )

    yield "notes"


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_builtin_formats_are_registered_with_descriptions() -> None:
    for fmt in FORMATS:
        info = IMPORTERS.info(fmt)
        assert info.package == "assay" and info.description, fmt
        assert info.target.startswith("assay.datasets."), info.target
    assert answer_formats()[: len(FORMATS)] == list(FORMATS)


def test_plugin_format_loads_by_name_and_by_detection(plugin_format: str, tmp_path: Path) -> None:
    f = _write(tmp_path / "ward.jsonl", [{"note": "BP fine."}, {"note": "Afebrile."}])
    named = load_answers(f, format=plugin_format)
    assert (named.format, named.name, [i.answer for i in named.items]) == (
        "notes",
        "ward",
        ["BP fine.", "Afebrile."],
    )
    assert detect_format(f) == "notes"
    assert load_answers(f) == named  # auto asks the plugin's detector
    assert plugin_format in answer_formats()
    assert IMPORTERS.info(plugin_format).description == "Doctor's notes: one `note` per row."


def test_plugin_format_refuses_options_it_does_not_read(plugin_format: str, tmp_path: Path) -> None:
    f = _write(tmp_path / "ward.jsonl", [{"note": "x"}])
    ev = tmp_path / "evidence.json"
    ev.write_text("{}", encoding="utf-8")
    with pytest.raises(DatasetError) as excinfo:
        load_answers(f, format=plugin_format, evidence_file=ev)
    assert str(excinfo.value) == (
        "evidence_file is only read with format 'medscore-input', not 'notes'"
    )
    with pytest.raises(DatasetError, match="not 'notes'"):
        load_answers(f, evidence_file=ev)  # auto detects the plugin, which takes no evidence


def test_unknown_format_lists_builtins_then_plugins(plugin_format: str, tmp_path: Path) -> None:
    f = _write(tmp_path / "a.jsonl", [{"answer": "x"}])
    with pytest.raises(DatasetError) as excinfo:
        load_answers(f, format="csv")
    assert str(excinfo.value) == (
        "unknown answers format 'csv'; known: auto, jsonl, medscore-input, expertqa, wice, notes"
    )


def test_rows_matching_no_detector_read_as_plain_jsonl(tmp_path: Path) -> None:
    f = _write(tmp_path / "a.jsonl", [{"response": "R.", "question": "Q?"}])
    assert detect_format(f) == "jsonl"
    assert load_answers(f).items[0].answer == "R."


def test_expertqa_empty_answer_is_a_dataset_error(tmp_path: Path) -> None:
    row = {"answer_id": "a", "answer": "  ", "claims": []}
    f = _write(tmp_path / "answers.jsonl", [row])
    with pytest.raises(DatasetError) as excinfo:  # was a KeyError before the split
        load_answers(f, format="expertqa")
    assert (excinfo.value.field, excinfo.value.line) == ("answer", 1)


def test_json_lines_reads_values_and_names_the_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    data = '\ufeff{"a": 1}\n\n[2]\n"s\u2028t"\n'.encode()
    assert list(json_lines(data, path)) == [(1, {"a": 1}), (3, [2]), (4, "s\u2028t")]
    with pytest.raises(DatasetError, match=r"x.jsonl:2: invalid JSON"):
        list(json_lines(b'{"a": 1}\n{oops\n', path))
    with pytest.raises(DatasetError, match=r"x.jsonl:2: file is not valid UTF-8"):
        list(json_lines(b'{"a": 1}\n"\xff"\n', path))


def test_corpus_and_answers_read_lines_alike(tmp_path: Path) -> None:
    broken = tmp_path / "c.jsonl"
    broken.write_text('{"id": "p1", "text": "T"}\n{oops\n', encoding="utf-8")
    messages = []
    for read in (load_corpus, load_answers):
        with pytest.raises(DatasetError) as excinfo:
            read(broken)
        messages.append(str(excinfo.value))
    assert (
        messages[0]
        == messages[1]
        == (f"{broken}:2: invalid JSON: Expecting property name enclosed in double quotes")
    )
    dup = _write(tmp_path / "d.jsonl", [{"id": 1, "text": "T"}, {"id": "1", "text": "U"}])
    with pytest.raises(DatasetError, match=r"d.jsonl:2: field 'id': duplicate id '1'"):
        load_corpus(dup)


def test_no_function_local_imports_in_datasets() -> None:
    """They hid import cycles: every import of assay itself in assay.datasets is at module
    level (a third-party library imported where it is used, e.g. pyarrow, is fine)."""
    local = []
    for path in sorted(DATASETS.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for inner in ast.walk(node):
                    if isinstance(inner, ast.ImportFrom) and (
                        inner.level or (inner.module or "").startswith("assay")
                    ):
                        local.append(f"{path.name}:{inner.lineno}")
                    if isinstance(inner, ast.Import) and any(
                        a.name.startswith("assay") for a in inner.names
                    ):
                        local.append(f"{path.name}:{inner.lineno}")
    assert local == []
