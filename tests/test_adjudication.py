"""The labels file: appends (whole lines, under the file's own lock, `previous` filled),
readers (latest wins, torn last line skipped, corrupt line named), and the refusals."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _item_runs import gold_items, labelled, write_item_run

from assay.adjudication import (
    LABELS_FILE,
    AdjudicationError,
    adjudication_history,
    append_adjudication,
    read_adjudications,
)
from assay.errors import RunError


def _run(tmp_path: Path) -> Path:
    """Two single-response items, one pairwise item, and one item only judged (no row)."""
    items = [*gold_items(["yes", "no"]), {"item_id": "p-0", "pairwise": True}]
    judgments = [
        *labelled("j1", ["yes", "yes"]),
        {"item_id": "p-0", "judge_id": "j1", "order": "ab", "label": "A", "preference": "A"},
        {"item_id": "late", "judge_id": "j1", "label": "no"},
        {"item_id": "late-p", "judge_id": "j1", "order": "ba", "label": "A", "preference": "B"},
    ]
    return write_item_run(tmp_path / "run", "r", items, judgments)


def test_latest_wins_and_previous_is_the_value_replaced(tmp_path: Path) -> None:
    run = _run(tmp_path)
    records_before = {p.name: p.read_bytes() for p in run.iterdir()}
    first = append_adjudication(run, dataset="d", item_id="item-1", annotator="ann", label="yes")
    second = append_adjudication(
        run, dataset="d", item_id="item-1", annotator="bob", label="maybe", note=" typo "
    )
    other = append_adjudication(run, dataset="d", item_id="item-0", annotator="ann", label="no")
    assert first.previous is None and second.previous == "yes" and other.previous is None
    assert second.note == "typo" and second.at.tzinfo is not None
    latest = read_adjudications(run)
    assert latest[("d", "item-1")].label == "maybe"
    assert latest[("d", "item-1")].annotator == "bob"
    assert latest[("d", "item-0")].label == "no"
    history = adjudication_history(run, "d", "item-1")
    assert [h.label for h in history] == ["yes", "maybe"]
    assert adjudication_history(run, "d", "item-9") == []
    lines = (run / LABELS_FILE).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3 and json.loads(lines[1])["previous"] == "yes"
    # the record files are untouched
    assert {n: (run / n).read_bytes() for n in records_before} == records_before


def test_pairwise_items_take_a_preference(tmp_path: Path) -> None:
    run = _run(tmp_path)
    a = append_adjudication(run, dataset="d", item_id="p-0", annotator="x", preference="b")
    tie = append_adjudication(run, dataset="d", item_id="p-0", annotator="x", preference="tie")
    assert (a.preference, a.label, tie.previous) == ("B", None, "B")
    # an item without an items.jsonl row is known from its judgments (order -> pairwise)
    late = append_adjudication(run, dataset="d", item_id="late-p", annotator="x", preference="A")
    assert late.preference == "A"
    assert append_adjudication(run, dataset="d", item_id="late", annotator="x", label="no").label


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"item_id": "p-0", "label": "yes"}, "a pairwise item takes a preference"),
        ({"item_id": "p-0", "preference": "C"}, "must be A, B or tie, not 'C'"),
        ({"item_id": "item-0", "preference": "A"}, "a single-response item takes a label"),
        ({"item_id": "item-0"}, "field 'label': must not be empty"),
        ({"item_id": "item-0", "label": "a\nb"}, "field 'label': must be a single line"),
        ({"item_id": "nope", "label": "yes"}, "the run holds no item 'nope' in dataset 'd'"),
        ({"item_id": "item-0", "label": "yes", "annotator": "  "}, "field 'annotator'"),
        ({"item_id": "item-0", "label": "yes", "note": "x" * 2001}, "field 'note': is 2001"),
    ],
)
def test_refusals_are_one_line_and_write_nothing(
    tmp_path: Path, kwargs: dict[str, str], expected: str
) -> None:
    run = _run(tmp_path)
    args = {"dataset": "d", "annotator": "ann", **kwargs}
    with pytest.raises(AdjudicationError) as err:
        append_adjudication(run, **args)
    assert expected in str(err.value) and "\n" not in str(err.value)
    assert not (run / LABELS_FILE).exists() or not (run / LABELS_FILE).read_text()


def test_unknown_dataset_and_missing_run_are_refused(tmp_path: Path) -> None:
    run = _run(tmp_path)
    with pytest.raises(AdjudicationError, match="in dataset 'other'"):
        append_adjudication(run, dataset="other", item_id="item-0", annotator="a", label="x")
    with pytest.raises(AdjudicationError, match="not a run directory"):
        append_adjudication(tmp_path / "gone", dataset="d", item_id="i", annotator="a", label="x")


def test_no_labels_file_reads_empty(tmp_path: Path) -> None:
    run = _run(tmp_path)
    assert read_adjudications(run) == {}
    assert adjudication_history(run, "d", "item-0") == []


def test_a_torn_last_line_is_skipped_then_cut_by_the_next_append(tmp_path: Path) -> None:
    run = _run(tmp_path)
    append_adjudication(run, dataset="d", item_id="item-0", annotator="a", label="no")
    with (run / LABELS_FILE).open("a", encoding="utf-8") as fh:
        fh.write('{"dataset": "d", "item_id": "item-0", "label": "ye')  # killed mid-line
    assert read_adjudications(run)[("d", "item-0")].label == "no"
    entry = append_adjudication(run, dataset="d", item_id="item-0", annotator="b", label="yes")
    assert entry.previous == "no"
    lines = (run / LABELS_FILE).read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and all(json.loads(line) for line in lines)
    assert read_adjudications(run)[("d", "item-0")].label == "yes"


def test_a_corrupt_line_names_file_and_line(tmp_path: Path) -> None:
    run = _run(tmp_path)
    append_adjudication(run, dataset="d", item_id="item-0", annotator="a", label="no")
    with (run / LABELS_FILE).open("a", encoding="utf-8") as fh:
        fh.write(
            '{"dataset": "d", "item_id": "item-1", "annotator": "a", "at": "2026-01-01T00:00Z"}\n'
        )  # neither label nor preference
        fh.write("{not json\n")
    with pytest.raises(RunError) as err:
        read_adjudications(run)
    message = str(err.value)
    assert f"{LABELS_FILE}:2:" in message and "exactly one of label and preference" in message


_WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from assay.adjudication import append_adjudication
    run, who, n = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    for i in range(n):
        append_adjudication(run, dataset="d", item_id="item-0", annotator=who,
                            label=f"{who}-{i}", note="x" * 500)
    """
)


def test_concurrent_appends_from_two_processes_lose_nothing(tmp_path: Path) -> None:
    run = _run(tmp_path)
    n = 40
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(run), who, str(n)])
        for who in ("p1", "p2")
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    history = adjudication_history(run, "d", "item-0")
    assert len(history) == 2 * n
    assert sorted(h.label or "" for h in history) == sorted(
        f"{who}-{i}" for who in ("p1", "p2") for i in range(n)
    )
    # each entry's previous is the entry before it: no two writers read the same latest
    assert history[0].previous is None
    assert all(b.previous == a.label for a, b in zip(history, history[1:], strict=False))
