"""`rundir.read_columns` (DuckDB) gives what the record models read, or None whenever a
line is not as the model wants it; `assay compare` reads the same votes either way."""

from __future__ import annotations

import builtins
import json
from pathlib import Path
from typing import Any

import pytest

from assay.adjudication import GoldOverlay
from assay.compare import _load
from assay.compare._item_columns import ITEM_COLUMNS, VOTE_COLUMNS, add_columns
from assay.compare._load import (
    ItemData,
    _add_records,
    _gold,
    _gold_of_items,
    _ItemVoteFields,
)
from assay.core.records import ItemRecord
from assay.core.rundir import iter_jsonl, read_columns
from assay.errors import RunError

pytest.importorskip("duckdb")


def _rows() -> list[dict[str, Any]]:
    """Single-response and pairwise votes, failures, slot labels, a jury, a re-judged key."""
    rows: list[dict[str, Any]] = []
    for i in range(30):
        judge = f"judge-{i % 3}"
        row: dict[str, Any] = {"dataset": "d", "item_id": f"it-{i % 10}", "judge_id": judge}
        row |= {"status": "ok" if i % 7 else "parse_error", "label": ["Yes", "no", None][i % 3]}
        if i % 4 == 0:
            row |= {"raw_score": i / 2, "score": 0.25, "label_probability": 0.5 + i / 100}
        if i % 5 == 0:
            row |= {"model": f"m{i}", "prompt_version": i, "usage": {"total_tokens": 3}}
        rows.append(row)
    rows.append({"dataset": "p", "item_id": "x", "judge_id": "pj", "order": "ba", "status": "ok",
                 "label": "a", "prompt_id": "pair"})  # fmt: skip
    rows.append({"dataset": "p", "item_id": "x", "judge_id": "pj", "order": "ab", "status": "ok",
                 "label": "b", "preference": "tie", "jury": {"members": ["a", "b"]}})  # fmt: skip
    rows.append(dict(rows[0], label="changed"))  # a later line for the same key wins
    rows.append(dict(rows[1], model="later"))  # judge-1 again after other judges
    return rows


def _write(path: Path, rows: list[dict[str, Any]], tail: str = "") -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + tail)
    return path


def test_columns_are_the_fields_the_records_read(tmp_path: Path) -> None:
    assert set(VOTE_COLUMNS) == set(_ItemVoteFields.model_fields)
    path = _write(tmp_path / "v.jsonl", _rows())
    columns = read_columns(path, VOTE_COLUMNS)
    assert columns is not None
    records = list(iter_jsonl(path, _ItemVoteFields))
    for name in VOTE_COLUMNS:
        expected = [getattr(r, name) for r in records]
        if name == "jury":
            expected = [None if v is None else json.loads(json.dumps(v)) for v in expected]
            columns[name] = [None if v is None else json.loads(v) for v in columns[name]]
        assert columns[name] == expected, name


def test_votes_from_columns_equal_votes_from_records(tmp_path: Path) -> None:
    path = _write(tmp_path / "v.jsonl", _rows())
    by_records = ItemData(gold={}, votes={}, meta={})
    _add_records(by_records, iter_jsonl(path, _ItemVoteFields))
    by_columns = ItemData(gold={}, votes={}, meta={})
    columns = read_columns(path, VOTE_COLUMNS)
    assert columns is not None
    add_columns(by_columns, columns)
    assert by_columns == by_records
    assert list(by_columns.votes) == list(by_records.votes)  # judges in the same order
    assert by_columns.juries == {"pj"}


@pytest.mark.parametrize(
    ("change", "tail"),
    [
        ({"dataset": 5}, ""),  # a number where the model wants a string
        ({"status": "maybe"}, ""),  # not a Status
        ({"order": "abc"}, ""),
        ({"score": "high"}, ""),
        ({"prompt_version": 1.5}, ""),  # not an integer
        ({"jury": "yes"}, ""),  # not an object
        ({"judge_id": None}, ""),  # required
        ({}, '{"dataset": "d", "item_id": "torn'),  # a torn last line
        ({}, "[1, 2]\n"),  # not an object
        ({}, '{"dataset": "d",,}\n'),  # not JSON
    ],
)
def test_any_surprise_gives_none(tmp_path: Path, change: dict[str, Any], tail: str) -> None:
    rows = _rows()
    rows[3] = rows[3] | change
    assert read_columns(_write(tmp_path / "v.jsonl", rows, tail), VOTE_COLUMNS) is None


def test_without_duckdb_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = builtins.__import__

    def no_duckdb(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "duckdb":
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_duckdb)
    assert read_columns(_write(tmp_path / "v.jsonl", _rows()), VOTE_COLUMNS) is None


def test_compare_reads_a_torn_file_record_by_record(tmp_path: Path) -> None:
    """The fallback: a torn last line is skipped, as `iter_jsonl` always did."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "manifest.json").write_text(json.dumps({"name": "r"}))
    (run / "items.jsonl").write_text("")
    _write(run / "item_judgments.jsonl", _rows(), '{"dataset": "d", "item_id": "torn')
    loaded = _load.load_run(run)
    assert loaded.items is not None
    assert set(loaded.items.votes) == {"judge-0", "judge-1", "judge-2", "pj"}


def _items() -> list[dict[str, Any]]:
    return [
        {"dataset": "d", "item_id": "1", "line": 1, "gold_label": "Yes", "split": "dev"},
        {"dataset": "d", "item_id": "2", "gold_score": 3, "ratings": {"ann": "No", "bo": None}},
        {"dataset": "p", "item_id": "3", "pairwise": True, "gold_preference": "tie"},
        {"dataset": "d", "item_id": "4"},
    ]


def test_gold_from_columns_equals_gold_from_records(tmp_path: Path) -> None:
    assert set(ITEM_COLUMNS) == set(ItemRecord.model_fields)
    path = _write(tmp_path / "items.jsonl", _items())
    assert read_columns(path, ITEM_COLUMNS) is not None
    expected = {r.key: _gold(r) for r in iter_jsonl(path, ItemRecord)}
    assert _gold_of_items(path, GoldOverlay()) == expected
    assert expected[("d", "2")].ratings == (("ann", "no"), ("bo", None))


@pytest.mark.parametrize("change", [{"ratings": {"ann": 5}}, {"pairwise": "maybe"}, {"line": 1.5}])
def test_items_the_record_refuses_are_read_by_records(
    tmp_path: Path, change: dict[str, Any]
) -> None:
    rows = _items()
    rows[1] = rows[1] | change
    path = _write(tmp_path / "items.jsonl", rows)
    with pytest.raises(RunError, match=r"items\.jsonl:2: "):
        _gold_of_items(path, GoldOverlay())
