"""Paired bootstrap of per-item statistics: shared draws, subsets by mask, agreement of
every statistic with scikit-learn / scipy, and the comparison rows built from them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn import metrics as skm
from statsmodels.stats.multitest import multipletests

from assay.metrics import paired_compare, ratio_ci
from assay.metrics._paired_draws import resample_statistics
from assay.metrics._paired_metrics import MetricOutcomes, compare_statistics
from assay.metrics._paired_stats import (
    IndexStatistic,
    SumStatistic,
    binary_balanced_accuracy,
    confusion_statistic,
    mean_of,
    pearson_of,
    ratio_of,
    spearman_of,
)
from assay.metrics._pooling import BootSettings
from assay.metrics._resampling import index_chunks

SKLEARN = {
    "accuracy": skm.accuracy_score,
    "balanced_accuracy": skm.balanced_accuracy_score,
    "macro_f1": lambda g, p: skm.f1_score(g, p, average="macro"),
    "cohen_kappa": skm.cohen_kappa_score,
    "quadratic_kappa": lambda g, p: skm.cohen_kappa_score(g, p, weights="quadratic"),
}


def _labels(seed: int, n: int, k: int, judges: int) -> tuple[np.ndarray, list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, k, n)
    preds = [
        np.where(rng.random(n) < 0.5 + 0.1 * j, gold, rng.integers(0, k, n)) for j in range(judges)
    ]
    return gold, preds


def _drawn_rows(n: int, n_boot: int, seed: int) -> np.ndarray:
    return np.vstack([idx for _, idx in index_chunks(n, n_boot, seed)])


@pytest.mark.parametrize("name", list(SKLEARN))
def test_confusion_statistics_point_and_every_resample_match_sklearn(name: str) -> None:
    gold, (pred,) = _labels(seed=3, n=120, k=4, judges=1)
    everything = np.ones(len(gold), dtype=bool)
    cells = {"j": (confusion_statistic(name, gold, pred, 4, "f"), everything)}
    points, values = resample_statistics(cells, len(gold), BootSettings(50, 5, 0.95))
    assert points["j"] == pytest.approx(SKLEARN[name](gold, pred), abs=1e-12)
    for b, rows in enumerate(_drawn_rows(len(gold), 50, 5)[:10]):
        assert values["j"][b] == pytest.approx(SKLEARN[name](gold[rows], pred[rows]), abs=1e-12)


def test_a_mask_keeps_the_drawn_items_inside_it() -> None:
    gold, (pred,) = _labels(seed=4, n=90, k=3, judges=1)
    mask = np.random.default_rng(0).random(90) < 0.7
    cells = {"j": (confusion_statistic("cohen_kappa", gold, pred, 3, "f"), mask)}
    points, values = resample_statistics(cells, 90, BootSettings(20, 1, 0.95))
    assert points["j"] == pytest.approx(skm.cohen_kappa_score(gold[mask], pred[mask]))
    for b, rows in enumerate(_drawn_rows(90, 20, 1)[:8]):
        kept = rows[mask[rows]]  # the resample's draws that fall inside the mask
        expected = skm.cohen_kappa_score(gold[kept], pred[kept])
        assert values["j"][b] == pytest.approx(expected, abs=1e-12)


def test_without_class_split_masks_give_the_same_values(monkeypatch: pytest.MonkeyPatch) -> None:
    import assay.metrics._paired_draws as module

    rng = np.random.default_rng(8)
    x = rng.normal(size=200)
    masks = [rng.random(200) < 0.8 for _ in range(5)]
    cells = {i: (mean_of(x, "x"), m) for i, m in enumerate(masks)}
    boot = BootSettings(30, 2, 0.95)
    split = resample_statistics(cells, 200, boot)
    monkeypatch.setattr(module, "MAX_CLASSES", 1)
    masked = resample_statistics(cells, 200, boot)
    for i, m in enumerate(masks):
        assert split[0][i] == pytest.approx(x[m].mean())
        np.testing.assert_allclose(split[1][i], masked[1][i], rtol=1e-12)


def test_mean_matches_paired_compare_ci_and_ratio_matches_ratio_ci() -> None:
    rng = np.random.default_rng(2)
    a, b = rng.integers(0, 2, 300).astype(float), rng.integers(0, 2, 300).astype(float)
    everywhere = np.ones(300, dtype=bool)
    outcomes = MetricOutcomes(
        "acc", {"a": mean_of(a, "a"), "b": mean_of(b, "b")}, {"a": everywhere, "b": everywhere},
        binary={"a": a, "b": b},
    )  # fmt: skip
    ours = compare_statistics([outcomes], n_boot=400, seed=9).comparisons[0]
    wide = pd.DataFrame({"a": a, "b": b})
    theirs = paired_compare(wide, metric="acc", n_boot=400, seed=9).rows[0]
    assert ours.model_dump() == pytest.approx(theirs.model_dump())
    num, den = rng.integers(0, 5, 80).astype(float), rng.integers(1, 6, 80).astype(float)
    _, values = resample_statistics(
        {"r": (ratio_of(num, den, "r"), np.ones(80, dtype=bool))}, 80, BootSettings(300, 4, 0.9)
    )
    lo, hi = np.quantile(values["r"], [0.05, 0.95])
    assert (lo, hi) == pytest.approx(ratio_ci(num, den, n_boot=300, seed=4, confidence=0.9))


def test_binary_balanced_accuracy_matches_sklearn_and_is_undefined_with_one_class() -> None:
    rng = np.random.default_rng(6)
    gold, pred = rng.random(70) < 0.4, rng.random(70) < 0.5
    everything = np.ones(70, dtype=bool)
    stat = binary_balanced_accuracy(gold, pred, "f")
    points, _ = resample_statistics({"v": (stat, everything)}, 70, BootSettings(5, 0, 0.95))
    assert points["v"] == pytest.approx(skm.balanced_accuracy_score(gold, pred))
    one_class = binary_balanced_accuracy(np.ones(70, dtype=bool), pred, "g")
    points, _ = resample_statistics({"v": (one_class, everything)}, 70, BootSettings(5, 0, 0.95))
    assert np.isnan(points["v"])


@pytest.mark.parametrize("levels", [5, None])  # Likert scores; continuous scores
def test_correlations_point_and_resamples_match_scipy(levels: int | None) -> None:
    rng = np.random.default_rng(11)
    gold = rng.integers(1, 6, 150).astype(float)
    noise = rng.normal(0, 1.2, 150)
    scores = np.clip(np.round(gold + noise), 1, 5) if levels else gold + noise
    if not levels:  # continuous gold too: more distinct (score, gold) pairs than a table
        gold = gold + rng.normal(0, 0.3, 150)
    mask = rng.random(150) < 0.85
    spearman = spearman_of(np.where(mask, scores, np.nan), gold, "s")
    assert isinstance(spearman, SumStatistic if levels else IndexStatistic)
    cells = {"pearson": (pearson_of(scores, gold, "p"), mask), "spearman": (spearman, mask)}
    points, values = resample_statistics(cells, 150, BootSettings(20, 3, 0.95))
    assert points["pearson"] == pytest.approx(stats.pearsonr(scores[mask], gold[mask])[0])
    assert points["spearman"] == pytest.approx(stats.spearmanr(scores[mask], gold[mask])[0])
    for b, rows in enumerate(_drawn_rows(150, 20, 3)[:8]):
        kept = rows[mask[rows]]
        rho = stats.spearmanr(scores[kept], gold[kept])[0]
        assert values["spearman"][b] == pytest.approx(rho, abs=1e-10)
        r = stats.pearsonr(scores[kept], gold[kept])[0]
        assert values["pearson"][b] == pytest.approx(r, abs=1e-10)


def test_comparisons_pair_on_shared_items_and_holm_across_metrics() -> None:
    gold, preds = _labels(seed=12, n=200, k=3, judges=3)
    rng = np.random.default_rng(12)
    defined = {f"j{i}": rng.random(200) < 0.9 for i in range(3)}
    by_judge = dict(zip(defined, preds, strict=True))
    kappa = {j: confusion_statistic("cohen_kappa", gold, p, 3, j) for j, p in by_judge.items()}
    correct = {j: (p == gold).astype(float) for j, p in by_judge.items()}
    accuracy = {j: mean_of(c, ("c", j)) for j, c in correct.items()}
    metrics = [
        MetricOutcomes("cohen_kappa", kappa, defined),
        MetricOutcomes("accuracy", accuracy, defined, binary=correct),
    ]
    result = compare_statistics(metrics, reference="j0", n_boot=200, seed=0)
    assert [(c.metric, c.judge_a, c.judge_b) for c in result.comparisons] == [
        ("cohen_kappa", "j1", "j0"), ("cohen_kappa", "j2", "j0"),
        ("accuracy", "j1", "j0"), ("accuracy", "j2", "j0"),
    ]  # fmt: skip
    row = result.comparisons[0]
    both = defined["j1"] & defined["j0"]
    assert row.n == int(both.sum())
    assert row.value_a == pytest.approx(skm.cohen_kappa_score(gold[both], preds[1][both]))
    assert row.diff == pytest.approx(row.value_a - row.value_b)
    assert row.ci_low <= row.diff <= row.ci_high and row.test == "paired-bootstrap"
    acc = result.comparisons[2]
    assert acc.test == "mcnemar-exact"
    a, b = correct["j1"][both], correct["j0"][both]
    only_a, only_b = int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum())
    assert acc.p_value == pytest.approx(stats.binomtest(only_a, only_a + only_b).pvalue)
    p = [c.p_value for c in result.comparisons]
    holm = multipletests(p, method="holm")[1]
    assert [c.p_holm for c in result.comparisons] == pytest.approx(holm)
    own = {(e.metric, e.judge): e for e in result.estimates}
    assert own[("accuracy", "j2")].n == int(defined["j2"].sum())
    assert own[("accuracy", "j2")].value == pytest.approx(correct["j2"][defined["j2"]].mean())


def test_an_undefined_pair_becomes_a_note() -> None:
    gold = np.zeros(20, dtype=np.int64)  # one gold class: kappa undefined
    preds = {"a": np.zeros(20, dtype=np.int64), "b": np.ones(20, dtype=np.int64)}
    everywhere = {j: np.ones(20, dtype=bool) for j in preds}
    stats_ = {j: confusion_statistic("cohen_kappa", gold, p, 2, j) for j, p in preds.items()}
    result = compare_statistics([MetricOutcomes("cohen_kappa", stats_, everywhere)], n_boot=10)
    assert result.comparisons == []
    assert result.notes == [
        "cohen_kappa: a vs b not compared: the statistic is undefined on their common items"
    ]


def test_shared_gold_moments_serve_judges_on_a_grid_and_off_it() -> None:
    rng = np.random.default_rng(13)
    gold = rng.integers(1, 6, 120).astype(float)
    likert = np.clip(np.round(gold + rng.normal(0, 1, 120)), 1, 5)  # exact integer sums
    continuous = gold + rng.normal(0, 1, 120)  # centred float sums
    everything = np.ones(120, dtype=bool)
    cells = {
        j: (pearson_of(s, gold, j, gold_family="gold"), everything)
        for j, s in (("likert", likert), ("continuous", continuous))
    }
    points, _ = resample_statistics(cells, 120, BootSettings(10, 0, 0.95))
    assert points["likert"] == pytest.approx(stats.pearsonr(likert, gold)[0], abs=1e-12)
    assert points["continuous"] == pytest.approx(stats.pearsonr(continuous, gold)[0], abs=1e-12)
