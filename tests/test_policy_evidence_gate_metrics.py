"""The evidence gate's metrics, tuning, sweep and AURC: fixture G-1 from
the paper's matrices, G-2 end to end, G-3 tie groups, refusals in the denominators, the
bootstrap intervals, and agreement with scikit-learn where the definitions coincide."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
from _gate_fixtures import DATASET, g2_questions
from sklearn.metrics import (
    balanced_accuracy_score,
    f1_score,
    precision_score,
    recall_score,
)

from assay.core.decisions import GateOutcome
from assay.metrics._ratio_bootstrap import paired_delta_interval
from assay.policies.engine._tuning import enumerate_grid
from assay.policies.evidence_gate._aurc import aurc, aurc_optimal
from assay.policies.evidence_gate._config import (
    EvidenceGateConfig,
    EvidenceLabel,
    GateQuestion,
    SupportLevel,
)
from assay.policies.evidence_gate._metrics import (
    GateRow,
    gate_metrics,
    metric_counts,
    metric_values,
)
from assay.policies.evidence_gate._policy import EvidenceGatePolicy, GateInputs
from assay.policies.evidence_gate._records import GateDecisionRecord
from assay.policies.evidence_gate._tuning import (
    default_tuning_spec,
    risk_coverage_curve,
    sweep_gate,
    tune_gate,
    tuned_config,
)

PASS, ABSTAIN, REFUSE = GateOutcome.PASS, GateOutcome.ABSTAIN, GateOutcome.REFUSE
HAS, NO = EvidenceLabel.HAS_EVIDENCE, EvidenceLabel.NO_EVIDENCE
CONFIG = EvidenceGateConfig(name="gate", tau="0.30", tau_min="0.10")


def _matrix(tp: int, tn: int, fp: int, fn: int, refused: int = 0) -> list[GateRow]:
    return (
        [GateRow(ABSTAIN, NO)] * tp
        + [GateRow(PASS, HAS)] * tn
        + [GateRow(ABSTAIN, HAS)] * fp
        + [GateRow(PASS, NO)] * fn
        + [GateRow(REFUSE, NO)] * refused
    )


G1 = {  # system: (TP, TN, FP, FN), accuracy, precision, recall, coverage, risk, balanced acc
    "gated": ((36, 749, 46, 189), 0.7696, 0.4390, 0.1600, 0.9196, 0.2015, 0.5511),
    "always-answer": ((82, 695, 0, 243), 0.7618, 1.0000, 0.2523, 0.9196, 0.2591, 0.6262),
}


@pytest.mark.parametrize("system", sorted(G1))
def test_g1_computed_values_from_the_paper_matrices(system: str) -> None:
    counts, accuracy, precision, recall, coverage, risk, balanced = G1[system]
    m = metric_values(_matrix(*counts), Fraction(1, 2))
    got = [
        m[k].value
        for k in (
            "abstention_accuracy",
            "abstention_precision",
            "abstention_recall",
            "coverage",
            "selective_risk_label",
            "balanced_accuracy",
        )
    ]
    assert [round(v, 4) for v in got if v is not None] == [
        accuracy,
        precision,
        recall,
        coverage,
        risk,
        balanced,
    ]
    tp, tn, fp, fn = counts
    assert m["abstention_accuracy"].fraction == Fraction(tp + tn, 1020)
    assert m["coverage"].fraction == Fraction(tn + fn, 1020)


def test_g1_gated_accuracy_rounds_to_the_papers_figure() -> None:
    value = metric_values(_matrix(36, 749, 46, 189), Fraction(1, 2))["abstention_accuracy"].value
    assert value is not None and round(value, 3) == 0.770


def _g2_decisions() -> list[GateDecisionRecord]:
    return EvidenceGatePolicy(CONFIG).decide(GateInputs(questions=g2_questions()))


def test_g2_confusion_counts_and_every_listed_metric() -> None:
    result = gate_metrics(_g2_decisions(), resamples=0)
    c = result.counts
    assert (c.tp, c.tn, c.fp, c.fn, c.n_refused, c.n_questions) == (3, 4, 1, 2, 0, 10)
    m = result.metrics
    expected = {
        "abstention_accuracy": Fraction(7, 10),
        "abstention_precision": Fraction(3, 4),
        "abstention_recall": Fraction(3, 5),
        "coverage": Fraction(6, 10),
        "selective_risk_label": Fraction(2, 6),
        "selective_accuracy": Fraction(4, 6),
        "factuality": Fraction(7, 12),  # 3.5 / 6
        "selective_risk_support": Fraction(2, 6),
    }
    assert {k: m[k].fraction for k in expected} == expected
    assert [round(m[k].value or 0, 4) for k in expected] == [
        0.7,
        0.75,
        0.6,
        0.6,
        0.3333,
        0.6667,
        0.5833,
        0.3333,
    ]


def test_g2_tuning_selects_the_fail_closed_pair() -> None:
    spec = default_tuning_spec()
    assert len(enumerate_grid(spec)) == 19
    result = tune_gate(g2_questions(), CONFIG)
    assert len(result.candidates) == 19 and result.n_feasible == 19
    assert result.selected == {"tau": "0.30", "tau_min": "0.15"}
    best = [c for c in result.candidates if c.rank == 1][0]
    assert best.metrics["abstention_accuracy"].fraction == Fraction(8, 10)
    runner_up = [c for c in result.candidates if c.rank == 2][0]
    assert runner_up.params == {"tau": "0.25", "tau_min": "0.15"}  # same accuracy and FN
    assert runner_up.metrics["abstention_accuracy"] == best.metrics["abstention_accuracy"]
    assert runner_up.metrics["false_negative_rate"] == best.metrics["false_negative_rate"]
    tuned = tuned_config(CONFIG, result)
    assert tuned is not None and (tuned.tau, tuned.tau_min) == ("0.3", "0.15")


def test_g2_tuning_agrees_with_a_hand_enumeration() -> None:
    """Every one of the 19 pairs decided from scratch: the best accuracy, then fewest FN,
    then larger tau, then larger tau_min."""
    keyed = []
    for tau_min, tau in itertools.product(
        ["0.05", "0.10", "0.15", "0.20"], ["0.20", "0.25", "0.30", "0.35", "0.40"]
    ):
        if float(tau) <= float(tau_min):
            continue
        policy = EvidenceGatePolicy(CONFIG.with_thresholds(tau, tau_min))
        decisions = policy.decide(GateInputs(questions=g2_questions()))
        correct = sum(1 for d in decisions if d.correct)
        fn = sum(1 for d in decisions if d.outcome is PASS and d.label is NO)
        keyed.append(((-correct, fn, -float(tau), -float(tau_min)), (tau, tau_min)))
    assert len(keyed) == 19
    tau, tau_min = min(keyed)[1]
    assert tune_gate(g2_questions(), CONFIG).selected == {"tau": tau, "tau_min": tau_min}


def test_g2_risk_coverage_curve_points() -> None:
    points = {p.tau: p for p in risk_coverage_curve(g2_questions(), CONFIG)}
    assert min(points) == "0.11" and max(points) == "1" and len(points) == 90  # tau > 0.10
    expected = {
        "0.2": (Fraction(7, 10), Fraction(3, 7)),
        "0.25": (Fraction(6, 10), Fraction(2, 6)),
        "0.3": (Fraction(6, 10), Fraction(2, 6)),
        "0.35": (Fraction(4, 10), Fraction(1, 4)),
        "0.4": (Fraction(3, 10), Fraction(1, 3)),
        "0.5": (Fraction(2, 10), Fraction(1, 2)),
    }
    for tau, (coverage, risk) in expected.items():
        assert (points[tau].coverage.fraction, points[tau].selective_risk_label.fraction) == (
            coverage,
            risk,
        ), tau
    top = points["0.95"]
    assert top.coverage.value == 0.0 and top.selective_risk_label.value is None
    assert top.selective_risk_label.null_reason == "zero_denominator"
    assert [round(points[t].coverage.value or 0, 4) for t in ("0.2", "0.35")] == [0.7, 0.4]
    assert round(points["0.2"].selective_risk_label.value or 0, 4) == 0.4286


def test_a_sweep_of_tau_min_skips_points_at_or_above_tau() -> None:
    points = sweep_gate(
        g2_questions(), CONFIG, param="tau_min", values=["0.05", "0.25", "0.30", "0.40"]
    )
    assert [p.tau_min for p in points] == ["0.05", "0.25"]


def test_g2_aurc_and_its_optimum() -> None:
    m = gate_metrics(_g2_decisions(), resamples=0).metrics
    assert m["aurc"].fraction == Fraction(8983, 25200) and round(m["aurc"].value or 0, 4) == 0.3565
    assert m["aurc_opt"].fraction == Fraction(893, 5040)
    assert round(m["aurc_opt"].value or 0, 4) == 0.1772
    assert round(m["e_aurc"].value or 0, 4) == 0.1793
    assert m["e_aurc"].fraction == m["aurc"].fraction - m["aurc_opt"].fraction
    again = gate_metrics(
        EvidenceGatePolicy(CONFIG.with_thresholds("0.90", "0.50")).decide(
            GateInputs(questions=g2_questions())
        ),
        resamples=0,
    ).metrics
    assert again["aurc"] == m["aurc"]  # independent of tau and tau_min


@pytest.mark.parametrize(
    "items",
    [
        [(0.8, False), (0.5, True), (0.5, False), (0.2, True)],
        [(0.8, False), (0.5, False), (0.5, True), (0.2, True)],
    ],
)
def test_g3_tied_confidences_enter_the_curve_together(items: list[tuple[float, bool]]) -> None:
    assert aurc(items) == Fraction(7, 24) and round(float(Fraction(7, 24)), 4) == 0.2917


def test_without_ties_aurc_is_the_mean_risk_of_the_top_k() -> None:
    items = [(0.9, True), (0.7, False), (0.6, True), (0.4, False), (0.1, False)]
    ranked = sorted(items, key=lambda i: -i[0])
    usual = sum(Fraction(sum(e for _, e in ranked[:k]), k) for k in range(1, 6)) / 5
    assert aurc(items) == usual
    assert aurc_optimal(items) == (Fraction(0) * 3 + Fraction(1, 4) + Fraction(2, 5)) / 5


def test_refusals_stay_in_denominators_and_never_in_numerators() -> None:
    """One missing and one api_error record among G-2's questions: they stay in the
    denominators."""
    from _gate_fixtures import gate_record

    from assay.core.outcomes import Status

    extra = [
        GateQuestion(dataset=DATASET, question_id="q11", record=None, label="has_evidence"),
        GateQuestion(
            dataset=DATASET,
            question_id="q12",
            record=gate_record("q12", [], status=Status.API_ERROR),
            label="no_evidence",
        ),
    ]
    decisions = EvidenceGatePolicy(CONFIG).decide(GateInputs(questions=g2_questions() + extra))
    result = gate_metrics(decisions, resamples=0)
    m = result.metrics
    assert result.n_refused == 2 and result.counts.n_refused_labelled == 2
    assert m["abstention_accuracy"].fraction == Fraction(7, 12)
    assert (m["abstention_precision"].numerator, m["abstention_precision"].denominator) == (3, 6)
    assert (m["abstention_recall"].numerator, m["abstention_recall"].denominator) == (3, 6)
    assert (m["specificity"].numerator, m["specificity"].denominator) == (4, 6)
    assert m["refusal_rate"].fraction == Fraction(2, 12)
    assert m["coverage"].fraction + m["abstention_rate"].fraction + m["refusal_rate"].fraction == 1
    assert m["aurc"] == gate_metrics(_g2_decisions(), resamples=0).metrics["aurc"]


def test_without_refusals_the_rates_agree_with_scikit_learn() -> None:
    rows = _matrix(36, 749, 46, 189)
    truth = [r.label.value for r in rows]
    said = ["no_evidence" if r.outcome is ABSTAIN else "has_evidence" for r in rows]
    m = metric_values(rows, Fraction(1, 2))
    positive = {"pos_label": "no_evidence"}
    assert m["abstention_precision"].value == pytest.approx(
        precision_score(truth, said, **positive), abs=1e-12
    )
    assert m["abstention_recall"].value == pytest.approx(
        recall_score(truth, said, **positive), abs=1e-12
    )
    assert m["abstention_f1"].value == pytest.approx(f1_score(truth, said, **positive), abs=1e-12)
    assert m["balanced_accuracy"].value == pytest.approx(
        balanced_accuracy_score(truth, said), abs=1e-12
    )


def test_f1_is_zero_without_true_positives_and_null_without_abstentions() -> None:
    none_caught = metric_values(_matrix(0, 5, 2, 3), Fraction(1, 2))
    assert none_caught["abstention_f1"].value == 0.0
    never_abstains = metric_values(_matrix(0, 5, 0, 3), Fraction(1, 2))
    assert never_abstains["abstention_precision"].null_reason == "zero_denominator"
    assert never_abstains["abstention_f1"].value is None


def test_every_question_abstains() -> None:
    """Edge case 33: coverage 0.0 and selective risk null."""
    m = metric_values(_matrix(3, 0, 2, 0), Fraction(1, 2))
    assert m["coverage"].value == 0.0
    assert m["selective_risk_label"].value is None and m["factuality"].value is None


def test_without_gold_fields_metrics_say_no_gold_and_rates_use_all_questions() -> None:
    rows = [GateRow(PASS), GateRow(ABSTAIN), GateRow(REFUSE), GateRow(PASS)]
    m = metric_values(rows, Fraction(1, 2))
    for name in (
        "abstention_accuracy",
        "abstention_f1",
        "balanced_accuracy",
        "aurc",
        "factuality",
        "citation_quality_good",
    ):
        assert (m[name].value, m[name].null_reason) == (None, "no_gold"), name
    assert m["coverage"].fraction == Fraction(2, 4) and m["refusal_rate"].fraction == Fraction(1, 4)


def test_an_empty_set_has_every_metric_null() -> None:
    result = gate_metrics([], resamples=1000)
    assert all(r.value is None for r in result.metrics.values())
    assert result.bootstrap is None and result.counts.n_questions == 0


def test_alpha_is_the_credit_of_a_partial_answer() -> None:
    rows = [GateRow(PASS, HAS, support=s) for s in ("full", "partial", "none")]
    assert metric_values(rows, Fraction(1, 2))["factuality"].fraction == Fraction(1, 2)
    assert metric_values(rows, Fraction(3, 10))["factuality"].fraction == Fraction(13, 30)
    policy = EvidenceGatePolicy({"name": "gate", "alpha": "0.3"})
    decisions = policy.decide(GateInputs(questions=g2_questions()))
    assert policy.metrics(decisions, resamples=0).metrics["factuality"].fraction == Fraction(33, 60)


def test_support_metrics_read_passed_questions_only() -> None:
    rows = [
        GateRow(PASS, HAS, support=SupportLevel.FULL, confidence=0.9),
        GateRow(ABSTAIN, NO, support=SupportLevel.NONE, confidence=0.1),
    ]
    m = metric_values(rows, Fraction(1, 2))
    assert m["factuality"].fraction == 1 and m["selective_risk_support"].fraction == 0
    # AURC ranks every annotated question, whatever the gate decided: here ideally
    assert m["aurc_support"].fraction == m["aurc_opt_support"].fraction == Fraction(1, 4)
    assert m["e_aurc_support"].fraction == 0


def test_citation_quality_shares_among_annotated_passes() -> None:
    rows = [GateRow(PASS, HAS, citation_quality=q) for q in ("GOOD", "GOOD", "WEAK", "BAD")] + [
        GateRow(PASS, HAS),
        GateRow(ABSTAIN, NO, citation_quality="BAD"),
    ]
    m = metric_values(rows, Fraction(1, 2))
    assert [m[f"citation_quality_{q}"].fraction for q in ("good", "weak", "bad")] == [
        Fraction(1, 2),
        Fraction(1, 4),
        Fraction(1, 4),
    ]


def test_bootstrap_intervals_are_reproducible_and_bracket_the_point() -> None:
    decisions = _g2_decisions()
    first = gate_metrics(decisions, resamples=300, random_state=7)
    assert first == gate_metrics(decisions, resamples=300, random_state=7)
    assert first != gate_metrics(decisions, resamples=300, random_state=8)
    accuracy = first.metrics["abstention_accuracy"]
    assert accuracy.ci is not None and accuracy.ci_method == "bootstrap-percentile"
    assert accuracy.ci[0] <= (accuracy.value or 0) <= accuracy.ci[1]
    assert accuracy.n_resamples_valid == 300
    precision = first.metrics["abstention_precision"]  # null in resamples without abstention
    assert precision.n_resamples_valid is not None and 0 < precision.n_resamples_valid <= 300
    assert first.metrics["balanced_accuracy"].ci is not None
    assert first.metrics["aurc"].ci is None  # a ranking statistic: no interval
    perfect = gate_metrics([GateRow(PASS, HAS)] * 5, resamples=200)
    assert perfect.metrics["abstention_accuracy"].ci == (1.0, 1.0)


def test_per_question_counts_pool_to_the_metric_and_pair_two_gates() -> None:
    questions = g2_questions()
    strict = EvidenceGatePolicy(CONFIG.with_thresholds("0.50", "0.10"))
    rows_a = [GateRow.of(d) for d in _g2_decisions()]
    rows_b = [GateRow.of(d) for d in strict.decide(GateInputs(questions=questions))]
    counts_a = metric_counts(rows_a, Fraction(1, 2))
    point = metric_values(rows_a, Fraction(1, 2))
    for name, counts in counts_a.items():
        if point[name].value is not None and name != "abstention_f1":
            assert Fraction(sum(counts.numerator), sum(counts.denominator)) == point[name].fraction
    b = metric_counts(rows_b, Fraction(1, 2))["coverage"]
    delta = paired_delta_interval(counts_a["coverage"], b, resamples=200, random_state=0)
    assert delta.ci is not None and delta.ci[0] <= Fraction(6, 10) - Fraction(2, 10) <= delta.ci[1]
