"""Paired comparison of judges: shared bootstrap draws, exact McNemar, Holm, intersection."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from assay.metrics import bootstrap_ci, mcnemar_exact, outcome_matrix, paired_compare
from assay.metrics._bootstrap import bootstrap_mean_cis
from assay.metrics._paired import bootstrap_p_value, holm

KEYS = ["metric", "judge_a", "judge_b", "n", "value_a", "value_b", "diff", "ci_low",
        "ci_high", "test", "p_value", "p_holm"]  # fmt: skip


def test_mcnemar_hand_computed() -> None:
    # 10 items: a right & b wrong on 6, b right & a wrong on 1 -> 2 * P(X <= 1 | 7, 1/2)
    a = np.array([1, 1, 1, 1, 1, 1, 0, 1, 0, 1], dtype=float)
    b = np.array([0, 0, 0, 0, 0, 0, 1, 1, 0, 1], dtype=float)
    assert mcnemar_exact(a, b) == pytest.approx(2 * (1 + 7) / 2**7)
    assert mcnemar_exact(a, a) == 1.0


@pytest.mark.parametrize("seed", range(8))
def test_mcnemar_matches_statsmodels_and_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, 60).astype(float)
    b = np.where(rng.random(60) < 0.3, 1 - a, a)
    table = [[np.sum((a == 1) & (b == 1)), np.sum((a == 1) & (b == 0))],
             [np.sum((a == 0) & (b == 1)), np.sum((a == 0) & (b == 0))]]  # fmt: skip
    reference = mcnemar(table, exact=True).pvalue
    discordant = int(table[0][1] + table[1][0])
    assert mcnemar_exact(a, b) == pytest.approx(reference, rel=1e-12)
    if discordant:
        assert reference == pytest.approx(binomtest(int(table[0][1]), discordant).pvalue)


def test_holm_hand_computed_and_statsmodels() -> None:
    p = [0.01, 0.04, 0.03, 0.5]
    # sorted 0.01, 0.03, 0.04, 0.5 -> x4, x3, x2, x1 with running max
    assert holm(p) == pytest.approx([0.04, 0.09, 0.09, 0.5])
    rng = np.random.default_rng(3)
    q = rng.random(9).tolist()
    assert holm(q) == pytest.approx(multipletests(q, method="holm")[1].tolist())


def test_bootstrap_p_value_counts_far_side() -> None:
    diffs = np.array([0.5, 0.2, -0.1, 0.3])  # one of four at or below 0
    assert bootstrap_p_value(diffs) == pytest.approx(2 * (1 + 1) / 5)
    assert bootstrap_p_value(np.zeros(9)) == 1.0


def test_binary_report_fields_and_ci_from_shared_draws() -> None:
    rng = np.random.default_rng(0)
    wide = pd.DataFrame({j: rng.integers(0, 2, 150) for j in ("j1", "j2", "j3")}).astype(float)
    report = paired_compare(wide, metric="accuracy", n_boot=400, seed=7)
    frame = report.to_frame()
    assert list(frame.columns) == KEYS
    assert [(r.judge_a, r.judge_b) for r in report.rows] == [
        ("j1", "j2"), ("j1", "j3"), ("j2", "j3")]  # fmt: skip
    row = report.rows[0]
    assert row.test == "mcnemar-exact" and row.n == 150
    assert row.diff == pytest.approx(wide.j1.mean() - wide.j2.mean())
    assert row.p_value == pytest.approx(mcnemar_exact(wide.j1.to_numpy(), wide.j2.to_numpy()))
    # the CI of the difference is that of the per-item difference on the same draws
    expected = bootstrap_ci((wide.j1 - wide.j2).to_numpy(), n_boot=400, seed=7)
    assert (row.ci_low, row.ci_high) == pytest.approx(expected)
    # and each judge is resampled on the draws that give its own CI
    lo, hi = bootstrap_mean_cis(wide.to_numpy(), n_boot=400, seed=7)
    assert lo[0] <= row.value_a <= hi[0]
    assert frame.p_holm.tolist() == pytest.approx(holm(frame.p_value.tolist()))


def test_reference_intersection_long_frame_and_scores() -> None:
    rng = np.random.default_rng(1)
    long = pd.DataFrame(
        [{"item_id": f"i{i}", "judge": j, "value": float(rng.normal(0.1 * k, 1.0))}
         for i in range(80) for k, j in enumerate(("base", "v2", "v3"))
         if not (j == "v3" and i < 20)]
    )  # fmt: skip
    report = paired_compare(long, metric="fs", reference="base", n_boot=300)
    by_judge = {r.judge_a: r for r in report.rows}
    assert set(by_judge) == {"v2", "v3"} and all(r.judge_b == "base" for r in report.rows)
    assert by_judge["v2"].n == 80 and by_judge["v3"].n == 60
    assert all(r.test == "paired-bootstrap" for r in report.rows)
    wide = outcome_matrix(long).dropna()
    v3 = by_judge["v3"]
    assert v3.diff == pytest.approx((wide.v3 - wide.base).mean())
    assert v3.ci_low <= v3.diff <= v3.ci_high


def test_clear_difference_is_significant_and_holm_spans_metrics() -> None:
    n = 400
    strong = np.ones(n)
    strong[:40] = 0
    weak = np.zeros(n)
    weak[:200] = 1
    per_metric = {
        "accuracy": pd.DataFrame({"strong": strong, "weak": weak}),
        "score": pd.DataFrame({"strong": strong + 0.5, "weak": weak}),
    }
    report = paired_compare(per_metric, n_boot=500, seed=1)
    acc, score = report.rows
    assert acc.test == "mcnemar-exact" and score.test == "paired-bootstrap"
    assert acc.p_value < 1e-10 and acc.ci_low > 0
    assert score.p_value == pytest.approx(2 / 501)
    assert [r.p_holm for r in report.rows] == pytest.approx(holm([acc.p_value, score.p_value]))


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="reference"):
        paired_compare(pd.DataFrame({"a": [1.0], "b": [0.0]}), reference="zz")
    with pytest.raises(ValueError, match="no item"):
        paired_compare(pd.DataFrame({"a": [1.0, np.nan], "b": [np.nan, 0.0]}))
    dup = pd.DataFrame({"item_id": ["x", "x"], "judge": ["a", "a"], "value": [1, 0]})
    with pytest.raises(ValueError, match="more than one outcome"):
        outcome_matrix(dup)
