"""Fail-closed metrics (refusals never caught, a refused answer an empty rendering), bootstrap
intervals, the default tuning and sweep on the shared engine, calibration and the reliability
report."""

from __future__ import annotations

import itertools
import math
from decimal import Decimal

import numpy as np
import pytest
from _fc_fixtures import c1_response, claim, pair, response
from sklearn.calibration import calibration_curve
from sklearn.isotonic import IsotonicRegression

from assay.policies import canonical_json
from assay.policies.fail_closed import (
    METRIC_NAMES,
    FailClosedConfig,
    FailClosedPolicy,
    FCResponse,
    TemperatureCalibration,
    build_certificate,
    default_tuning_spec,
    fail_closed_metrics,
    fit_isotonic,
    fit_temperature,
    metric_counts,
    reliability,
    sweep_tau_entail,
    system_metrics,
    tune_fail_closed,
)


def _refused() -> FCResponse:
    failed = {**claim("x", [pair("s", 0.99, 0.0)]), "verification_status": "api_error"}
    return response([{**failed, "gold": "unsupported"}], answer_id="refused")


def test_metrics_without_gold_are_null_no_gold_and_the_rest_are_counted() -> None:
    answer = response([claim("a", [pair("s1", 0.9, 0.0)]), claim("b", [pair("s2", 0.1, 0.8)])])
    result = fail_closed_metrics([FailClosedPolicy().decide(answer)])
    for name in ("vcp", "vc", "uer@strict", "uer@mixed", "cer@strict", "cer@mixed", "catch_rate"):
        assert result.metrics[name].value is None
        assert result.metrics[name].null_reason == "no_gold"
    assert (
        result.metrics["verified_rate"].numerator,
        result.metrics["verified_rate"].denominator,
    ) == (1, 2)
    assert result.metrics["blocked_rate"].value == 0.5
    assert set(result.metrics) == set(METRIC_NAMES)


def test_empty_sets_are_null_with_zero_denominator() -> None:
    result = fail_closed_metrics([])
    assert result.metrics["empty_strict_rate"].null_reason == "zero_denominator"
    assert result.metrics["vcp"].null_reason == "no_gold" and result.n_responses == 0
    unverified = response([claim("a", [pair("s", 0.2, 0.0)], gold="supported")])
    result = fail_closed_metrics([FailClosedPolicy().decide(unverified)])
    assert result.metrics["vcp"].null_reason == "zero_denominator"
    assert result.metrics["vc"].value == 0.0 and result.metrics["catch_rate"].value is None


def test_refusals_count_as_empty_renderings_and_are_never_caught() -> None:
    """A refused answer counts as an empty strict rendering and its claims are never
    caught."""
    policy = FailClosedPolicy()
    decisions = [policy.decide(c1_response()), policy.decide(_refused())]
    result = fail_closed_metrics(decisions)
    assert result.n_refused == 1 and result.n_responses == 2
    rate = result.metrics["empty_strict_rate"]
    assert (rate.numerator, rate.denominator) == (1, 2)
    catch = result.metrics["catch_rate"]  # C-1's 2/3 plus a hallucinated claim not caught
    assert (catch.numerator, catch.denominator) == (2, 4)
    assert decisions[1].claims[0].correct is False


def test_bootstrap_intervals_are_reproducible_and_collapse_when_every_draw_agrees() -> None:
    policy = FailClosedPolicy()
    answers = [c1_response(answer_id=f"a{i}") for i in range(5)] + [_refused()]
    decisions = [policy.decide(a) for a in answers]
    first = fail_closed_metrics(decisions, resamples=300, random_state=7)
    again = fail_closed_metrics(decisions, resamples=300, random_state=7)
    assert first == again
    vcp = first.metrics["vcp"]
    assert vcp.ci == (2 / 3, 2 / 3) and vcp.ci_method == "bootstrap-percentile"
    assert vcp.n_resamples_valid is not None and 0 < vcp.n_resamples_valid <= 300
    rate = first.metrics["empty_strict_rate"]
    assert rate.ci is not None and rate.ci[0] <= rate.value <= rate.ci[1]  # type: ignore[operator]
    counts = metric_counts(decisions)
    for name, ratio in first.metrics.items():
        if ratio.null_reason is None:
            assert sum(counts[name].numerator) == ratio.numerator
            assert sum(counts[name].denominator) == ratio.denominator


def test_system_metrics() -> None:
    policy = FailClosedPolicy()
    answers = [c1_response(), _refused()]
    decisions = [policy.decide(a) for a in answers]
    lines = [
        canonical_json(build_certificate(policy.config, a, d))
        for a, d in zip(answers, decisions, strict=True)
    ]
    figures = system_metrics(decisions, lines)
    # fixture C-1: 11 spans and the set score {s8, s9}; the refused answer: its one span
    assert figures.pairs_per_question_max == 12 and figures.pairs_per_question_mean == 6.5
    assert figures.certificate_bytes_max == max(len(x.encode()) for x in lines)


def _tuning_answers() -> list[FCResponse]:
    """Fixture C-1 and responses whose claims sit at several entailment levels."""
    answers = [c1_response()]
    levels = [0.55, 0.62, 0.74, 0.81, 0.88, 0.93, 0.97]
    for i, level in enumerate(levels):
        gold = "supported" if i % 3 != 1 else "unsupported"
        contradict = 0.05 + 0.1 * (i % 4)
        answers.append(
            response(
                [claim(f"c{i}", [pair(f"s{i}", level, contradict)], gold=gold)],
                answer_id=f"t{i}",
            )
        )
    return answers


def test_default_grid_has_fifty_candidates_and_the_defaults() -> None:
    spec = default_tuning_spec()
    grid = list(itertools.product(spec.grid["tau_entail"], spec.grid["tau_contradict"]))
    assert len(grid) == 50 and ("0.85", "0.70") in grid
    assert spec.grid["tau_entail"][0] == "0.50" and spec.grid["tau_entail"][-1] == "0.95"


def test_tuning_selects_the_candidate_found_by_enumerating_the_grid() -> None:
    answers = _tuning_answers()
    config = FailClosedConfig()
    result = tune_fail_closed(config, answers)
    table = []
    for tau_e, tau_c in itertools.product(
        [f"{k / 100:.2f}" for k in range(50, 100, 5)], ["0.50", "0.60", "0.70", "0.80", "0.90"]
    ):
        policy = FailClosedPolicy(config.with_thresholds(tau_entail=tau_e, tau_contradict=tau_c))
        metrics = fail_closed_metrics([policy.decide(a) for a in answers]).metrics
        vcp, vc = metrics["vcp"].fraction, metrics["vc"].fraction
        if vc is not None and vc >= Decimal("0.5"):
            table.append((vcp, vc, Decimal(tau_e), -Decimal(tau_c), tau_e, tau_c))
    best = max(table, key=lambda row: row[:4])
    assert result.selected == {"tau_entail": best[4], "tau_contradict": best[5]}
    assert result.n_feasible == len(table) and len(result.candidates) == 50


def test_infeasible_tuning_selects_nothing_and_says_why() -> None:
    spec = default_tuning_spec().model_copy(
        update={
            "constraints": [
                default_tuning_spec().constraints[0].model_copy(update={"value": "0.99"})
            ]
        }
    )
    result = tune_fail_closed(FailClosedConfig(), _tuning_answers(), spec)
    assert result.selected is None and result.n_feasible == 0
    assert result.best_infeasible is not None and "vc >= 0.99" in result.best_infeasible


def test_sweep_traces_coverage_as_tau_entail_rises() -> None:
    answers = _tuning_answers()
    points = sweep_tau_entail(FailClosedConfig(), answers)
    assert [p.tau_entail for p in points][:3] == ["0.50", "0.51", "0.52"] and len(points) == 50
    coverage = [p.metrics["vc"].fraction for p in points]
    assert all(a is not None and b is not None and a >= b for a, b in itertools.pairwise(coverage))
    at_default = next(p for p in points if p.tau_entail == "0.85")
    direct = fail_closed_metrics([FailClosedPolicy().decide(a) for a in answers]).metrics
    assert at_default.metrics["vcp"] == direct["vcp"] and at_default.tau_contradict == "0.7"


def test_isotonic_calibration_applies_exactly_what_scikit_learn_predicts() -> None:
    rng = np.random.default_rng(3)
    scores = rng.uniform(0, 1, 200)
    labels = rng.uniform(0, 1, 200) < scores**2
    fitted = fit_isotonic(list(scores), list(labels))
    reference = IsotonicRegression(increasing=True, out_of_bounds="clip", y_min=0.0, y_max=1.0)
    reference.fit(scores, labels.astype(float))
    probe = np.linspace(-0.1, 1.1, 97)
    ours = [fitted.entail(float(p), None) for p in probe]
    assert ours == pytest.approx(list(reference.predict(probe)), abs=1e-12)
    assert fitted.sha256 == fit_isotonic(list(scores), list(labels)).sha256


def test_a_calibrated_policy_decides_on_calibrated_scores() -> None:
    lifting = fit_isotonic([0.0, 0.5, 0.6, 1.0], [False, True, True, True])
    calibrated = FailClosedPolicy(FailClosedConfig(calibration=lifting))
    answer = response([claim("c", [pair("s", 0.6, 0.0)])])
    assert FailClosedPolicy().decide(answer).claims[0].native == "UNVERIFIED"
    decided = calibrated.decide(answer).claims[0]
    assert decided.native == "VERIFIED" and decided.max_entail == 1.0
    assert calibrated.sha256 != FailClosedPolicy().sha256


def test_temperature_scaling() -> None:
    rng = np.random.default_rng(5)
    true_logits = rng.normal(0, 2, (400, 3))
    probs = np.exp(true_logits / 1.0) / np.exp(true_logits / 1.0).sum(axis=1, keepdims=True)
    labels = [int(rng.choice(3, p=p)) for p in probs]
    overconfident = [tuple(float(v) for v in row * 2.5) for row in true_logits]
    fitted = fit_temperature(overconfident, labels)  # type: ignore[arg-type]
    assert 2.0 < fitted.temperature < 3.2

    def nll(t: float) -> float:
        z = np.asarray(overconfident) / t
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        return float(-logp[np.arange(len(labels)), labels].mean())

    assert nll(fitted.temperature) <= min(
        nll(fitted.temperature * 0.99), nll(fitted.temperature * 1.01)
    )
    scaled = TemperatureCalibration(temperature=2.0)
    assert scaled.entail(0.1, (2.0, 0.0, 0.0)) == pytest.approx(math.e / (math.e + 2))
    policy = FailClosedPolicy(FailClosedConfig(calibration=scaled))
    no_logits = policy.decide(response([claim("c", [pair("s", 0.99, 0.0)])]))
    assert no_logits.claims[0].reason == "invalid_score"
    with_logits = {**pair("s", 0.1, 0.0), "logits": [9.0, 0.0, 0.0]}
    assert policy.decide(response([claim("c", [with_logits])])).claims[0].native == "VERIFIED"


def test_reliability_bins_agree_with_scikit_learn_and_ece_with_its_definition() -> None:
    rng = np.random.default_rng(11)
    conf = np.round(rng.uniform(0, 1, 300), 6)
    conf = conf[np.abs(conf * 10 - np.round(conf * 10)) > 1e-6]  # off the bin edges
    outcome = rng.uniform(0, 1, len(conf)) < conf
    report = reliability(list(conf), list(outcome))
    prob_true, prob_pred = calibration_curve(outcome, conf, n_bins=10, strategy="uniform")
    filled = [b for b in report.bins if b.count]
    assert [b.empirical for b in filled] == pytest.approx(list(prob_true), abs=1e-12)
    assert [b.mean_predicted for b in filled] == pytest.approx(list(prob_pred), abs=1e-12)
    ece = sum(
        b.count / len(conf) * abs(t - p)
        for b, t, p in zip(filled, prob_true, prob_pred, strict=True)
    )
    assert report.ece == pytest.approx(ece, abs=1e-12) and report.n == len(conf)
    edges = reliability([0.0, 0.1, 0.95, 1.0], [True, False, True, True])
    assert [b.count for b in edges.bins] == [1, 1, 0, 0, 0, 0, 0, 0, 0, 2]  # [0.1, 0.2), [0.9, 1]
    assert reliability([], []).ece is None
