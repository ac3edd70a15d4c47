"""Property-based invariants of claim_selective: random
responses with 0–15 claims and 0–25 scored passages each, scores drawn from {0, the
thresholds, 1, random floats, invalid values}, random verification statuses and hostile
texts."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from assay.policies.claim_selective._inputs import ResponseInput
from assay.policies.claim_selective._metrics import evaluate
from assay.policies.claim_selective._policy import ClaimSelectivePolicy
from assay.policies.claim_selective._records import Decisions

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
THRESHOLD_VALUES = [0.0, 0.25, 0.3, 0.35, 0.4, 0.5, 0.55, 1.0]
HOSTILE = [
    "cite doc 3",
    "[VERIFIED]",
    "<script>alert(1)</script>",
    "\x00\x1b[31mred\x07",
    "passage p0 says so",
    "",
]

valid_scores = st.one_of(st.sampled_from(THRESHOLD_VALUES), st.floats(0.0, 1.0))
any_scores = st.one_of(
    valid_scores, valid_scores, valid_scores, st.sampled_from([math.nan, math.inf, 1.5, None])
)
statuses = st.sampled_from(["ok"] * 6 + ["parse_error", "refusal", "truncated", "api_error"])
texts = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=30))


@st.composite
def a_claim(draw: st.DrawFn, index: int, scores: st.SearchStrategy[Any] = any_scores) -> Any:
    n_pairs = draw(st.integers(0, 25))
    pairs = [
        {
            "passage_id": f"p{j}",
            "s_support": draw(scores),
            "s_conflict": draw(scores),
            "s_limitation": draw(scores),
            "relation_source": "nli",
        }
        for j in range(n_pairs)
    ]
    verification = None
    if draw(st.integers(0, 9)) > 0:
        verification = {"status": draw(statuses), "pairs": pairs}
    return {
        "claim_id": f"c{index}",
        "claim": draw(texts),
        "critical": draw(st.booleans()),
        "required": draw(st.sampled_from([None, True, False])),
        "gold_status": draw(
            st.sampled_from([None, "certified", "condition_limited", "conflicting", "omitted"])
        ),
        "verification": verification,
    }


@st.composite
def responses(draw: st.DrawFn, scores: st.SearchStrategy[Any] = any_scores) -> list[ResponseInput]:
    out = []
    for i in range(draw(st.integers(1, 4))):
        n_claims = draw(st.integers(0, 15))
        out.append(
            ResponseInput.model_validate(
                {
                    "answer_id": f"r{i}",
                    "question": draw(texts),
                    "intent": draw(st.sampled_from([None, "dosage", "pregnancy", "interaction"])),
                    "gold_action": draw(
                        st.sampled_from([None, "full", "partial", "conflict", "abstain"])
                    ),
                    "claims": [draw(a_claim(j, scores)) for j in range(n_claims)],
                }
            )
        )
    return out


@st.composite
def thetas(draw: st.DrawFn) -> dict[str, str]:
    support = draw(st.sampled_from(THRESHOLD_VALUES))
    limited = draw(st.sampled_from([v for v in THRESHOLD_VALUES if v <= support]))
    return {
        "support": str(support),
        "condition_limited": str(limited),
        "conflict": str(draw(st.sampled_from(THRESHOLD_VALUES))),
        "limitation": str(draw(st.sampled_from(THRESHOLD_VALUES))),
    }


def policy(thresholds: dict[str, str], selector: str = "threshold") -> ClaimSelectivePolicy:
    if selector == "intent_aware":
        return ClaimSelectivePolicy({"selector": selector})
    return ClaimSelectivePolicy({"thresholds": thresholds})


def fc1(claim: Any) -> bool:
    v = claim.verification
    if v is None or v.status != "ok":
        return True
    scores = [getattr(p, n) for p in v.pairs for n in ("s_support", "s_conflict", "s_limitation")]
    return not all(s is not None and math.isfinite(s) and 0 <= s <= 1 for s in scores)


@SETTINGS
@given(
    rows=responses(), thresholds=thetas(), selector=st.sampled_from(["threshold", "intent_aware"])
)
def test_fc1_fc2_failed_verifications_are_never_expressed(
    rows: list[ResponseInput], thresholds: dict[str, str], selector: str
) -> None:
    decisions = policy(thresholds, selector).decide(rows)
    claims = {(c.answer_id, c.claim_id): c for c in decisions.claims}
    for row in rows:
        failed = [fc1(c) for c in row.claims]
        for claim, bad in zip(row.claims, failed, strict=True):
            record = claims[(row.answer_id, claim.claim_id)]
            assert record.verification_ok is not bad
            if bad:
                assert (record.native, record.decision) == ("omitted", "withhold")
                assert record.links == [] and record.correct is not True
        action = next(r for r in decisions.responses if r.answer_id == row.answer_id)
        assert (action.native == "refuse") == (bool(failed) and all(failed))
        assert action.action_correct is not True or action.native != "refuse"


def statuses_of(decisions: Decisions, status: str) -> set[tuple[str, str]]:
    return {(c.answer_id, c.claim_id) for c in decisions.claims if c.native == status}


@SETTINGS
@given(rows=responses(), thresholds=thetas(), raise_to=st.sampled_from(THRESHOLD_VALUES))
def test_monotonicity_of_support_and_conflict(
    rows: list[ResponseInput], thresholds: dict[str, str], raise_to: float
) -> None:
    base = policy(thresholds).decide(rows)
    higher_support = dict(thresholds, support=str(max(raise_to, float(thresholds["support"]))))
    higher_conflict = dict(thresholds, conflict=str(max(raise_to, float(thresholds["conflict"]))))
    assert statuses_of(policy(higher_support).decide(rows), "certified") <= statuses_of(
        base, "certified"
    )
    assert statuses_of(policy(higher_conflict).decide(rows), "conflicting") <= statuses_of(
        base, "conflicting"
    )


def outcome(decisions: Decisions) -> list[tuple[Any, ...]]:
    claims = [
        (c.answer_id, c.claim_id, c.native, c.reason, c.pooled, c.certificate_valid)
        for c in decisions.claims
    ]
    return [*claims, *((r.answer_id, r.native, r.reason) for r in decisions.responses)]


@SETTINGS
@given(rows=responses(), thresholds=thetas(), data=st.data())
def test_pooling_ignores_zero_passages_and_order_and_never_drops(
    rows: list[ResponseInput], thresholds: dict[str, str], data: st.DataObject
) -> None:
    def edit(extra: dict[str, Any] | None, shuffle: bool) -> list[ResponseInput]:
        out = []
        for row in rows:
            claims = []
            for claim in row.claims:
                v = claim.verification
                if v is None or not v.pairs:
                    claims.append(claim)
                    continue
                pairs = list(v.pairs)
                if shuffle:
                    pairs = data.draw(st.permutations(pairs))
                if extra is not None:
                    pairs.append(pairs[0].model_copy(update={"passage_id": "new", **extra}))
                claims.append(
                    claim.model_copy(update={"verification": v.model_copy(update={"pairs": pairs})})
                )
            out.append(row.model_copy(update={"claims": claims}))
        return out

    chosen = policy(thresholds)
    base = chosen.decide(rows)
    zero = {"s_support": 0.0, "s_conflict": 0.0, "s_limitation": 0.0}
    assert outcome(chosen.decide(edit(zero, False))) == outcome(base)
    shuffled = chosen.decide(edit(None, True))
    assert outcome(shuffled) == outcome(base)
    assert evaluate(shuffled) == evaluate(base)
    triple = {k: data.draw(valid_scores) for k in zero}
    grown = {(c.answer_id, c.claim_id): c.pooled for c in chosen.decide(edit(triple, False)).claims}
    for c in base.claims:
        after = grown[(c.answer_id, c.claim_id)]
        if c.pooled is not None and after is not None:
            assert after.s_support >= c.pooled.s_support
            assert after.s_conflict >= c.pooled.s_conflict
            assert after.s_limitation >= c.pooled.s_limitation


@SETTINGS
@given(rows=responses(), thresholds=thetas(), data=st.data())
def test_texts_change_no_decision_and_no_metric(
    rows: list[ResponseInput], thresholds: dict[str, str], data: st.DataObject
) -> None:
    hostile = [
        row.model_copy(
            update={
                "question": data.draw(texts),
                "claims": [c.model_copy(update={"claim": data.draw(texts)}) for c in row.claims],
            }
        )
        for row in rows
    ]
    chosen = policy(thresholds)
    a, b = chosen.decide(rows), chosen.decide(hostile)
    assert [c.model_dump(exclude={"claim"}) for c in a.claims] == [
        c.model_dump(exclude={"claim"}) for c in b.claims
    ]
    assert a.responses == b.responses and evaluate(a) == evaluate(b)


@SETTINGS
@given(rows=responses(), thresholds=thetas())
def test_metric_ranges_and_f1_as_the_harmonic_mean(
    rows: list[ResponseInput], thresholds: dict[str, str]
) -> None:
    m = evaluate(policy(thresholds).decide(rows))
    ratios = m.ratios()
    for ratio in ratios.values():
        assert ratio.value is None or 0.0 <= ratio.value <= 1.0
    pau, precision, f1 = m.pau.fraction, m.pau_precision.fraction, m.f1.fraction
    if pau and precision:
        assert f1 == 2 * pau * precision / (pau + precision)
    assert m.uccr_cert.value is not None
    labelled = any(c.gold_status is not None for r in rows for c in r.claims)
    assert m.uccr_gold.value is not None or (not labelled and m.uccr_gold.null_reason == "no_gold")
    if m.f1.value is not None and m.pau.fraction == 0:
        assert m.f1.fraction == Fraction(0)
