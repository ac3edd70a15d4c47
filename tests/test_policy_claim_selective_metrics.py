"""claim_selective metrics: the paper's
count fixtures F-1 … F-10, Wilson and κ against the libraries, slices, controls, the
source-missing slice, bootstrap intervals and paired deltas."""

from __future__ import annotations

from fractions import Fraction

import pytest
from _cs_fixtures import claim, response, s1
from scipy.stats import binomtest
from sklearn.metrics import cohen_kappa_score

from assay.errors import DatasetError
from assay.policies.claim_selective._compare import paired_deltas, point_delta
from assay.policies.claim_selective._controls import (
    audit_agreement,
    majority_control,
    novel,
    overlap,
    shuffle_intents,
    without_intents,
)
from assay.policies.claim_selective._inputs import ResponseInput
from assay.policies.claim_selective._metrics import ClaimCounts, claim_metrics, evaluate
from assay.policies.claim_selective._policy import ClaimSelectivePolicy
from assay.policies.claim_selective._reference import express_all
from assay.policies.claim_selective._slices import slice_metrics, source_missing
from assay.policies.engine._numbers import Ratio

# id: (|P|, |P∩G|, |G|, n, correct actions or None), "PAU prec F1 uccr_gold coverage acc"
F_ROWS: dict[str, tuple[tuple[int, int, int, int, int | None], tuple[str | None, ...]]] = {
    row: (counts, tuple(None if v == "-" else v for v in expected.split()))
    for row, counts, expected in [
        ("F-1", (302, 299, 299, 314, 289), "1.0000 0.9901 0.9950 0.0099 0.9618 0.9204"),
        ("F-2", (306, 298, 299, 319, 287), "0.9967 0.9739 0.9851 0.0261 0.9592 0.8997"),
        ("F-3", (310, 297, 299, 314, 164), "0.9933 0.9581 0.9754 0.0419 0.9873 0.5223"),
        ("F-4", (306, 291, 299, 319, 176), "0.9732 0.9510 0.9620 0.0490 0.9592 0.5517"),
        ("F-5a", (314, 299, 299, 314, None), "1.0000 0.9522 0.9755 0.0478 1.0000 -"),
        ("F-5b", (319, 299, 299, 319, None), "1.0000 0.9373 0.9676 0.0627 1.0000 -"),
    ]
}


def f_counts(expressed: int, both: int, usable: int, n: int, correct: int | None) -> ClaimCounts:
    """One critical gold-labelled claim per item, as the paper's denominators imply."""
    return ClaimCounts(
        responses=n,
        claims=n,
        labelled=n,
        usable=usable,
        expressed_gold=expressed,
        expressed_usable=both,
        gold_critical=n,
        expressed_critical_gold=expressed,
        expressed_critical_unusable=expressed - both,
        expressed_critical=expressed,
        with_gold_action=0 if correct is None else n,
        action_correct=correct or 0,
    )


def f_responses(
    expressed: int, both: int, usable: int, n: int, correct: int | None
) -> list[ResponseInput]:
    """n one-claim responses with these counts under the default threshold selector:
    expressed claims are certified (action full), the others omitted (abstain); the
    first `correct` responses get the gold action they receive."""
    kinds = (
        [(True, True)] * both
        + [(True, False)] * (expressed - both)
        + [(False, True)] * (usable - both)
        + [(False, False)] * (n - expressed - usable + both)
    )
    rows = []
    for i, (shown, good) in enumerate(kinds):
        action, wrong = ("full", "partial") if shown else ("abstain", "full")
        gold = None if correct is None else (action if i < correct else wrong)
        triple = (0.9, 0.0, 0.0) if shown else (0.1, 0.0, 0.0)
        status = "certified" if good else "omitted"
        rows.append(response(f"r{i:04d}", [claim("c1", triple, gold=status)], gold_action=gold))
    return rows


def shown(r: Ratio | None) -> str | None:
    return None if r is None or r.value is None else f"{r.value:.4f}"


@pytest.mark.parametrize("row", sorted(F_ROWS))
def test_f1_to_f5_from_the_counts(row: str) -> None:
    (expressed, both, usable, n, correct), expected = F_ROWS[row]
    m = claim_metrics(f_counts(expressed, both, usable, n, correct))
    names = ("pau", "pau_precision", "f1", "uccr_gold", "critical_coverage", "action_accuracy")
    assert tuple(shown(m[k]) for k in names) == expected
    assert (m["uccr_gold"].numerator, m["uccr_gold"].denominator) == (expressed - both, expressed)
    assert m["critical_risk"] == m["uccr_gold"].model_copy(update={"ci": None, "ci_method": None})
    assert m["f1"].fraction == Fraction(2 * both, expressed + usable)
    assert m["uccr_cert"].value == 0.0
    if correct is None:
        assert m["action_accuracy"].null_reason == "no_gold"


def test_f2_f1_is_computed_from_counts_not_rounded_parts() -> None:
    m = claim_metrics(f_counts(306, 298, 299, 319, 287))
    assert m["f1"].fraction == Fraction(596, 605) and shown(m["f1"]) == "0.9851"
    rounded_pau, rounded_precision = 0.9967, 0.9739
    harmonic = 2 * rounded_pau * rounded_precision / (rounded_pau + rounded_precision)
    assert f"{harmonic:.4f}" == "0.9852"


@pytest.mark.parametrize(("row", "system"), [("F-1", "policy"), ("F-2", "policy"), ("F-5a", "all")])
def test_the_fixture_counts_come_out_of_real_decisions(row: str, system: str) -> None:
    counts, expected = F_ROWS[row]
    rows = f_responses(*counts)
    decisions = express_all(rows) if system == "all" else ClaimSelectivePolicy().decide(rows)
    m = evaluate(decisions).ratios()
    names = ("pau", "pau_precision", "f1", "uccr_gold", "critical_coverage", "action_accuracy")
    assert tuple(shown(m[k]) for k in names) == expected


def test_f6_paired_point_deltas() -> None:
    def delta(a: str, b: str, metric: str) -> str:
        ma, mb = (claim_metrics(f_counts(*F_ROWS[x][0])) for x in (a, b))
        value = point_delta(ma[metric], mb[metric])
        assert value is not None
        return f"{value:.4f}"

    assert delta("F-1", "F-3", "action_accuracy") == "0.3981"  # 125/314
    assert delta("F-2", "F-4", "action_accuracy") == "0.3480"  # 111/319
    assert delta("F-1", "F-3", "pau") == "0.0067"  # 2/299
    assert delta("F-2", "F-4", "pau") == "0.0234"  # 7/299
    assert delta("F-1", "F-3", "f1") == "0.0196"  # 598/601 - 594/609
    assert delta("F-2", "F-4", "f1") == "0.0231"  # 14/605


def test_paired_deltas_of_real_decisions_share_resamples() -> None:
    rows = f_responses(*F_ROWS["F-1"][0])
    strict = {"thresholds": {"support": "0.95", "condition_limited": "0.95"}}
    a = ClaimSelectivePolicy().decide(rows)
    b = ClaimSelectivePolicy(strict).decide(rows)  # every claim omitted, every response abstains
    deltas = {d.metric: d for d in paired_deltas(a, b, resamples=200, random_state=3)}
    assert deltas["action_accuracy"].delta == float(Fraction(289, 314))
    assert deltas["pau"].delta == 1.0 and deltas["pau"].ci == (1.0, 1.0)
    ci = deltas["action_accuracy"].ci
    assert ci is not None and ci[0] < 289 / 314 < ci[1]
    assert deltas["pau_precision"].delta is None  # b expresses nothing
    again = paired_deltas(a, b, resamples=200, random_state=3)
    assert [d.ci for d in again] == [d.ci for d in deltas.values()]
    with pytest.raises(DatasetError, match="same responses"):
        paired_deltas(a, ClaimSelectivePolicy().decide(rows[:-1]))


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [(0, 302, "0.0000", "0.0126"), (0, 306, "0.0000", "0.0124")]
    + [(3, 302, "0.0034", "0.0288"), (8, 306, "0.0133", "0.0507")],
)
def test_f7_wilson_intervals(k: int, n: int, low: str, high: str) -> None:
    counts = ClaimCounts(claims=n, expressed_critical=n, expressed_critical_invalid=k, responses=n)
    ci = claim_metrics(counts)["uccr_cert"].ci
    assert ci is not None and (f"{ci[0]:.4f}", f"{ci[1]:.4f}") == (low, high)
    reference = binomtest(k, n).proportion_ci(method="wilson")
    assert ci[0] == pytest.approx(reference.low, abs=1e-12)
    assert ci[1] == pytest.approx(reference.high, abs=1e-12)


def test_f8_reaudit_kappa() -> None:
    matrix = [[36, 11, 0], [11, 35, 0], [2, 3, 2]]
    labels = ["full", "conditional", "conflict"]
    got = audit_agreement(matrix, labels)
    assert got.n == 100 and shown(got.agreement) == "0.7300"
    assert got.kappa is not None and f"{got.kappa:.4f}" == "0.5027"
    weak = [labels[i] for i, row in enumerate(matrix) for j, c in enumerate(row) for _ in range(c)]
    audited = [labels[j] for row in matrix for j, c in enumerate(row) for _ in range(c)]
    assert got.kappa == pytest.approx(cohen_kappa_score(weak, audited), abs=1e-12)


# per source: (responses, correct, novel responses); novel ones are all of B's first,
# and all of C and D (A never novel); every novel response of B is correct
F9 = {
    "dev": {"A": (208, 201, 0), "B": (40, 40, 16), "C": (37, 33, 37), "D": (29, 15, 29)},
    "test": {"A": (209, 195, 0), "B": (41, 41, 9), "C": (38, 35, 38), "D": (31, 16, 31)},
}
F9_TEXT_OVERLAP = {"dev": 174, "test": 169}


def f9_split(split: str) -> tuple[list[ResponseInput], list[ResponseInput]]:
    """(train, evaluation): non-novel evaluation rows reuse a train URL (written
    differently), the first F9_TEXT_OVERLAP of them also a train evidence text."""
    train: list[ResponseInput] = []
    rows: list[ResponseInput] = []
    reused = 0
    for source, (n, correct, new) in F9[split].items():
        for i in range(n):
            key = f"{split}-{source}-{i}"
            is_novel = i < new
            text_shared = not is_novel and reused < F9_TEXT_OVERLAP[split]
            reused += int(text_shared)
            if not is_novel:
                train.append(
                    response(
                        f"t-{key}",
                        [],
                        split="train",
                        source_url=f"https://www.example.org/{key}/",
                        evidence_text=f"Evidence  for {key}" if text_shared else f"train {key}",
                    )
                )
            rows.append(
                response(
                    key,
                    [claim("c1", (0.9, 0.0, 0.0), gold="certified")],
                    split=split,
                    source=source,
                    source_url=f"HTTP://example.org/{key}#top" if not is_novel else f"new/{key}",
                    evidence_text=f"evidence FOR\n{key}" if text_shared else f"novel {key}",
                    gold_action="full" if i < correct else "partial",
                )
            )
    return train, rows


@pytest.mark.parametrize("split", ["dev", "test"])
def test_f9_slices_novelty_and_overlap(split: str) -> None:
    train, rows = f9_split(split)
    policy = ClaimSelectivePolicy()
    groups = slice_metrics(policy.decide(rows), "source")
    got = {g.value: (g.metrics.action_accuracy.numerator, g.metrics.action_accuracy.denominator)
           for g in groups}  # fmt: skip
    assert got == {s: (c, n) for s, (n, c, _) in F9[split].items()}
    assert sum(c for c, _ in got.values()) == {"dev": 289, "test": 287}[split]
    assert not any(g.descriptive for g in groups)
    fresh = novel(train, rows)
    m = evaluate(policy.decide(fresh))
    expected_novel = {"dev": (64, 82, "0.7805"), "test": (60, 78, "0.7692")}[split]
    accuracy = m.action_accuracy
    assert (accuracy.numerator, accuracy.denominator, shown(accuracy)) == expected_novel
    without_d = evaluate(policy.decide([r for r in fresh if r.source != "D"]))
    assert shown(without_d.action_accuracy) == {"dev": "0.9245", "test": "0.9362"}[split]
    report = overlap(train, rows)
    n = len(rows)
    assert (report.source_url.numerator, report.source_url.denominator) == (n - len(fresh), n)
    assert report.evidence_text.numerator == F9_TEXT_OVERLAP[split]
    assert shown(report.source_url) == {"dev": "0.7389", "test": "0.7555"}[split]
    assert shown(report.evidence_text) == {"dev": "0.5541", "test": "0.5298"}[split]


def test_small_slices_are_descriptive() -> None:
    groups = slice_metrics(ClaimSelectivePolicy().decide(s1()), "split")
    assert [(g.value, g.n_responses, g.descriptive) for g in groups] == [(None, 7, True)]


def test_f9_intent_majority_control() -> None:
    train = [
        response(f"t{i}", [], split="train", intent=intent, gold_action=gold)
        for i, (intent, gold) in enumerate(
            [("dosage", "full")] * 5 + [("dosage", "partial")] * 2
            + [("pregnancy", "partial")] * 4 + [("interaction", "conflict")] * 3
        )
    ]  # fmt: skip
    golds = [("dosage", "full")] * 150 + [("pregnancy", "partial")] * 100
    golds += [("interaction", "conflict")] * 33 + [("dosage", "abstain")] * 31
    dev = [response(f"d{i}", [], intent=x, gold_action=g) for i, (x, g) in enumerate(golds)]
    result = majority_control(train, dev, "majority_intent")
    acc = result.metrics["action_accuracy"]
    assert (acc.numerator, acc.denominator, shown(acc)) == (283, 314, "0.9013")
    assert result.confusion["full"]["abstain"] == 31


def test_majority_controls_break_ties_back_off_and_have_no_certificates() -> None:
    train = [
        response(f"t{i}", [], source=src, intent=intent, gold_action=gold)
        for i, (src, intent, gold) in enumerate(
            [("label", "dosage", "partial"), ("label", "dosage", "full")]
            + [("label", "pregnancy", "conflict"), ("label", "pregnancy", "partial")]
            + [("faers", "pregnancy", "abstain")] * 3 + [("faers", "dosage", "conflict")]
        )
    ]  # fmt: skip
    evaluation = [
        response("a", [], source="label", intent="dosage", gold_action="full"),
        response("b", [], source="label", intent="pregnancy", gold_action="partial"),
        response("c", [], source="pubmed", intent="monitoring", gold_action="abstain"),
    ]
    result = majority_control(train, evaluation, "majority_source_intent")
    assert [p[2] for p in result.predictions] == ["full", "partial", "abstain"]
    assert result.fallback == "abstain"
    assert result.metrics["action_accuracy"].value == 1.0
    for name in ("pau", "uccr_gold", "uccr_cert", "f1", "critical_coverage"):
        assert result.metrics[name].value is None
    by_claim_type = majority_control(train, evaluation, "majority_source_claim_type")
    # (label, no claim type): partial 2, full 1, conflict 1
    assert [p[2] for p in by_claim_type.predictions] == ["partial", "partial", "abstain"]


def test_intent_perturbations() -> None:
    intents = ["dosage", "pregnancy", "other"] * 4
    rows = [response(f"r{i}", [], intent=x) for i, x in enumerate(intents)]
    assert {r.intent for r in without_intents(rows)} == {None}
    shuffled = shuffle_intents(rows, random_state=7)
    assert sorted(str(r.intent) for r in shuffled) == sorted(str(r.intent) for r in rows)
    assert [r.intent for r in shuffled] == [r.intent for r in shuffle_intents(rows, 7)]
    assert [r.intent for r in shuffled] != [r.intent for r in rows]


@pytest.mark.parametrize("split", ["dev", "test"])
def test_f10_source_missing(split: str) -> None:
    n = {"dev": 314, "test": 319}[split]
    rows = source_missing(f_responses(*F_ROWS["F-1" if split == "dev" else "F-2"][0]))
    assert len(rows) == n
    selector = evaluate(ClaimSelectivePolicy().decide(rows))
    assert (selector.action_accuracy.numerator, selector.action_accuracy.denominator) == (n, n)
    assert selector.uccr_gold.value == 0.0 and selector.uccr_cert.value == 0.0
    for metric in (selector.pau, selector.pau_precision, selector.f1):
        assert metric.value is None and metric.null_reason == "zero_denominator"
    everything = evaluate(express_all(rows))
    assert everything.action_accuracy.value == 0.0
    assert (everything.uccr_gold.numerator, everything.uccr_gold.denominator) == (n, n)
    assert (everything.uccr_cert.numerator, everything.uccr_cert.denominator) == (n, n)
    assert everything.pau_precision.value == 0.0 and everything.f1.value == 0.0
    assert everything.pau.value is None and everything.pau.null_reason == "zero_denominator"


def test_s1_source_missing() -> None:
    rows = source_missing(s1())
    decisions = ClaimSelectivePolicy().decide(rows)
    assert {c.native for c in decisions.claims} == {"omitted"}
    assert {r.native for r in decisions.responses} == {"abstain"}
    m = evaluate(decisions)
    assert (m.action_accuracy.numerator, m.action_accuracy.denominator) == (7, 7)
    assert m.uccr_gold.value == 0.0 and m.uccr_cert.value == 0.0
    assert all(x.null_reason == "zero_denominator" for x in (m.pau, m.pau_precision, m.f1))
    ref = evaluate(express_all(rows))
    assert (ref.uccr_gold.numerator, ref.uccr_gold.denominator) == (10, 10)
    assert (ref.uccr_cert.numerator, ref.uccr_cert.denominator) == (10, 10)
    assert ref.pau_precision.value == 0.0 and ref.f1.value == 0.0 and ref.pau.value is None
    assert (ref.action_accuracy.numerator, shown(ref.action_accuracy)) == (1, "0.1429")


def test_empty_all_abstaining_and_gold_free_evaluations() -> None:
    empty = evaluate(ClaimSelectivePolicy().decide([]))
    assert empty.uccr_gold.value == 0.0 and empty.uccr_cert.value == 0.0
    others = [r for k, r in empty.ratios().items() if not k.startswith("uccr")]
    assert all(r.value is None for r in others)
    weak = [response(f"r{i}", [claim("c", (0.1, 0, 0), gold="certified")]) for i in range(3)]
    m = evaluate(ClaimSelectivePolicy().decide(weak))
    assert (m.pau.value, m.pau_precision.value, m.f1.value) == (0.0, None, 0.0)
    assert (m.uccr_gold.value, m.uccr_cert.value) == (0.0, 0.0)
    no_gold = [response(f"r{i}", [claim("c", (0.9, 0, 0))]) for i in range(3)]
    decisions = ClaimSelectivePolicy().decide(no_gold)
    assert [r.native for r in decisions.responses] == ["full"] * 3
    m = evaluate(decisions)
    for name in ("pau", "pau_precision", "f1", "uccr_gold", "critical_coverage", "action_accuracy"):
        assert m.ratios()[name].null_reason == "no_gold"
    assert m.uccr_cert.value == 0.0


def test_bootstrap_intervals() -> None:
    rows = f_responses(*F_ROWS["F-3"][0])
    decisions = ClaimSelectivePolicy().decide(rows)
    m = evaluate(decisions, resamples=300, random_state=5)
    assert m.pau.ci_method == "bootstrap-percentile" and m.pau.n_resamples_valid == 300
    assert m.action_accuracy.ci is not None
    assert m.action_accuracy.ci[0] < m.action_accuracy.value < m.action_accuracy.ci[1]  # type: ignore[operator]
    assert m.uccr_cert.ci_method == "wilson" and m.uccr_bootstrap is not None
    assert m.uccr_bootstrap["uccr_cert"].ci == (0.0, 0.0)  # all zero: the interval collapses
    assert evaluate(decisions, resamples=300, random_state=5) == m
    assert evaluate(decisions, resamples=300, random_state=6) != m
    right = [r.model_copy(update={"gold_action": "full"}) for r in f_responses(5, 5, 5, 5, 5)]
    perfect = evaluate(ClaimSelectivePolicy().decide(right), resamples=100)
    assert perfect.action_accuracy.ci == (1.0, 1.0)
    one_claim = [response("a", [claim("c", (0.9, 0, 0), gold="certified")]), response("b", [])]
    sparse = evaluate(ClaimSelectivePolicy().decide(one_claim), resamples=200)
    assert sparse.pau_precision.n_resamples_valid is not None
    assert 0 < sparse.pau_precision.n_resamples_valid < 200  # resamples of only "b" drop out
