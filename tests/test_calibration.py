"""Calibration statistics against scikit-learn and scipy on generated data: Brier
(`brier_score_loss`), ECE and the reliability bins (`calibration_curve`, uniform bins),
temperature scaling (a logistic regression without intercept on the logits), isotonic
regression, the bootstrap draws and the paired comparison of two judges."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit
from sklearn.calibration import calibration_curve
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import brier_score_loss

from assay.compare._calibration import calibration_outcomes
from assay.compare._load import Gold
from assay.core.outcomes import Status
from assay.core.records import ItemJudgmentRecord, ItemRecord
from assay.errors import SpecError
from assay.metrics import item_metrics
from assay.metrics._calibration import CalibrationOptions, options_from_manifest
from assay.metrics._calibration_stats import (
    bin_codes,
    brier,
    brier_of,
    ece,
    ece_of,
    fit_isotonic,
    fit_temperature,
    reliability,
    with_temperature,
)
from assay.metrics._paired_draws import resample_statistics
from assay.metrics._paired_metrics import compare_statistics
from assay.metrics._pooling import BootSettings
from assay.metrics._resampling import index_chunks
from assay.runs import load_spec

LABELS = ["supported", "unsupported", "partially_supported"]


def _forecasts(n: int, seed: int, overconfidence: float = 2.0) -> tuple[np.ndarray, np.ndarray]:
    """Probabilities sharper than the truth (`overconfidence` > 1) and 0/1 outcomes."""
    rng = np.random.default_rng(seed)
    true = rng.uniform(0.3, 0.95, size=n)
    y = (rng.uniform(size=n) < true).astype(float)
    p = expit(logit(true) * overconfidence)
    p[:3] = [0.0, 1.0, 0.1]  # the edges: 0 in the first bin, 1 and 0.1 closing theirs
    return p, y


def _ece_reference(p: np.ndarray, y: np.ndarray, bins: int) -> float:
    """ECE from calibration_curve's per-bin means and pandas' right-closed bin counts."""
    prob_true, prob_pred = calibration_curve(y, p, n_bins=bins, strategy="uniform")
    edges = np.linspace(0, 1, bins + 1)
    binned = pd.Series(pd.cut(p, edges, right=True, include_lowest=True))
    counts = binned.value_counts(sort=False).sort_index()
    counts = counts[counts > 0].to_numpy()
    return float(np.sum(counts / len(p) * np.abs(prob_true - prob_pred)))


@pytest.mark.parametrize(("n", "bins", "seed"), [(500, 10, 0), (80, 5, 1), (2000, 15, 2)])
def test_brier_ece_and_bins_agree_with_sklearn(n: int, bins: int, seed: int) -> None:
    p, y = _forecasts(n, seed)
    assert brier(p, y) == pytest.approx(brier_score_loss(y, p))
    assert ece(p, y, bins) == pytest.approx(_ece_reference(p, y, bins))
    prob_true, prob_pred = calibration_curve(y, p, n_bins=bins, strategy="uniform")
    filled = [b for b in reliability(p, y, bins) if b["count"]]
    assert [b["accuracy"] for b in filled] == pytest.approx(prob_true)
    assert [b["confidence"] for b in filled] == pytest.approx(prob_pred)
    assert sum(b["count"] for b in reliability(p, y, bins)) == n
    assert bin_codes(np.array([0.0, 0.1, 0.1000001, 1.0]), 10).tolist() == [0, 0, 1, 9]


def test_paired_statistics_match_a_recomputation_on_every_resample() -> None:
    p, y = _forecasts(60, 3)
    everything = np.ones(len(p), dtype=bool)
    cells = {"brier": (brier_of(p, y, "b"), everything), "ece": (ece_of(p, y, 10, "e"), everything)}
    boot = BootSettings(n_boot=50, seed=7, confidence=0.95)
    points, values = resample_statistics(cells, len(p), boot)
    assert points["brier"] == pytest.approx(brier_score_loss(y, p))
    assert points["ece"] == pytest.approx(_ece_reference(p, y, 10))
    drawn = np.vstack([idx for _, idx in index_chunks(len(p), boot.n_boot, boot.seed)])
    for k, rows in enumerate(drawn):
        assert values["brier"][k] == pytest.approx(brier_score_loss(y[rows], p[rows]))
        assert values["ece"][k] == pytest.approx(_ece_reference(p[rows], y[rows], 10))


def test_temperature_agrees_with_a_logistic_regression_on_the_logits() -> None:
    p, y = _forecasts(3000, 4, overconfidence=2.5)
    p = np.clip(p, 1e-6, 1 - 1e-6)
    t = fit_temperature(p, y)
    fitted = LogisticRegression(fit_intercept=False, C=np.inf, tol=1e-10, max_iter=1000)
    fitted.fit(logit(p).reshape(-1, 1), y)
    assert 1.0 / t == pytest.approx(fitted.coef_[0, 0], rel=1e-3)
    assert t > 1.5  # overconfident forecasts are softened
    expected = fitted.predict_proba(logit(p)[:, None])[:, 1]
    assert with_temperature(p, t) == pytest.approx(expected, rel=1e-4, abs=1e-6)
    assert ece(with_temperature(p, t), y) < ece(p, y)


def test_isotonic_is_sklearns() -> None:
    p, y = _forecasts(400, 5)
    reference = IsotonicRegression(out_of_bounds="clip", y_min=0, y_max=1).fit(p, y)
    grid = np.linspace(-0.2, 1.2, 57)
    assert fit_isotonic(p, y).predict(grid) == pytest.approx(reference.predict(grid))


def _run(n: int, seed: int) -> tuple[list[ItemRecord], list[ItemJudgmentRecord], dict]:
    """Items with gold and dev/test splits, two judges with probabilities (one
    overconfident, one calibrated)."""
    rng = np.random.default_rng(seed)
    items, records, truth = [], [], {}
    for i in range(n):
        gold = LABELS[i % 3]
        split = "dev" if i % 2 else "test"
        items.append(ItemRecord(dataset="d", item_id=str(i), gold_label=gold, split=split))
        for judge, sharp in (("sharp", 8.0), ("honest", 1.0)):
            chance = rng.uniform(0.4, 0.9)
            right = rng.uniform() < chance
            label = gold if right else LABELS[(i + 1) % 3]
            prob = float(expit(logit(chance) * sharp))
            truth.setdefault(judge, []).append((prob, float(right), split))
            records.append(
                ItemJudgmentRecord(
                    dataset="d", item_id=str(i), judge_id=judge, status=Status.OK,
                    label=label, label_probability=prob,
                )
            )  # fmt: skip
    return items, records, truth


def test_item_metrics_report_calibration_rows_and_stats() -> None:
    items, records, truth = _run(400, 6)
    failed = ItemJudgmentRecord(dataset="d", item_id="0", judge_id="none", status=Status.OK)
    report = item_metrics(items, [*records, failed], n_boot=200, seed=0)
    rows = {r.judge_id: r for r in report.calibration}
    assert set(rows) == {"sharp", "honest"}  # no probability, no row
    for judge, row in rows.items():
        p, y, splits = (np.array(v) for v in zip(*truth[judge], strict=True))
        assert row.brier == pytest.approx(brier_score_loss(y, p))
        assert row.ece == pytest.approx(_ece_reference(p, y, 10))
        lo, hi = row.ci["brier"]
        assert lo < row.brier < hi
        assert row.source == "confidence" and row.bins == 10 and len(row.reliability) == 10
        judge_row = next(r for r in report.rows if r.judge_id == judge)
        assert judge_row.stats["brier"] == row.brier and judge_row.n_of["ece"] == 400
        methods = {f.method: f for f in row.fitted}
        assert set(methods) == {"temperature", "isotonic"}
        dev, test = splits == "dev", splits == "test"
        t = fit_temperature(p[dev], y[dev])
        assert methods["temperature"].temperature == pytest.approx(t)
        after = with_temperature(p[test], t)
        assert methods["temperature"].brier_after == pytest.approx(brier_score_loss(y[test], after))
        assert methods["isotonic"].n_fit == dev.sum() and methods["isotonic"].n_test == test.sum()
    assert rows["sharp"].fitted[0].brier_after < rows["sharp"].fitted[0].brier_before
    assert "brier" in report.rows_flat()[0] and "ece_lo" in report.rows_flat()[0]


def test_calibration_rows_do_not_depend_on_the_order_records_arrived_in() -> None:
    """Records arrive in completion order (cache hits first, then the workers'): the
    bins, the statistics and their resampled intervals are the same bit for bit."""
    items, records, _ = _run(300, 4)
    shuffled = list(records)
    np.random.default_rng(7).shuffle(shuffled)
    first = item_metrics(items, records, n_boot=100, seed=0).calibration
    again = item_metrics(items, shuffled, n_boot=100, seed=0).calibration
    assert [r.model_dump() for r in again] == [r.model_dump() for r in first]


def test_paired_comparison_of_brier_and_ece() -> None:
    items, records, _ = _run(300, 8)
    gold = [Gold(label=it.gold_label) for it in items]
    judges = {j: [r.label for r in records if r.judge_id == j] for j in ("sharp", "honest")}
    probs = {
        j: np.array([r.label_probability for r in records if r.judge_id == j], dtype=float)
        for j in judges
    }
    probs["honest"][:10] = np.nan  # missing: the pair is compared on the items both have
    metrics = calibration_outcomes(judges, probs, gold)
    result = compare_statistics(metrics, n_boot=300, seed=1)
    rows = {c.metric: c for c in result.comparisons}
    shared = ~np.isnan(probs["honest"])
    y = {
        j: np.array([a == g.label for a, g in zip(judges[j], gold, strict=True)], float)
        for j in judges
    }
    a = brier_score_loss(y["sharp"][shared], probs["sharp"][shared])
    b = brier_score_loss(y["honest"][shared], probs["honest"][shared])
    assert rows["brier"].n == 290 and rows["brier"].diff == pytest.approx(a - b)
    assert rows["brier"].ci_low < rows["brier"].diff < rows["brier"].ci_high
    assert rows["brier"].diff > 0 and rows["brier"].ci_low > 0  # the sharp judge is worse
    ece_a = _ece_reference(probs["sharp"][shared], y["sharp"][shared], 10)
    assert rows["ece"].value_a == pytest.approx(ece_a)


def test_the_calibration_table_sets_bins_and_the_fit_split(tmp_path: Path) -> None:
    items, records, truth = _run(200, 9)
    items = [
        it.model_copy(update={"split": "train" if it.split == "dev" else "held"}) for it in items
    ]
    options = options_from_manifest({"spec": {"calibration": {"bins": 4, "fit_on": "train"}}})
    report = item_metrics(items, records, n_boot=0, seed=0, calibration=options)
    row = next(r for r in report.calibration if r.judge_id == "sharp")
    p, y, _ = (np.array(v) for v in zip(*truth["sharp"], strict=True))
    assert row.bins == 4 and len(row.reliability) == 4
    assert row.ece == pytest.approx(_ece_reference(p, y, 4))
    assert {f.fit_on for f in row.fitted} == {"train"} and row.ci == {}
    assert options_from_manifest({}) == CalibrationOptions()
    spec = tmp_path / "spec.toml"
    spec.write_text("[calibration]\nbins = 1\n", encoding="utf-8")
    with pytest.raises(SpecError, match="bins"):
        load_spec(spec)
