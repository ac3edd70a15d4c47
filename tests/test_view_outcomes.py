"""Gold and outcome of each unit in the view index (assay.view.index._outcome): items
against normalised gold labels, pairwise items by preference, ForceBench pairs by the
monotonicity rule of the MVR metric, claims supported against the rest."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _view_runs import item, pair, write_claims, write_items, write_pairs

from assay.view.index import JudgmentQuery, ViewIndex, run_id


@pytest.fixture
def index(tmp_path: Path) -> Iterator[ViewIndex]:
    with ViewIndex([tmp_path]) as ix:
        yield ix


def q(ix: ViewIndex, run: Path, **query: Any) -> list[tuple[str, str]]:
    """(item_id, judge) of every matching row, in the query's order."""
    page = ix.query(run_id(run), JudgmentQuery(page_size=1000, **query))
    return [(r.item_id, r.judge_id) for r in page.rows]


def test_no_gold_outcome_and_a_label_of_no_gold(tmp_path: Path, index: ViewIndex) -> None:
    run = write_items(tmp_path / "run", [{"item_id": "i0"}], [item("i0", "a", "yes")])
    assert q(index, run, outcome="no_gold") == [("i0", "a")]
    assert index.query(run_id(run), JudgmentQuery()).rows[0].gold is None


def test_gold_arriving_later_changes_the_outcome(tmp_path: Path, index: ViewIndex) -> None:
    run = write_items(tmp_path / "run", [], [item("i0", "a", "yes")])
    assert q(index, run, outcome="no_gold") == [("i0", "a")]
    with (run / "items.jsonl").open("a") as fh:
        fh.write(json.dumps({"dataset": "d", "item_id": "i0", "gold_label": "YES"}) + "\n")
    assert q(index, run, outcome="correct") == [("i0", "a")]


def test_pairwise_gold_preference_and_position_inconsistency(
    tmp_path: Path, index: ViewIndex
) -> None:
    items = [{"item_id": "p0", "pairwise": True, "gold_preference": "A"},
             {"item_id": "p1", "pairwise": True, "gold_preference": "B"}]  # fmt: skip
    judged = [
        item("p0", "a", "a", order="ab", preference="A"),
        item("p0", "a", "b", order="ba", preference="A"),
        item("p1", "a", "a", order="ab", preference="A"),
        item("p1", "a", "a", order="ba", preference="B"),
        item("p1", "b", "b", order="ab", preference="B"),
    ]
    run = write_items(tmp_path / "run", items, judged)
    rows = index.query(run_id(run), JudgmentQuery()).rows
    outcome = {(r.item_id, r.variant, r.judge_id): r.outcome for r in rows}
    assert outcome[("p0", "ab", "a")] == "correct" and outcome[("p1", "ab", "a")] == "wrong"
    assert outcome[("p1", "ba", "a")] == "correct" and outcome[("p1", "ab", "b")] == "correct"
    assert {r.gold for r in rows if r.item_id == "p1"} == {"B"}
    assert set(q(index, run, inconsistent=True)) == {("p1", "a")}
    assert len(q(index, run, inconsistent=True)) == 2  # both orders of that judge
    assert set(q(index, run, disagreeing=True)) == {("p1", "a"), ("p1", "b")}


def test_forcebench_pairs_are_right_when_the_calibrated_member_scores_higher(
    tmp_path: Path, index: ViewIndex
) -> None:
    rows = [*pair("ok", "a", 0.9, 0.2), *pair("tie", "a", 0.5, 0.5), *pair("flip", "a", 0.1, 0.8)]
    rows += [*pair("failed", "a", 0.9, None), pair("half", "a", 0.9, 0.1)[0]]
    run = write_pairs(tmp_path / "fb", rows)
    page = index.query(run_id(run), JudgmentQuery())
    outcome = {(r.item_id, r.variant): r.outcome for r in page.rows}
    assert outcome[("ok", "calibrated")] == outcome[("ok", "raised")] == "correct"
    for pid in ("tie", "flip", "failed"):  # MVR: a tie and a failed member are violations
        assert outcome[(pid, "calibrated")] == outcome[(pid, "raised")] == "wrong"
    assert outcome[("half", "calibrated")] == "wrong"  # its other member is missing
    assert {r.unit for r in page.rows} == {"pair"} and page.total == 9


def test_claims_are_scored_supported_against_the_rest(tmp_path: Path, index: ViewIndex) -> None:
    rows = [
        {"answer_id": "x", "claim_id": "c1", "verifier_id": "v", "label": "supported",
         "gold_label": "supported"},
        {"answer_id": "x", "claim_id": "c2", "verifier_id": "v", "label": "contradicted",
         "gold_label": "unsupported"},
        {"answer_id": "x", "claim_id": "c3", "verifier_id": "v", "label": "supported",
         "gold_label": "contradicted"},
        {"answer_id": "y:z", "claim_id": "c1", "verifier_id": "v", "label": "supported"},
        {"answer_id": "y", "claim_id": "z:c1", "verifier_id": "v", "label": "unsupported"},
    ]  # fmt: skip
    run = write_claims(tmp_path / "fact", rows)
    page = index.query(run_id(run), JudgmentQuery(sort="item_id"))
    got = [(r.item_id, r.outcome, r.answer_id, r.claim_id) for r in page.rows]
    assert got == [
        ("x:c1", "correct", "x", "c1"),
        ("x:c2", "correct", "x", "c2"),
        ("x:c3", "wrong", "x", "c3"),
        ("y:z:c1", "no_gold", "y", "z:c1"),
        ("y:z:c1", "no_gold", "y:z", "c1"),
    ]  # two claims, one shown id: both kept (keys hold answer and claim ids apart)
    assert {r.unit for r in page.rows} == {"claim"} and page.rows[0].judge_id == "v"
