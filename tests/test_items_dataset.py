"""Items datasets: any columns as variables, optional gold and raters, and
one-line errors naming file:line and the column for every bad row."""

from __future__ import annotations

import builtins
import csv
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from assay.datasets import Item, ItemsDatasetOptions, load_items, load_pairs
from assay.errors import DatasetError

ROWS: list[dict[str, Any]] = [
    {"id": 1, "response": "Aspirin cures flu.", "context": "No trial shows that.",
     "gold_label": "unsupported", "gold_score": 1, "r1": "unsupported", "r2": None},
    {"id": "two", "response": "Water is wet.", "context": "Water wets things.",
     "gold_label": "supported", "gold_score": "4.5", "r1": "supported", "r2": "supported"},
]  # fmt: skip
COLUMNS = ["id", "response", "context", "gold_label", "gold_score", "r1", "r2"]


def _jsonl(path: Path, rows: list[Any]) -> Path:
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _csv(path: Path, rows: list[dict[str, Any]], columns: list[str] = COLUMNS) -> Path:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("" if row.get(k) is None else row[k]) for k in columns})
    return path


def _error(options: ItemsDatasetOptions | Path) -> DatasetError:
    with pytest.raises(DatasetError) as info:
        load_items(options)
    return info.value


def _assert_loc(err: DatasetError, path: Path, line: int | None, field: str | None) -> None:
    text = str(err)
    assert "\n" not in text
    where = f"{path}:{line}: " if line is not None else f"{path}: "
    assert text.startswith(where), text
    assert err.line == line and err.field == field
    if field is not None:
        assert f"field '{field}'" in text, text


# ---- loading ---------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_load_defaults(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"claims{suffix}"
    (_jsonl if suffix == ".jsonl" else _csv)(path, ROWS)
    ds = load_items(ItemsDatasetOptions(path=str(path), raters=["r1", "r2"]))
    assert (ds.name, ds.path, ds.rows) == ("claims", str(path), 2)
    assert ds.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    first, second = ds.items
    assert [first.id, second.id] == ["1", "two"]
    assert first.variables == {"response": "Aspirin cures flu.", "context": "No trial shows that."}
    assert (first.gold_label, first.gold_score) == ("unsupported", 1.0)
    assert [first.line, second.line] == ([1, 2] if suffix == ".jsonl" else [2, 3])
    assert second.gold_score == 4.5
    assert first.ratings == {"r1": "unsupported", "r2": None}
    assert second.ratings == {"r1": "supported", "r2": "supported"}
    assert ds.has_gold_label and ds.has_gold_score and not ds.has_gold_preference


def test_csv_and_jsonl_read_the_same(tmp_path: Path) -> None:
    a = load_items(_jsonl(tmp_path / "a.jsonl", ROWS)).items
    b = load_items(_csv(tmp_path / "a.csv", ROWS)).items
    assert [i.model_dump(exclude={"line"}) for i in a] == [
        i.model_dump(exclude={"line"}) for i in b
    ]


def test_no_gold_and_numeric_labels(tmp_path: Path) -> None:
    rows = [{"id": 1, "text": "x", "gold_label": 3}, {"id": 2, "text": "y", "gold_label": 3.0}]
    ds = load_items(_jsonl(tmp_path / "n.jsonl", rows))
    assert [i.gold_label for i in ds.items] == ["3", "3"]
    assert not ds.has_gold_score and ds.items[0].gold_score is None


def test_variable_mapping_and_custom_columns(tmp_path: Path) -> None:
    rows = [{"key": "k1", "answer": "A1", "ctx": "C1", "label": "yes", "human": "0.25"}]
    path = _jsonl(tmp_path / "m.jsonl", rows)
    opts = ItemsDatasetOptions(
        path=str(path),
        name="mine",
        id_column="key",
        gold_label_column="label",
        gold_score_column="human",
        variables={"claim": "answer", "evidence": "ctx"},
    )
    ds = load_items(opts)
    item = ds.items[0]
    assert ds.name == "mine" and item.id == "k1"
    assert item.variables == {"answer": "A1", "ctx": "C1", "claim": "A1", "evidence": "C1"}
    assert (item.gold_label, item.gold_score) == ("yes", 0.25)


def test_pairwise_fields(tmp_path: Path) -> None:
    rows = [
        {"id": 1, "q": "Q?", "response_a": "R-a", "response_b": "R-b", "gold_preference": "a"},
        {"id": 2, "q": "Q?", "response_a": "S-a", "response_b": "S-b", "gold_preference": "TIE"},
        {"id": 3, "q": "Q?", "response_a": "T-a", "response_b": "T-b"},
    ]
    ds = load_items(_jsonl(tmp_path / "p.jsonl", rows))
    assert [i.gold_preference for i in ds.items] == ["A", "tie", None]
    assert (ds.items[0].response_a, ds.items[0].response_b) == ("R-a", "R-b")
    assert "gold_preference" not in ds.items[0].variables
    mapped = ItemsDatasetOptions(
        path=str(tmp_path / "p.jsonl"), variables={"response_a": "response_b", "response_b": "q"}
    )
    item = load_items(mapped).items[0]
    assert (item.response_a, item.response_b) == ("R-b", "Q?")


def test_to_frame(tmp_path: Path) -> None:
    ds = load_items(ItemsDatasetOptions(path=str(_csv(tmp_path / "f.csv", ROWS)), raters=["r1"]))
    frame = ds.to_frame()
    assert list(frame.columns) == [
        "id", "response", "context", "r2", "gold_label", "gold_score", "gold_preference", "r1"
    ]  # fmt: skip
    assert list(frame["id"]) == ["1", "two"]
    assert frame["gold_score"].tolist() == [1.0, 4.5]


def test_options_reject_unknown_keys_and_repeated_raters() -> None:
    with pytest.raises(ValidationError, match="rater_columns"):
        ItemsDatasetOptions.model_validate({"path": "x.csv", "rater_columns": ["r1"]})
    with pytest.raises(ValidationError, match="twice"):
        ItemsDatasetOptions(path="x.csv", raters=["r1", "r1"])


def test_pairs_loader_still_reads_csv_through_the_shared_reader(tmp_path: Path) -> None:
    path = tmp_path / "pairs.csv"
    path.write_text(
        "id,evidence,calibrated_claim,raised_claim,axis\np1,E.,C.,R.,scope,extra\n",
        encoding="utf-8",
    )
    with pytest.raises(DatasetError, match="more cells than the header") as info:
        load_pairs(path)
    assert info.value.line == 2


# ---- errors ----------------------------------------------------------------------------


def test_empty_files(tmp_path: Path) -> None:
    empty = tmp_path / "e.jsonl"
    empty.write_text("\n  \n", encoding="utf-8")
    _assert_loc(_error(empty), empty, None, None)
    assert "no rows" in str(_error(empty))
    header_only = _csv(tmp_path / "h.csv", [])
    assert "no rows" in str(_error(header_only))


def test_missing_id_column(tmp_path: Path) -> None:
    path = _csv(tmp_path / "i.csv", [{"text": "x"}], columns=["text"])
    err = _error(path)
    _assert_loc(err, path, 2, "id")
    assert "missing id column 'id'" in str(err)
    other = _jsonl(tmp_path / "i.jsonl", [{"key": "a"}, {"id": "b"}])
    _assert_loc(_error(ItemsDatasetOptions(path=str(other), id_column="key")), other, 2, "key")


@pytest.mark.parametrize("bad", ["", None, 1.5, True, ["a"]])
def test_bad_id(tmp_path: Path, bad: Any) -> None:
    path = _jsonl(tmp_path / "b.jsonl", [{"id": "ok"}, {"id": bad}])
    err = _error(path)
    _assert_loc(err, path, 2, "id")
    assert "id must be non-empty text or an integer" in str(err)


def test_duplicate_id_names_both_lines(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "d.jsonl", [{"id": 7, "t": "a"}, {"id": "x"}, {"id": "7"}])
    err = _error(path)
    _assert_loc(err, path, 3, "id")
    assert "duplicate id '7' (first on line 1)" in str(err)


@pytest.mark.parametrize("bad", ["high", "nan", "inf", True, {"v": 1}])
def test_non_numeric_gold_score(tmp_path: Path, bad: Any) -> None:
    path = _jsonl(tmp_path / "s.jsonl", [{"id": 1, "gold_score": 2}, {"id": 2, "gold_score": bad}])
    err = _error(path)
    _assert_loc(err, path, 2, "gold_score")
    assert "must be a finite number" in str(err)


def test_non_numeric_gold_score_in_a_renamed_csv_column(tmp_path: Path) -> None:
    path = _csv(tmp_path / "s.csv", [{"id": 1, "h": "3"}, {"id": 2, "h": "three"}], ["id", "h"])
    err = _error(ItemsDatasetOptions(path=str(path), gold_score_column="h"))
    _assert_loc(err, path, 3, "h")
    assert "'three'" in str(err)


def test_bad_labels_and_preferences(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "l.jsonl", [{"id": 1, "gold_label": ["x"]}])
    _assert_loc(_error(path), path, 1, "gold_label")
    path = _jsonl(tmp_path / "r.jsonl", [{"id": 1, "r1": {"x": 1}}])
    _assert_loc(_error(ItemsDatasetOptions(path=str(path), raters=["r1"])), path, 1, "r1")
    path = _jsonl(tmp_path / "p.jsonl", [{"id": 1, "gold_preference": "C"}])
    err = _error(path)
    _assert_loc(err, path, 1, "gold_preference")
    assert "must be A, B or tie" in str(err)


def test_mapped_column_missing_names_column_and_first_line(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "v.jsonl", [{"id": 1, "answer": "a"}, {"id": 2, "reply": "b"}])
    err = _error(ItemsDatasetOptions(path=str(path), variables={"claim": "answer"}))
    _assert_loc(err, path, 2, "answer")
    assert "column 'answer' (mapped to variable 'claim')" in str(err)
    csv_path = _csv(tmp_path / "v.csv", [{"id": 1, "reply": "b"}], ["id", "reply"])
    err = _error(ItemsDatasetOptions(path=str(csv_path), variables={"claim": "answer"}))
    _assert_loc(err, csv_path, 2, "answer")


def test_rater_or_named_gold_column_absent_everywhere(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "a.jsonl", [{"id": 1, "r1": "x"}, {"id": 2}])
    assert load_items(ItemsDatasetOptions(path=str(path), raters=["r1"])).items[1].ratings == {
        "r1": None
    }
    err = _error(ItemsDatasetOptions(path=str(path), raters=["r1", "r9"]))
    _assert_loc(err, path, None, None)
    assert "column 'r9' is in no row" in str(err)
    err = _error(ItemsDatasetOptions(path=str(path), gold_label_column="label"))
    assert "column 'label' is in no row" in str(err)


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_bad_utf8(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"latin1{suffix}"
    first = b'{"id": 1}\n' if suffix == ".jsonl" else b"id,text\n1,ok\n"
    second = b'{"id": 2, "t": "caf\xe9"}\n' if suffix == ".jsonl" else b"2,caf\xe9\n"
    path.write_bytes(first + second)
    err = _error(path)
    _assert_loc(err, path, 2 if suffix == ".jsonl" else 3, None)
    assert "not valid UTF-8" in str(err)


def test_bad_json(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "j.jsonl", [{"id": 1}, '{"id": 2,', "[1, 2]"])
    err = _error(path)
    _assert_loc(err, path, 2, None)
    assert "invalid JSON" in str(err)
    path = _jsonl(tmp_path / "k.jsonl", [{"id": 1}, "[1, 2]"])
    assert "must be a JSON object" in str(_error(path))


def test_csv_row_with_too_many_cells(tmp_path: Path) -> None:
    path = tmp_path / "c.csv"
    path.write_text('id,text\n1,"multi\nline"\n2,x,surplus\n', encoding="utf-8")
    err = _error(path)
    _assert_loc(err, path, 4, None)
    assert "more cells than the header" in str(err)


def test_unknown_suffix_missing_file_and_directory(tmp_path: Path) -> None:
    xlsx = tmp_path / "d.xlsx"
    xlsx.write_bytes(b"x")
    assert ".parquet" in str(_error(xlsx))
    assert "not found" in str(_error(tmp_path / "absent.csv"))
    assert "is a directory" in str(_error(tmp_path))


# ---- parquet ---------------------------------------------------------------------------


def test_parquet_without_pyarrow_is_one_line_naming_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_import = builtins.__import__

    def no_pyarrow(name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("pyarrow"):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    path = tmp_path / "d.parquet"
    path.write_bytes(b"PAR1")
    err = _error(path)
    _assert_loc(err, path, None, None)
    assert "pip install 'assay[parquet]'" in str(err)


def test_parquet_reads_like_jsonl(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    import pandas as pd

    path = tmp_path / "d.parquet"
    pd.DataFrame([{k: r[k] for k in COLUMNS if k != "gold_score"} for r in ROWS]).assign(
        id=["1", "two"], gold_score=[1.0, 4.5]
    ).to_parquet(path)
    ds = load_items(ItemsDatasetOptions(path=str(path), raters=["r1", "r2"]))
    jsonl = load_items(
        ItemsDatasetOptions(path=str(_jsonl(tmp_path / "d.jsonl", ROWS)), raters=["r1", "r2"])
    )
    assert [i.model_dump() for i in ds.items] == [i.model_dump() for i in jsonl.items]
    dup = tmp_path / "dup.parquet"
    pd.DataFrame({"id": ["a", "b", "a"], "gold_score": [1.0, None, 2.0]}).to_parquet(dup)
    err = _error(dup)
    _assert_loc(err, dup, 3, "id")
    assert "first on line 1" in str(err)
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"not parquet")
    assert "not a readable Parquet file" in str(_error(broken))


def test_error_reaches_the_user_as_one_line(tmp_path: Path) -> None:
    """The message is what `assay` prints after `error: `: file:line: field 'x': ..."""
    path = _csv(tmp_path / "u.csv", [{"id": 1, "gold_score": "many"}], ["id", "gold_score"])
    code = f"from assay.datasets import load_items; load_items({str(path)!r})"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.endswith(f"{path}:2: field 'gold_score': must be a finite number, got 'many'")


def test_item_model_is_plain_data() -> None:
    item = Item(id="x", line=1, variables={"response_a": "a"})
    assert item.response_a == "a" and item.response_b is None
    assert Item.model_validate(item.model_dump()) == item
