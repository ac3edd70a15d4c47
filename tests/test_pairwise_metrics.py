"""Pairwise (A vs B) metrics from verdicts in both presentation orders."""

from __future__ import annotations

import numpy as np
import pytest

from assay.metrics import bootstrap_ci, pairwise_metrics, unswap


def test_always_first_slot_judge_is_fully_inconsistent_and_biased() -> None:
    report = pairwise_metrics(["A"] * 12, ["A"] * 12, ["A"] * 6 + ["B"] * 6, n_boot=200)
    assert report.position_consistency == 0.0
    assert report.position_bias == 1.0
    assert report.n_inconsistent == 12
    assert (report.win_rate_a, report.win_rate_b, report.tie_rate) == (0.5, 0.5, 0.0)
    assert report.accuracy == 0.5


def test_always_second_slot_judge_has_bias_zero() -> None:
    report = pairwise_metrics(["B"] * 5, ["B"] * 5, n_boot=50)
    assert report.position_consistency == 0.0 and report.position_bias == 0.0
    assert report.accuracy is None and report.n_gold == 0


def test_hand_computed_mixture() -> None:
    first = ["A", "A", "B", "tie", "A"]
    swapped = ["B", "A", "A", "tie", "tie"]  # un-swapped: A, B, B, tie, tie
    gold = ["A", None, "B", "A", "tie"]
    report = pairwise_metrics(first, swapped, gold, n_boot=300, seed=4)
    # preferences over the 10 verdicts: A x4 (items 0,0,1,4-first), B x3, tie x3
    assert report.win_rate_a == pytest.approx(4 / 10)
    assert report.win_rate_b == pytest.approx(3 / 10)
    assert report.tie_rate == pytest.approx(3 / 10)
    assert report.position_consistency == pytest.approx(3 / 5)  # items 0, 2, 3 agree
    # inconsistent items 1 (slots A, A -> 2/2 first) and 4 (slots A, tie -> 1/2 first)
    assert report.n_inconsistent == 2 and report.position_bias == pytest.approx(0.75)
    # gold items 0, 2, 3, 4: hits 2/2, 2/2, 0/2, 1/2
    assert report.n_gold == 4 and report.accuracy == pytest.approx(5 / 8)
    assert (report.accuracy_lo, report.accuracy_hi) == pytest.approx(
        bootstrap_ci(np.array([1.0, 1.0, 0.0, 0.5]), n_boot=300, seed=4)
    )
    consistent = np.array([1.0, 0.0, 1.0, 1.0, 0.0])
    lo, hi = bootstrap_ci(consistent, n_boot=300, seed=4)
    assert report.position_consistency_lo is not None and report.position_consistency_hi
    assert lo <= report.position_consistency <= hi
    assert set(report.model_dump()) >= {
        "win_rate_a", "win_rate_b", "tie_rate", "position_consistency", "position_bias",
        "accuracy"}  # fmt: skip


def test_consistent_judge_and_no_ci() -> None:
    report = pairwise_metrics(["A", "B"], ["B", "A"], ["A", "B"], n_boot=0)
    assert report.position_consistency == 1.0 and report.position_bias is None
    assert report.accuracy == 1.0 and report.win_rate_a_lo is None


def test_unswap_and_bad_verdicts() -> None:
    assert [unswap(v) for v in ("A", "B", "tie")] == ["B", "A", "tie"]
    with pytest.raises(ValueError, match="one of"):
        pairwise_metrics(["A"], ["C"])
    with pytest.raises(ValueError, match="same"):
        pairwise_metrics(["A"], ["A", "B"])
