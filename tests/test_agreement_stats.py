"""Agreement statistics: hand-computed cases, library cross-checks, undefined cases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn import metrics as skm

from assay.metrics import (
    agreement_with_gold,
    agreement_with_gold_scores,
    confusion_matrix,
    item_bootstrap_ci,
    kappa_matrix,
    rater_agreement,
    self_consistency,
)
from assay.metrics._agreement_stats import confusion_stack, confusion_statistics
from assay.metrics._score_agreement import (
    batched_mae,
    batched_pearson,
    resampled_ranks,
)
from assay.metrics._self_consistency import entropies, label_counts, modal_shares

PRED = ["a", "b", "b", "c", "a", None]
GOLD = ["a", "b", "c", "c", "b", "a"]  # the last item has no prediction: left out


def test_categorical_hand_computed() -> None:
    r = agreement_with_gold(PRED, GOLD, order=["a", "b", "c"])
    # confusion [gold][pred]: a:(1,0,0) b:(1,1,0) c:(0,1,1); 3 of 5 correct
    assert r.n == 5 and r.confusion == [[1, 0, 0], [1, 1, 0], [0, 1, 1]]
    assert r.accuracy == pytest.approx(3 / 5)
    # recalls a 1/1, b 1/2, c 1/2
    assert r.balanced_accuracy == pytest.approx((1 + 0.5 + 0.5) / 3)
    # F1 = 2TP / (2TP + FP + FN): a 2/3, b 2/4, c 2/3
    assert r.macro_f1 == pytest.approx((2 / 3 + 1 / 2 + 2 / 3) / 3)
    # p_o = 3/5; gold marginals (1,2,2), pred (2,2,1): p_e = (2 + 4 + 2) / 25
    assert r.cohen_kappa == pytest.approx((0.6 - 8 / 25) / (1 - 8 / 25))
    # weights (i-j)^2: observed 1 + 1 = 2; expected sum r_i c_j (i-j)^2 / 5 = 32/5
    assert r.quadratic_kappa == pytest.approx(1 - 2 / 6.4)
    frame = confusion_matrix(PRED, GOLD)
    assert frame.loc["c", "b"] == 1 and frame.loc["b", "c"] == 0
    assert agreement_with_gold(PRED, GOLD).quadratic_kappa is None  # nominal: no order


def test_categorical_undefined_and_bad_input() -> None:
    one = agreement_with_gold(["x", "x"], ["x", "x"], order=["x", "y"])
    assert one.accuracy == 1.0 and one.cohen_kappa is None and one.quadratic_kappa is None
    empty = agreement_with_gold([], [], n_boot=10)
    assert empty.n == 0 and empty.accuracy is None and empty.macro_f1 is None
    assert empty.ci["accuracy"] is None
    with pytest.raises(ValueError, match="not in order"):
        agreement_with_gold(["a"], ["z"], order=["a", "b"])
    with pytest.raises(ValueError, match="one length"):
        agreement_with_gold(["a"], ["a", "b"])


@pytest.mark.filterwarnings("ignore:y_pred contains classes not in y_true")
@pytest.mark.parametrize("seed", range(6))
def test_confusion_statistics_match_sklearn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k, b, n = 4, 20, 30
    pred = rng.integers(0, k, (b, n))
    gold = np.minimum(rng.integers(0, k - 1, (b, n)), pred + 1)  # class 3 often absent in gold
    mine = confusion_statistics(confusion_stack(pred, gold, k))
    labels = np.arange(k)
    for row in range(b):
        p, g = pred[row], gold[row]
        ref = {
            "accuracy": skm.accuracy_score(g, p),
            "balanced_accuracy": skm.balanced_accuracy_score(g, p),
            "macro_f1": skm.f1_score(g, p, average="macro", zero_division=0.0),
            "cohen_kappa": skm.cohen_kappa_score(g, p, labels=labels),
            "quadratic_kappa": skm.cohen_kappa_score(g, p, labels=labels, weights="quadratic"),
        }
        for name, value in ref.items():
            assert abs(mine[name][row] - value) < 1e-12, (name, row)


def test_numeric_hand_computed() -> None:
    r = agreement_with_gold_scores([1, 2, 3, 4, None], [1, 3, 2, 5, 1])
    assert r.n == 4
    assert r.mae == pytest.approx((0 + 1 + 1 + 1) / 4)
    # gold ranks (1,3,2,4): sum d^2 = 2, rho = 1 - 6*2 / (4*15)
    assert r.spearman == pytest.approx(0.8)
    # 5 concordant, 1 discordant pair of 6
    assert r.kendall_tau == pytest.approx(4 / 6)
    # deviations (-1.5,-.5,.5,1.5), (-1.75,.25,-.75,2.25): 5.5 / sqrt(5 * 8.75)
    assert r.pearson == pytest.approx(5.5 / np.sqrt(5 * 8.75))


def test_numeric_undefined() -> None:
    constant = agreement_with_gold_scores([2, 2, 2], [1, 2, 3], n_boot=20)
    assert constant.pearson is None and constant.spearman is None
    assert constant.kendall_tau is None and constant.mae == pytest.approx(2 / 3)
    assert constant.ci["pearson"] is None
    empty = agreement_with_gold_scores([], [])
    assert empty.n == 0 and empty.mae is None and empty.pearson is None
    assert agreement_with_gold_scores([1.0], [2.0]).spearman is None
    some = agreement_with_gold_scores([1, 2, 3], [1, 3, 2], n_boot=20, ci_for=["mae"])
    assert set(some.ci) == {"mae"}
    with pytest.raises(ValueError, match="unknown statistics"):
        agreement_with_gold_scores([1, 2], [1, 2], ci_for=["r2"])


@pytest.mark.parametrize("seed", range(4))
def test_batched_numeric_match_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    s = rng.integers(1, 6, (15, 25)).astype(np.float64)  # Likert: many ties
    g = rng.normal(size=(15, 25))
    pearson, mae = batched_pearson(s, g), batched_mae(s, g)
    for row in range(15):
        assert abs(pearson[row] - stats.pearsonr(s[row], g[row]).statistic) < 1e-12
        assert abs(mae[row] - np.abs(s[row] - g[row]).mean()) < 1e-12
    idx = rng.integers(0, 25, (15, 25))
    codes = np.unique(s[0], return_inverse=True)[1].astype(np.int64)
    assert np.array_equal(resampled_ranks(codes, idx), stats.rankdata(s[0][idx], axis=-1))
    point = agreement_with_gold_scores(s[0], g[0])
    assert point.kendall_tau == pytest.approx(stats.kendalltau(s[0], g[0]).statistic)


RATINGS = pd.DataFrame({"r1": ["a", "b", "a"], "r2": ["a", "b", "b"]})


def test_raters_hand_computed() -> None:
    r = rater_agreement(RATINGS)
    # Fleiss: P_i = 1, 1, 0 -> P = 2/3; p_a = p_b = 1/2 -> P_e = 1/2; (2/3 - 1/2) / (1/2)
    assert r.fleiss_kappa == pytest.approx(1 / 3)
    # Krippendorff: o_ab + o_ba = 2 of n = 6 values: D_o = 1/3; D_e = 2*3*3 / (6*5) = 0.6
    assert r.krippendorff_alpha == pytest.approx(1 - (1 / 3) / 0.6)
    matrix = kappa_matrix(RATINGS)
    # p_o = 2/3; r1 (a2,b1), r2 (a1,b2): p_e = 4/9 -> (2/3 - 4/9) / (5/9)
    assert (
        matrix.loc["r1", "r2"] == pytest.approx(0.4)
        and matrix.loc["r2", "r1"] == matrix.loc["r1", "r2"]
    )
    assert matrix.loc["r1", "r1"] == 1.0 and str(matrix.dtypes["r1"]) == "Float64"


def test_raters_levels_missing_and_undefined() -> None:
    import krippendorff

    rng = np.random.default_rng(3)
    data = rng.integers(0, 4, (30, 3)).astype(np.float64)
    data[rng.random(data.shape) < 0.15] = np.nan
    frame = pd.DataFrame(data, columns=["j1", "j2", "h1"])
    for level in ("nominal", "ordinal", "interval"):
        got = rater_agreement(frame, level=level, order=[0.0, 1.0, 2.0, 3.0]).krippendorff_alpha
        want = krippendorff.alpha(
            reliability_data=data.T,
            level_of_measurement=level,
            value_domain=None if level == "interval" else [0.0, 1.0, 2.0, 3.0],
        )
        assert got == pytest.approx(want, abs=1e-12), level
    r = rater_agreement(frame, level="nominal")
    assert r.n_complete == int((~np.isnan(data).any(axis=1)).sum()) and r.fleiss_kappa is not None
    assert rater_agreement(frame, level="interval").fleiss_kappa is None
    same = rater_agreement([["x", "x"], ["x", "x"]])
    assert same.krippendorff_alpha is None and same.fleiss_kappa is None
    assert kappa_matrix([["x", "x"], ["x", "x"]]).isna().all().all()
    with pytest.raises(ValueError, match="order"):
        kappa_matrix(RATINGS, weights="quadratic")
    ordinal = kappa_matrix(frame, order=[0.0, 1.0, 2.0, 3.0], weights="quadratic")
    both = frame[["j1", "h1"]].dropna()
    want = skm.cohen_kappa_score(both["j1"], both["h1"], weights="quadratic")
    assert ordinal.loc["j1", "h1"] == pytest.approx(want, abs=1e-12)


def test_self_consistency_hand_computed() -> None:
    samples: list[list[str | None]] = [["a", "b", "a"], ["b", "a"], [None], ["c"] * 4]
    r = self_consistency(samples)
    # modal shares 2/3, 1/2, 1 (the item without samples is left out)
    assert r.n_items == 3 and r.modal_agreement == pytest.approx((2 / 3 + 1 / 2 + 1) / 3)
    h = -(2 / 3) * np.log2(2 / 3) - (1 / 3) * np.log2(1 / 3)
    assert r.label_entropy == pytest.approx((h + 1 + 0) / 3)
    assert r.majority == ["a", "a", None, "c"]  # tie a/b -> smallest label
    assert self_consistency(samples, order=["c", "b", "a"]).majority[1] == "b"
    # the vote ignores the order samples arrived in
    assert self_consistency([["b", "a"], ["a", "b"]]).majority == ["a", "a"]
    empty = self_consistency([])
    assert empty.modal_agreement is None and empty.label_entropy is None


def test_self_consistency_matches_scipy() -> None:
    rng = np.random.default_rng(5)
    samples = rng.choice(["yes", "no", "maybe"], size=(40, 5)).tolist()
    labels, counts = label_counts(samples)
    want_entropy = stats.entropy(counts, base=2, axis=1)
    assert np.abs(entropies(counts) - want_entropy).max() < 1e-12
    modes = stats.mode(np.searchsorted(labels, samples), axis=1).count / 5
    assert np.abs(modal_shares(counts) - modes).max() < 1e-12


def test_item_bootstrap_matches_scipy_and_is_seeded() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=50)
    mine = item_bootstrap_ci(lambda v: v.mean(axis=-1), x, n_boot=500, seed=7, batched=True)
    ref = stats.bootstrap(
        (x,),
        np.mean,
        n_resamples=500,
        method="percentile",
        rng=np.random.default_rng(7),
        vectorized=True,
    ).confidence_interval
    assert mine is not None
    assert abs(mine[0] - ref.low) < 1e-12 and abs(mine[1] - ref.high) < 1e-12
    looped = item_bootstrap_ci(lambda v: float(v.mean()), x, n_boot=500, seed=7)
    assert looped == pytest.approx(mine, abs=1e-12)
    assert item_bootstrap_ci(np.mean, x, n_boot=0) is None
    with pytest.raises(ValueError, match="differ in length"):
        item_bootstrap_ci(np.mean, x, x[:3])


def test_score_ci_spearman_fast_path_matches_scipy_per_resample() -> None:
    rng = np.random.default_rng(2)
    s, g = rng.integers(1, 6, 40).astype(float), rng.normal(size=40)
    fast = agreement_with_gold_scores(s, g, n_boot=200, seed=9, ci_for=["spearman"])
    slow = item_bootstrap_ci(lambda a, b: stats.spearmanr(a, b).statistic, s, g, n_boot=200, seed=9)
    assert fast.ci["spearman"] == pytest.approx(slow, abs=1e-12)


def test_gold_ci_brackets_point_and_is_reproducible() -> None:
    rng = np.random.default_rng(1)
    gold = rng.integers(0, 3, 200)
    pred = np.where(rng.random(200) < 0.7, gold, rng.integers(0, 3, 200))
    a = agreement_with_gold(pred, gold, order=[0, 1, 2], n_boot=300, seed=4)
    b = agreement_with_gold(pred, gold, order=[0, 1, 2], n_boot=300, seed=4)
    assert a.ci == b.ci and set(a.ci) == {
        "accuracy",
        "balanced_accuracy",
        "macro_f1",
        "cohen_kappa",
        "quadratic_kappa",
    }
    for name, interval in a.ci.items():
        assert interval is not None
        assert interval[0] < getattr(a, name) < interval[1], name
    # the accuracy CI is the mean bootstrap of per-item correctness, same draws
    correct = (pred == gold).astype(float)
    want = item_bootstrap_ci(lambda v: v.mean(axis=-1), correct, n_boot=300, seed=4, batched=True)
    assert a.ci["accuracy"] == pytest.approx(want, abs=1e-12)
