"""The judgments table of `assay view` (assay.view.index): real DuckDB over real small
run directories: every filter and sort, paging, gold and outcome per unit, latest line
wins, a torn last line, following appended lines, adjudicated gold, hostile search text."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _view_runs import append, item, write_items
from pydantic import ValidationError

from assay.adjudication import append_adjudication
from assay.core.records import ItemJudgmentRecord
from assay.core.rundir_lock import WriterLock
from assay.errors import RunError
from assay.view.index import SORTS, JudgmentQuery, ViewIndex, run_id

GOLD = [{"item_id": f"i{n}", "gold_label": g} for n, g in enumerate(["yes", "no", "yes", "no"])]
JUDGMENTS = [
    item("i0", "a", "Yes", latency_s=0.5, attempts=1),
    item("i1", "a", "yes", latency_s=2.0, attempts=3, cache_hit=True),
    item("i2", "a", None, latency_s=0.1),
    item("i3", "a", "no", latency_s=1.0, raw_output="The 100% answer_x is NO"),
    item("i0", "b", "yes", latency_s=0.7),
    item("i1", "b", "no", latency_s=0.2, cache_hit=True),
    item("i2", "b", "no", latency_s=0.3),
]


@pytest.fixture
def index(tmp_path: Path) -> Iterator[ViewIndex]:
    with ViewIndex([tmp_path]) as ix:
        yield ix


def items_run(tmp_path: Path, name: str = "run") -> Path:
    return write_items(tmp_path / name, GOLD, JUDGMENTS)


def q(ix: ViewIndex, run: Path, **query: Any) -> list[tuple[str, str]]:
    """(item_id, judge) of every matching row, in the query's order."""
    page = ix.query(run_id(run), JudgmentQuery(page_size=1000, **query))
    return [(r.item_id, r.judge_id) for r in page.rows]


def test_rows_carry_gold_and_outcome_as_the_metrics_compare_labels(
    tmp_path: Path, index: ViewIndex
) -> None:
    run = items_run(tmp_path)
    page = index.query(run_id(run), JudgmentQuery())
    by = {(r.item_id, r.judge_id): r for r in page.rows}
    assert page.total == 7 and page.version == 1
    assert by[("i0", "a")].label == "Yes" and by[("i0", "a")].outcome == "correct"
    assert by[("i1", "a")].outcome == "wrong" and by[("i1", "a")].gold == "no"
    assert by[("i2", "a")].status == "parse_error" and by[("i2", "a")].outcome == "wrong"
    assert by[("i1", "b")].gold_source == "dataset" and by[("i1", "b")].outcome == "correct"
    assert by[("i1", "a")].attempts == 3 and by[("i1", "a")].cache_hit is True
    assert by[("i0", "a")].unit == "item" and by[("i0", "a")].variant is None


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"judge": ["b"]}, {("i0", "b"), ("i1", "b"), ("i2", "b")}),
        ({"status": ["parse_error"]}, {("i2", "a")}),
        ({"label": ["no"]}, {("i3", "a"), ("i1", "b"), ("i2", "b")}),
        ({"dataset": ["other"]}, set()),
        ({"unit": ["item"], "judge": ["a"], "status": ["ok"]},
         {("i0", "a"), ("i1", "a"), ("i3", "a")}),
        ({"outcome": "wrong"}, {("i1", "a"), ("i2", "a"), ("i2", "b")}),
        ({"outcome": "correct", "judge": ["a"]}, {("i0", "a"), ("i3", "a")}),
        ({"cache_hit": True}, {("i1", "a"), ("i1", "b")}),
        ({"retried": True}, {("i1", "a")}),
        ({"disagreeing": True}, {("i1", "a"), ("i1", "b")}),
        ({"differ": ["a", "b"]}, {("i1", "a"), ("i1", "b")}),
        ({"search": "I3"}, {("i3", "a")}),
        ({"search": "answer_x"}, {("i3", "a")}),
        ({"search": "no label in"}, {("i2", "a")}),
    ],
)  # fmt: skip
def test_each_filter(
    tmp_path: Path, index: ViewIndex, query: dict[str, Any], expected: set[tuple[str, str]]
) -> None:
    assert set(q(index, items_run(tmp_path), **query)) == expected


@pytest.mark.parametrize("sort", SORTS)
def test_every_sort_orders_by_its_column_both_ways(
    tmp_path: Path, index: ViewIndex, sort: str
) -> None:
    run = items_run(tmp_path)
    for desc in (False, True):
        rows = index.query(run_id(run), JudgmentQuery(sort=sort, desc=desc)).rows
        values = [getattr(r, sort) for r in rows if getattr(r, sort) is not None]
        assert values == sorted(values, reverse=desc), (sort, desc)
        nulls = [getattr(r, sort) is None for r in rows]
        assert nulls == sorted(nulls)  # nulls last both ways


def test_sort_by_latency_gives_the_exact_order(tmp_path: Path, index: ViewIndex) -> None:
    run = items_run(tmp_path)
    got = q(index, run, sort="latency_s", desc=True)
    assert got[:3] == [("i1", "a"), ("i3", "a"), ("i0", "b")]


def test_an_unknown_sort_is_refused_with_the_allowed_names(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown sort 'raw_output'.*latency_s"):
        JudgmentQuery(sort="raw_output")
    with ViewIndex([tmp_path]) as ix:
        run = items_run(tmp_path)
        sneaky = JudgmentQuery.model_construct(**{**JudgmentQuery().model_dump(), "sort": "1;"})
        with pytest.raises(ValueError, match="unknown sort"):
            ix.query(run_id(run), sneaky)


@pytest.mark.parametrize(
    "fields", [{"page": 0}, {"page_size": 0}, {"page_size": 5000}, {"differ": ["a"]}]
)
def test_page_bounds_and_differ_are_validated(fields: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        JudgmentQuery(**fields)


def test_pages_and_totals(tmp_path: Path, index: ViewIndex) -> None:
    run = items_run(tmp_path)
    pages = [index.query(run_id(run), JudgmentQuery(page=p, page_size=3)) for p in (1, 2, 3, 4)]
    assert [len(p.rows) for p in pages] == [3, 3, 1, 0]
    assert {p.total for p in pages} == {7}
    seen = [(r.item_id, r.judge_id) for p in pages for r in p.rows]
    assert len(set(seen)) == 7 and seen == q(index, run)
    filtered = index.query(run_id(run), JudgmentQuery(judge=["a"], page=5, page_size=1))
    assert filtered.total == 4 and filtered.rows == []


@pytest.mark.parametrize(
    "text", ["'; DROP TABLE labelmap; --", "1_0", "1%X", "\\", "yes' OR '1'='1", ".*", "[a-z]"]
)
def test_search_text_is_only_text(tmp_path: Path, index: ViewIndex, text: str) -> None:
    """SQL, LIKE wildcards (1_0 and 1%X would match "100% answer_x") and regexp syntax
    match nothing: no record holds them."""
    run = items_run(tmp_path)
    assert q(index, run, search=text) == []
    assert len(q(index, run)) == 7  # nothing was dropped or changed


def test_search_finds_special_characters_literally(tmp_path: Path, index: ViewIndex) -> None:
    run = items_run(tmp_path)
    assert q(index, run, search="100% ANSWER_X") == [("i3", "a")]
    assert q(index, run, search="0%") == [("i3", "a")]


def test_latest_line_per_key_wins(tmp_path: Path, index: ViewIndex) -> None:
    run = items_run(tmp_path)
    append(run / "item_judgments.jsonl", ItemJudgmentRecord, [item("i2", "a", "yes")])
    rows = index.query(run_id(run), JudgmentQuery(judge=["a"])).rows
    assert len(rows) == 4 and [r.label for r in rows if r.item_id == "i2"] == ["yes"]


def test_latest_wins_within_a_large_file_read_in_parallel(tmp_path: Path) -> None:
    """Far apart lines of one key, in a file DuckDB scans with several threads."""
    rows = [item(f"i{n}", "a", "no") for n in range(30_000)]
    rows.insert(5, item("i29999", "a", "first"))
    rows.append(item("i5", "a", "last"))
    run = write_items(tmp_path / "run", [], rows)
    with ViewIndex([tmp_path]) as ix:
        page = ix.query(run_id(run), JudgmentQuery(search="i29999", page_size=10))
        assert [r.label for r in page.rows if r.item_id == "i29999"] == ["no"]
        last = ix.query(run_id(run), JudgmentQuery(label=["last"]))
        assert [r.item_id for r in last.rows] == ["i5"] and last.total == 1
        assert ix.query(run_id(run), JudgmentQuery()).total == 30_000


def test_torn_last_line_is_skipped_until_completed(tmp_path: Path, index: ViewIndex) -> None:
    run = items_run(tmp_path)
    line = ItemJudgmentRecord.model_validate(item("i3", "b", "no")).model_dump_json()
    with (run / "item_judgments.jsonl").open("a") as fh:
        fh.write(line[:25])
    first = index.query(run_id(run), JudgmentQuery())
    assert first.total == 7
    assert index.version(run_id(run)) == first.version  # a torn tail is no change
    with (run / "item_judgments.jsonl").open("a") as fh:
        fh.write(line[25:] + "\n")
    after = index.query(run_id(run), JudgmentQuery(judge=["b"]))
    assert after.total == 4 and after.version > first.version
    assert ("i3", "b") in [(r.item_id, r.judge_id) for r in after.rows]


def test_appended_lines_appear_with_a_new_version(tmp_path: Path, index: ViewIndex) -> None:
    run = items_run(tmp_path)
    rid = run_id(run)
    v1 = index.query(rid, JudgmentQuery()).version
    assert index.version(rid) == v1  # nothing changed: same version
    append(run / "item_judgments.jsonl", ItemJudgmentRecord, [item("i3", "b", "yes")])
    assert index.version(rid) == v1 + 1
    page = index.query(rid, JudgmentQuery(judge=["b"]))
    assert page.total == 4 and page.version == v1 + 1
    assert q(index, run, outcome="wrong", judge=["b"]) == [("i2", "b"), ("i3", "b")]


def test_a_run_being_written_is_followed_from_copies_of_complete_lines(
    tmp_path: Path, index: ViewIndex
) -> None:
    """While a writer holds the lock the file may grow mid-read: only the complete lines
    up to the last newline are copied and read, each time from where the last read ended."""
    run = items_run(tmp_path)
    rid = run_id(run)
    path = run / "item_judgments.jsonl"
    line = ItemJudgmentRecord.model_validate(item("i3", "b", "yes")).model_dump_json()
    with WriterLock(run, command="assay run", fix="wait"):
        with path.open("a") as fh:
            fh.write(line[:10])  # the writer is mid-line at the first read
        first = index.query(rid, JudgmentQuery())
        assert first.total == 7
        with path.open("a") as fh:
            fh.write(line[10:] + "\n")
            fh.write(ItemJudgmentRecord.model_validate(item("i3", "a", "yes")).model_dump_json())
            fh.write("\n")
        page = index.query(rid, JudgmentQuery(sort="item_id"))
    labels = {(r.item_id, r.judge_id): r.label for r in page.rows}
    assert page.total == 8 and labels[("i3", "b")] == "yes" and labels[("i3", "a")] == "yes"
    assert page.version == first.version + 1
    assert list(tmp_path.glob("**/*item_judgments.jsonl")) == [path]  # no copy left behind


def test_a_rewritten_shorter_file_is_read_again(tmp_path: Path, index: ViewIndex) -> None:
    run = items_run(tmp_path)
    assert index.query(run_id(run), JudgmentQuery()).total == 7
    path = run / "item_judgments.jsonl"
    tmp = path.with_suffix(".new")
    tmp.write_text("".join(path.read_text().splitlines(keepends=True)[:2]))
    tmp.replace(path)  # a new inode, shorter: as reparse rewrites the file
    assert q(index, run) == [("i0", "a"), ("i1", "a")]


def test_adjudicated_label_overrides_the_dataset_gold(tmp_path: Path, index: ViewIndex) -> None:
    run = items_run(tmp_path)
    rid = run_id(run)
    v1 = index.query(rid, JudgmentQuery()).version
    append_adjudication(run, dataset="d", item_id="i1", annotator="ann", label="Yes")
    page = index.query(rid, JudgmentQuery(sort="item_id"))
    assert page.version > v1
    by = {(r.item_id, r.judge_id): r for r in page.rows}
    assert by[("i1", "a")].gold == "Yes" and by[("i1", "a")].gold_source == "adjudicated"
    assert by[("i1", "a")].outcome == "correct" and by[("i1", "b")].outcome == "wrong"
    assert by[("i0", "a")].gold_source == "dataset"


def test_lines_without_optional_fields_or_only_nulls_load(tmp_path: Path, index: ViewIndex) -> None:
    run = tmp_path / "old"
    run.mkdir()
    (run / "manifest.json").write_text("{}")
    lines = [
        {"dataset": "d", "item_id": "i0", "judge_id": "a", "status": "ok", "label": "x"},
        {"dataset": "d", "item_id": "i1", "judge_id": "a", "status": "ok", "label": None,
         "usage": None, "model": None, "score": None, "recorded_at": None},
    ]  # fmt: skip
    (run / "item_judgments.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    rows = index.query(run_id(run), JudgmentQuery()).rows
    assert [(r.item_id, r.tokens, r.latency_s, r.attempts) for r in rows] == [
        ("i0", None, 0.0, 0),
        ("i1", None, 0.0, 0),
    ]


@pytest.mark.parametrize("first_read", [False, True])
@pytest.mark.parametrize(
    ("bad", "said"),
    [
        ('"attempts":"many"', "field 'attempts': corrupt record"),
        ("{not json", "corrupt record: not valid JSON"),
    ],
)
def test_a_corrupt_line_is_one_error_naming_file_line_and_field(
    tmp_path: Path, index: ViewIndex, first_read: bool, bad: str, said: str
) -> None:
    """Line 9 of the file, whether read whole or as lines appended after a read."""
    run = items_run(tmp_path)
    if first_read:
        index.query(run_id(run), JudgmentQuery())
    good = ItemJudgmentRecord.model_validate(item("i3", "b", "no")).model_dump_json()
    line = good.replace('"attempts":0', bad) if bad.startswith('"') else bad
    with (run / "item_judgments.jsonl").open("a") as fh:
        fh.write(f"{good}\n{line}\n")
    with pytest.raises(RunError) as err:
        index.query(run_id(run), JudgmentQuery())
    message = str(err.value)
    assert "\n" not in message and f"item_judgments.jsonl:9: {said}" in message


def test_facets_list_what_the_run_holds(tmp_path: Path, index: ViewIndex) -> None:
    facets = index.facets(run_id(items_run(tmp_path)))
    assert facets.judges == ["a", "b"] and facets.statuses == ["ok", "parse_error"]
    assert facets.labels == ["Yes", "no", "yes"] and facets.datasets == ["d"]
    assert facets.units == ["item"]


def test_unknown_run_is_a_key_error(tmp_path: Path, index: ViewIndex) -> None:
    items_run(tmp_path)
    for rid in ("0123456789ab", "x; DROP TABLE labelmap", "../run"):
        with pytest.raises(KeyError):
            index.query(rid, JudgmentQuery())


def test_concurrent_queries_from_threads(tmp_path: Path, index: ViewIndex) -> None:
    runs = [items_run(tmp_path, f"run{n}") for n in range(3)]
    errors: list[BaseException] = []

    def work(run: Path) -> None:
        try:
            for sort in SORTS:
                assert index.query(run_id(run), JudgmentQuery(sort=sort)).total == 7
        except BaseException as exc:  # noqa: BLE001 - reported below, in the test's thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(r,)) for r in runs * 2]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_close_removes_the_index_folder(tmp_path: Path) -> None:
    ix = ViewIndex([tmp_path])
    folder = ix._dir
    ix.query(run_id(items_run(tmp_path)), JudgmentQuery())
    assert folder.is_dir()
    ix.close()
    assert not folder.exists()
    with pytest.raises(RuntimeError, match="closed"):
        ix.query(run_id(tmp_path / "run"), JudgmentQuery())
