"""item_metrics on hand-built records: coverage, failures, the vote of samples and
ordinal labels, checked by hand and against scikit-learn."""

from __future__ import annotations

import pytest
from sklearn.metrics import cohen_kappa_score

from assay.core.outcomes import Status
from assay.core.records import ItemJudgmentRecord, ItemRecord
from assay.metrics import item_metrics


def _items(gold: list[str]) -> list[ItemRecord]:
    return [ItemRecord(dataset="d", item_id=f"i{k}", gold_label=g) for k, g in enumerate(gold)]


def _rec(
    item: int, judge: str, label: str | None, status: Status = Status.OK
) -> ItemJudgmentRecord:
    return ItemJudgmentRecord(
        dataset="d", item_id=f"i{item}", judge_id=judge, status=status, label=label
    )


def _rows(items: list[ItemRecord], recs: list[ItemJudgmentRecord]) -> dict[str, dict]:
    report = item_metrics(items, recs, n_boot=0)
    return {row["judge_id"]: row for row in report.rows_flat()}


def test_a_failed_judgment_lowers_coverage_not_accuracy() -> None:
    items = _items(["yes", "no", "yes", "no"])
    recs = [_rec(0, "j", "yes"), _rec(1, "j", "no"), _rec(2, "j", "no")]
    recs.append(_rec(3, "j", None, Status.PARSE_ERROR))
    row = _rows(items, recs)["j"]
    assert row["n_items"] == 4 and row["n_scored"] == 3 and row["coverage"] == 0.75
    assert row["accuracy"] == pytest.approx(2 / 3) and row["n_gold"] == 3


def test_samples_vote_by_majority_with_ties_to_the_first_sorted_label() -> None:
    items = _items(["yes", "no", "yes"])
    votes = {0: ["yes", "yes", "no"], 1: ["no", "yes", "no"], 2: ["yes", "no", None]}
    recs = [
        _rec(i, f"j#{k}", label, Status.OK if label else Status.API_ERROR)
        for i, labels in votes.items()
        for k, label in enumerate(labels)
    ]
    rows = _rows(items, recs)
    majority = rows["j#majority"]
    # item 2: one yes, one no -> "no" sorts first
    assert majority["accuracy"] == pytest.approx(2 / 3) and majority["samples"] == 3
    assert majority["modal_agreement"] == pytest.approx((2 / 3 + 2 / 3 + 1 / 2) / 3)


def test_integer_labels_are_ordinal_and_get_quadratic_kappa() -> None:
    gold = ["1", "2", "3", "4", "5", "3", "2"]
    pred = ["1", "3", "3", "5", "4", "2", "2"]
    items = _items(gold)
    row = _rows(items, [_rec(i, "j", p) for i, p in enumerate(pred)])["j"]
    expected = cohen_kappa_score(gold, pred, weights="quadratic", labels=["1", "2", "3", "4", "5"])
    assert row["quadratic_kappa"] == pytest.approx(expected)
    assert row["cohen_kappa"] == pytest.approx(cohen_kappa_score(gold, pred))


def test_gold_labels_are_normalised_like_judge_labels() -> None:
    items = _items(["Fully Supported", "unsupported"])
    recs = [_rec(0, "j", "fully_supported"), _rec(1, "j", "unsupported")]
    assert _rows(items, recs)["j"]["accuracy"] == 1.0
