"""Property-based invariants of the evidence gate:
random questions with 0–25 candidates at random ranks, scores drawn from {0, the
thresholds, 1, random floats, invalid values}, random record statuses and gold fields."""

from __future__ import annotations

import math
import random
from fractions import Fraction

from _gate_fixtures import candidate, gate_record
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.core.decisions import GateOutcome
from assay.core.outcomes import Status
from assay.policies import canonical_json
from assay.policies.evidence_gate._aurc import aurc, aurc_optimal
from assay.policies.evidence_gate._config import EvidenceGateConfig, GateQuestion
from assay.policies.evidence_gate._metrics import gate_metrics
from assay.policies.evidence_gate._policy import EvidenceGatePolicy, GateInputs
from assay.policies.evidence_gate._records import GateDecisionRecord

GRID = ["0.05", "0.10", "0.15", "0.20", "0.25", "0.30", "0.35", "0.40"]
FEW = settings(max_examples=60, deadline=None)

scores = st.one_of(
    st.sampled_from([0.0, 1.0, *(float(g) for g in GRID)]),
    st.floats(min_value=0.0, max_value=1.0),
)
invalid_scores = st.sampled_from([math.nan, math.inf, 1.5, -0.1])


@st.composite
def questions(draw: st.DrawFn) -> list[GateQuestion]:
    out = []
    for i in range(draw(st.integers(0, 12))):
        qid = f"q{i:02d}"
        status = draw(st.sampled_from([Status.OK] * 4 + [Status.API_ERROR, Status.PARSE_ERROR]))
        pairs = draw(st.lists(st.tuples(st.integers(1, 120), scores), max_size=25))
        if pairs and draw(st.sampled_from([False] * 5 + [True])):  # one broken score
            pairs[draw(st.integers(0, len(pairs) - 1))] = (
                draw(st.integers(1, 120)),
                draw(invalid_scores),
            )
        cands = [
            candidate(
                f"{qid}-{n}", rank, score, draw(st.sampled_from(["d1", "d2", None])), rank % 3
            )
            for n, (rank, score) in enumerate(pairs)
        ]
        record = (
            None
            if draw(st.booleans()) and draw(st.booleans())
            else gate_record(qid, cands, status=status, dataset="prop")
        )
        out.append(
            GateQuestion(
                dataset="prop",
                question_id=qid,
                record=record,
                label=draw(st.sampled_from([None, "has_evidence", "no_evidence"])),
                support=draw(st.sampled_from([None, "full", "partial", "none", 0.5])),
                citation_quality=draw(st.sampled_from([None, "GOOD", "weak", "BAD"])),
            )
        )
    return out


@st.composite
def thresholds(draw: st.DrawFn) -> tuple[str, str]:
    tau_min = draw(st.sampled_from(GRID[:-1]))
    tau = draw(st.sampled_from([g for g in GRID if float(g) > float(tau_min)]))
    return tau, tau_min


def _decide(
    qs: list[GateQuestion], tau: str, tau_min: str, top_k: int = 12
) -> list[GateDecisionRecord]:
    config = EvidenceGateConfig(name="gate", tau=tau, tau_min=tau_min, top_k=top_k)
    return EvidenceGatePolicy(config).decide(GateInputs(questions=qs))


@FEW
@given(questions(), thresholds(), st.integers(1, 12))
def test_only_usable_records_pass_and_every_pass_cites_admissible_evidence(
    qs: list[GateQuestion], taus: tuple[str, str], top_k: int
) -> None:
    tau, tau_min = taus
    by_key = {q.question_id: q for q in qs}
    for d in _decide(qs, tau, tau_min, top_k):
        record = by_key[d.question_id].record
        if record is None or record.status is not Status.OK:
            assert d.outcome is GateOutcome.REFUSE and d.rule.value == "error"
        if d.outcome is GateOutcome.REFUSE:
            assert d.correct is not True and d.evidence == [] and d.s_final is None
        if d.outcome is not GateOutcome.PASS:
            assert d.evidence_count == 0
            continue
        assert d.s_final is not None and d.s_final >= float(tau)
        assert d.citations and d.evidence_count == len(d.citations) >= 1
        assert 1 <= len(d.evidence) <= top_k
        assert all(c.score >= float(tau_min) for c in d.citations)


@FEW
@given(questions(), thresholds())
def test_raising_tau_never_passes_more_questions(
    qs: list[GateQuestion], taus: tuple[str, str]
) -> None:
    tau, tau_min = taus
    passed = {d.question_id for d in _decide(qs, tau, tau_min) if d.outcome is GateOutcome.PASS}
    for higher in (g for g in [*GRID, "0.9", "1"] if float(g) > float(tau)):
        above = {
            d.question_id for d in _decide(qs, higher, tau_min) if d.outcome is GateOutcome.PASS
        }
        assert above <= passed


@FEW
@given(questions(), thresholds())
def test_outcome_rates_partition_and_metrics_stay_in_range(
    qs: list[GateQuestion], taus: tuple[str, str]
) -> None:
    m = gate_metrics(_decide(qs, *taus), resamples=0).metrics
    if qs:
        rates = [m[k].fraction for k in ("coverage", "abstention_rate", "refusal_rate")]
        assert sum(r for r in rates if r is not None) == 1 and None not in rates
    for name, value in m.items():
        assert value.value is None or 0.0 <= value.value <= 1.0, name
        assert (value.value is None) == (value.null_reason is not None), name
    precision, recall = m["abstention_precision"].fraction, m["abstention_recall"].fraction
    if precision and recall:
        assert m["abstention_f1"].fraction == 2 * precision * recall / (precision + recall)


@settings(max_examples=25, deadline=None)
@given(questions(), thresholds(), st.randoms(use_true_random=False))
def test_input_order_changes_no_byte_of_decisions_or_metrics(
    qs: list[GateQuestion], taus: tuple[str, str], rng: random.Random
) -> None:
    shuffled = list(qs)
    rng.shuffle(shuffled)
    first, second = _decide(qs, *taus), _decide(shuffled, *taus)
    assert [canonical_json(d) for d in first] == [canonical_json(d) for d in second]
    assert canonical_json(gate_metrics(first, resamples=40)) == canonical_json(
        gate_metrics(second, resamples=40)
    )


@FEW
@given(
    st.lists(st.tuples(st.sampled_from([0.0, 0.2, 0.5, 0.8, 1.0]), st.booleans()), max_size=30),
    st.randoms(use_true_random=False),
)
def test_aurc_ignores_order_and_never_beats_the_ideal_ranking(
    items: list[tuple[float, bool]], rng: random.Random
) -> None:
    shuffled = list(items)
    rng.shuffle(shuffled)
    assert aurc(items) == aurc(shuffled)
    actual, best = aurc(items), aurc_optimal(items)
    if items:
        assert actual is not None and best is not None and Fraction(0) <= best <= actual <= 1
    else:
        assert actual is None and best is None
