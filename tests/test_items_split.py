"""An items dataset's `split_column`: each item's split is read, kept out of the
template variables, and written to items.jsonl (absent when there is none)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.core.records import ItemRecord
from assay.datasets._items import ItemsDatasetOptions, load_items
from assay.errors import DatasetError


def _write(tmp_path: Path, rows: list[dict[str, object]]) -> Path:
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_split_is_read_and_not_a_variable(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        [
            {"id": 1, "text": "a", "gold_label": "yes", "part": "dev"},
            {"id": 2, "text": "b", "gold_label": "no", "part": "test"},
            {"id": 3, "text": "c", "gold_label": "no"},
        ],
    )
    data = load_items(ItemsDatasetOptions(path=str(path), split_column="part"))
    assert [it.split for it in data.items] == ["dev", "test", None]
    assert all("part" not in it.variables for it in data.items)


def test_split_column_must_exist(tmp_path: Path) -> None:
    path = _write(tmp_path, [{"id": 1, "text": "a"}])
    with pytest.raises(DatasetError, match="'part'"):
        load_items(ItemsDatasetOptions(path=str(path), split_column="part"))


def test_split_absent_from_record_when_none() -> None:
    assert "split" not in ItemRecord(dataset="d", item_id="1").model_dump()
    assert ItemRecord(dataset="d", item_id="1", split="dev").model_dump()["split"] == "dev"
