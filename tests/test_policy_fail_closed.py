"""Fail-closed rendering: fixture C-1, the state rule and its ties, renderings and
outcomes, negation, paraphrase and set-score evidence, the atomicity lint, failed inputs,
one-line configuration errors, the gate composition."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import pytest
from _fc_fixtures import C1, c1_response, chunk, claim, pair, response, set_score

from assay.core.registry import POLICIES
from assay.errors import SpecError
from assay.policies import Policy
from assay.policies.fail_closed import (
    Decision,
    FailClosedPolicy,
    FCResponse,
    Mode,
    fail_closed_metrics,
    load_config,
    render,
)


def _states(decision: Decision) -> dict[str, tuple[str, str, list[str]]]:
    return {c.claim_id: (c.native.value, c.reason.value, c.mse) for c in decision.claims}


C1_EXPECTED = {
    "c1": ("VERIFIED", "entailed", ["s1"]),
    "c2": ("BLOCKED", "contradiction", ["s3"]),
    "c3": ("VERIFIED", "entailed", ["s5"]),
    "c4": ("BLOCKED", "contradiction", ["s6"]),
    "c5": ("VERIFIED", "entailed", ["s8", "s9"]),
    "c6": ("UNVERIFIED", "no_evidence", []),
    "c7": ("UNVERIFIED", "verification_not_ok", []),
    "c8": ("UNVERIFIED", "below_tau_entail", []),
}


def test_c1_every_state_mse_and_reason() -> None:
    decision = FailClosedPolicy().decide(c1_response())
    assert _states(decision) == C1_EXPECTED
    c5 = next(c for c in decision.claims if c.claim_id == "c5")
    assert c5.mse_score is not None and c5.mse_score.p_entail == 0.88
    assert c5.max_entail == 0.60  # no single span reaches tau_entail
    c2 = next(c for c in decision.claims if c.claim_id == "c2")
    assert c2.contradicting == ["s4"] and c2.max_contradict == 0.80
    assert [c.decision.value for c in decision.claims] == [
        "assert", "dispute", "assert", "dispute", "assert", "withhold", "withhold", "withhold"
    ]  # fmt: skip


def test_c1_renderings_and_outcome() -> None:
    policy = FailClosedPolicy()
    decision = policy.decide(c1_response())
    strict = decision.response.rendered
    assert strict.mode == "strict" and strict.shown == ["c1", "c3", "c5"]
    assert strict.collapsed == [] and set(strict.hidden) == {"c2", "c4", "c6", "c7", "c8"}
    assert [(n.claim_id, n.reason.value) for n in decision.response.not_verified] == [
        ("c6", "no_evidence"),
        ("c7", "verification_not_ok"),
        ("c8", "below_tau_entail"),
    ]
    assert decision.response.n_blocked == 2  # strict shows their number, not their text
    mixed = render(Mode.MIXED, decision.claims)
    assert mixed.shown == ["c1", "c3", "c5"] and mixed.collapsed == ["c6", "c7", "c8"]
    assert mixed.hidden == ["c2", "c4"]
    debug = render(Mode.DEBUG, decision.claims)
    assert debug.shown == list(C1) and debug.hidden == []
    assert decision.response.outcome == "answer_partial" and not strict.empty


def test_c1_metrics_equal_the_spec_as_fractions() -> None:
    metrics = fail_closed_metrics([FailClosedPolicy().decide(c1_response())]).metrics
    expected = {
        "vcp": (2, 3),
        "vc": (2, 5),
        "uer@strict": (1, 3),
        "uer@mixed": (2, 6),
        "cer@strict": (0, 3),
        "cer@mixed": (0, 6),
        "catch_rate": (2, 3),
    }
    for name, (num, den) in expected.items():
        got = metrics[name]
        assert (got.numerator, got.denominator) == (num, den), name
        assert got.fraction == Fraction(num, den)
    assert round(metrics["vcp"].value or 0, 4) == 0.6667
    assert round(metrics["uer@mixed"].value or 0, 4) == 0.3333


def test_c4_would_verify_if_contradiction_blocked_only_above_the_threshold() -> None:
    """The rejected reading (block only at > tau_contradict) verifies c4; the decision
    (block at >=) blocks it, and just below the tie it verifies."""
    c4 = C1["c4"][1]
    at_tie = response([claim("c4", [pair(*p) for p in c4])])
    assert FailClosedPolicy().decide(at_tie).claims[0].native == "BLOCKED"
    below = [("s6", 0.90, 0.00), ("s7", 0.20, math.nextafter(0.70, 0.0))]
    just_below = response([claim("c4", [pair(*p) for p in below])])
    assert FailClosedPolicy().decide(just_below).claims[0].native == "VERIFIED"


def test_entailment_ties_verify_and_label_ties_go_against_entailment() -> None:
    policy = FailClosedPolicy()
    tie = response([claim("c", [pair("s", 0.85, 0.05)])])
    assert policy.decide(tie).claims[0].native == "VERIFIED"
    below = response([claim("c", [pair("s", math.nextafter(0.85, 0.0), 0.05)])])
    assert policy.decide(below).claims[0].reason == "below_tau_entail"
    low_tau = FailClosedPolicy.from_spec({"tau_entail": "0.40"})
    neutral_tie = {"span_id": "s", "p_entail": 0.45, "p_contradict": 0.10, "p_neutral": 0.45}
    decided = low_tau.decide(response([claim("c", [neutral_tie])])).claims[0]
    assert (decided.native, decided.reason) == ("UNVERIFIED", "entail_not_top_label")


def test_negation_flip_is_never_verified() -> None:
    """Negation: 'X is not approved' against the claim 'X is approved'."""
    flipped = {"span_id": "s", "p_entail": 0.05, "p_contradict": 0.90, "p_neutral": 0.05}
    neutral_top = {"span_id": "s", "p_entail": 0.30, "p_contradict": 0.20, "p_neutral": 0.50}
    policy = FailClosedPolicy()
    decided = policy.decide(response([claim("c", [flipped], text="X is approved.")]))
    assert decided.claims[0].native == "BLOCKED"
    decided = policy.decide(response([claim("c", [neutral_top], text="X is approved.")]))
    assert decided.claims[0].native == "UNVERIFIED"


def test_paraphrase_is_verified_on_the_score_alone() -> None:
    """Paraphrase: no lexical overlap between claim and span, p_entail 0.90 -> VERIFIED."""
    span = chunk("k", [("s", "The medication received regulatory clearance in 2019.")], rank=1)
    answer = response(
        [claim("c", [pair("s", 0.90, 0.02)], text="Approval came two years before 2021.")],
        chunks=[span],
    )
    decided = FailClosedPolicy().decide(answer).claims[0]
    assert decided.native == "VERIFIED" and decided.evidence[0].text == span["spans"][0]["text"]


def test_multi_hop_needs_the_recorded_set_score() -> None:
    """A set score: c5 of fixture C-1 verifies on {s8, s9}; without it, it does not."""
    status, pairs, sets, _ = C1["c5"]
    with_set = [claim("c5", [pair(*p) for p in pairs], set_scores=[set_score(*sets[0])])]
    decided = FailClosedPolicy().decide(response(with_set)).claims[0]
    assert (decided.native, decided.mse) == ("VERIFIED", ["s8", "s9"])
    assert [e.span_id for e in decided.evidence] == ["s8", "s9"]
    no_set = [claim("c5", [pair(*p) for p in pairs])]
    assert FailClosedPolicy().decide(response(no_set)).claims[0].reason == "below_tau_entail"
    one_span_max = FailClosedPolicy.from_spec({"mse_max_spans": 1}).decide(response(with_set))
    assert one_span_max.claims[0].native == "UNVERIFIED"


def test_mse_is_the_greedy_prefix_by_entailment_then_rank_then_offset() -> None:
    chunks = [
        chunk("k1", [("a", "A."), ("b", "B.")], rank=2),
        chunk("k2", [("c", "C."), ("d", "D.")], rank=1),
    ]
    pairs = [pair("a", 0.6, 0.0), pair("b", 0.5, 0.0), pair("c", 0.5, 0.0), pair("d", 0.6, 0.0)]
    sets = [set_score(("a", "d"), 0.7), set_score(("a", "c", "d"), 0.9)]
    answer = response([claim("x", pairs, set_scores=sets)], chunks=chunks)
    decided = FailClosedPolicy().decide(answer).claims[0]
    # d (rank 1) before a (rank 2) at 0.6; then c (rank 1) before b at 0.5
    assert decided.mse == ["d", "a", "c"] and decided.n_pairs_scored == 4 + 2


def test_offsets_break_ties_only_within_a_chunk() -> None:
    """Chunks of equal rank go by chunk id, so a longer text elsewhere never flips a tie
    (offsets follow from text lengths; texts are never read)."""
    for filler in ("x", "a much longer first sentence that moves the offsets."):
        chunks = [
            chunk("b", [("b0", "B.")], rank=1),
            chunk("a", [("a-pad", filler), ("a1", "A.")], rank=1),
        ]
        pairs = [pair("b0", 0.9, 0.0), pair("a1", 0.9, 0.0)]
        decided = FailClosedPolicy().decide(response([claim("c", pairs)], chunks=chunks))
        assert decided.claims[0].mse == ["a1"]


def test_every_claim_unverified_or_blocked_abstains_and_all_failed_refuses() -> None:
    """No VERIFIED claim abstains; every claim's inputs failed refuses."""
    policy = FailClosedPolicy()
    none_verified = response(
        [claim("a", [pair("s1", 0.2, 0.1)]), claim("b", [pair("s2", 0.15, 0.8)])]
    )
    decided = policy.decide(none_verified)
    assert [c.native for c in decided.claims] == ["UNVERIFIED", "BLOCKED"]
    assert decided.response.rendered.empty and decided.response.rendered.shown == []
    assert (decided.response.outcome, decided.response.reason) == ("abstain", "no_verified_claim")
    failed = response(
        [
            {**claim("a", [pair("s1", 0.99, 0.0)]), "verification_status": "api_error"},
            {**claim("b", [pair("s2", 0.99, 0.0)]), "verification_status": "truncated"},
            {"claim_id": "c"},  # no verification record
            claim("d", [pair("s3", float("nan"), 0.0)]),
        ]
    )
    decided = policy.decide(failed)
    assert [c.reason for c in decided.claims] == [
        "verification_not_ok", "verification_not_ok", "missing_verification", "invalid_score"
    ]  # fmt: skip
    assert (decided.response.outcome, decided.response.reason) == (
        "refuse",
        "all_verifications_failed",
    )
    assert policy.decide(response([])).response.outcome == "abstain"
    full = policy.decide(response([claim("a", [pair("s", 0.9, 0.0)])]))
    assert full.response.outcome == "answer_full" and full.response.native == "all_verified"


@pytest.mark.parametrize(
    "bad",
    [
        {"p_entail": 1.5},
        {"p_entail": -0.1},
        {"p_contradict": float("inf")},
        {"p_neutral": float("nan")},
        {"p_neutral": None},
    ],
)
def test_one_invalid_score_withholds_the_whole_claim(bad: dict[str, Any]) -> None:
    """One invalid score withholds the claim: valid pairs of the claim are not salvaged."""
    pairs = [pair("good", 0.95, 0.0), {**pair("bad", 0.1, 0.1), **bad}]
    decided = FailClosedPolicy().decide(response([claim("c", pairs)])).claims[0]
    assert (decided.native, decided.reason) == ("UNVERIFIED", "invalid_score")
    assert decided.max_entail is None and decided.mse == []


def test_an_invalid_set_score_also_withholds() -> None:
    pairs = [pair("a", 0.6, 0.0), pair("b", 0.6, 0.0)]
    bad_set = {**set_score(("a", "b"), 0.9), "p_contradict": 2.0}
    decided = FailClosedPolicy().decide(response([claim("c", pairs, set_scores=[bad_set])]))
    assert decided.claims[0].reason == "invalid_score"


def test_unsupported_by_design_and_label_confidence_scores() -> None:
    policy = FailClosedPolicy()
    flagged = claim("c", [pair("s", 0.99, 0.0)], unsupported_by_design=True)
    assert policy.decide(response([flagged])).claims[0].reason == "unsupported_by_design"
    # a verifier with only a label and a confidence: p_label = confidence, the others 0
    label_only = {
        "span_id": "s",
        "p_entail": 0.9,
        "p_contradict": 0.0,
        "p_neutral": 0.0,
        "score_source": "label_confidence",
    }
    assert policy.decide(response([claim("c", [label_only])])).claims[0].native == "VERIFIED"


def test_atomicity_lint_flags_and_rejects_only_when_asked() -> None:
    """The lint flags joined or long claims; it changes a state only with
    `reject_non_atomic`."""
    texts = {
        "and": "Aspirin thins blood and eases pain.",
        "because": "It works BECAUSE of COX inhibition.",
        "which": "A drug which is cheap.",
        "long": " ".join(["word"] * 41),
        "ok": "Aspirin thins blood; sandwich candid Andes.",  # no whole-word joiner
    }
    claims = [claim(k, [pair(f"s{k}", 0.95, 0.0)], text=t) for k, t in texts.items()]
    lenient = FailClosedPolicy().decide(response(claims))
    flags = {c.claim_id: c.atomicity_flags for c in lenient.claims}
    assert flags == {
        "and": ["contains:and"],
        "because": ["contains:because"],
        "which": ["contains:which"],
        "long": ["too_long"],
        "ok": [],
    }
    assert all(c.native == "VERIFIED" for c in lenient.claims)
    strict = FailClosedPolicy.from_spec({"reject_non_atomic": True}).decide(response(claims))
    reasons = {c.claim_id: c.reason.value for c in strict.claims}
    assert reasons == {k: "non_atomic" for k in ("and", "because", "which", "long")} | {
        "ok": "entailed"
    }
    longer = FailClosedPolicy.from_spec({"max_claim_tokens": 41}).decide(response(claims))
    assert next(c for c in longer.claims if c.claim_id == "long").atomicity_flags == []


@pytest.mark.parametrize(
    ("block", "field"),
    [
        ({"tau_entail": "1.5"}, "tau_entail"),
        ({"tau_contradict": "-0.1"}, "tau_contradict"),
        ({"tau_entail": "abc"}, "tau_entail"),
        ({"tau_entail": True}, "tau_entail"),
        ({"tau_entail": "nan"}, "tau_entail"),
        ({"mode": "lenient"}, "mode"),
        ({"tau_ential": "0.8"}, "tau_ential"),
        ({"caps": {"max_pairs": 0}}, "caps.max_pairs"),
        ({"caps": {"max_pair": 10}}, "caps.max_pair"),
        ({"mse_max_spans": 0}, "mse_max_spans"),
    ],
)
def test_bad_configuration_is_one_line_naming_the_field(block: dict[str, Any], field: str) -> None:
    """A bad key or value is one line naming the field, before any work."""
    with pytest.raises(SpecError) as info:
        load_config(block, file="policies.toml")
    text = info.value.render()
    assert "\n" not in text and text.startswith("policies.toml: ") and f"'{field}'" in text


def test_configuration_defaults_and_canonical_thresholds() -> None:
    policy = FailClosedPolicy()
    described = policy.describe()
    assert described["tau_entail"] == "0.85" and described["tau_contradict"] == "0.7"
    assert described["mode"] == "strict" and described["mse_max_spans"] == 3
    assert described["caps"] == {
        "max_claims": 12,
        "max_spans_per_claim": 20,
        "max_pairs": 240,
        "max_chunks": 10,
        "max_spans_per_chunk": 8,
    }
    assert described["version"] == policy.version == 1 and policy.kind == "fail_closed"
    same = FailClosedPolicy.from_spec({"tau_contradict": "0.70", "tau_entail": ".850"})
    assert same.sha256 == policy.sha256
    assert POLICIES.get("fail_closed") is FailClosedPolicy
    assert isinstance(policy, Policy) and policy.name == "fail_closed"


def test_gate_composition() -> None:
    """Behind a gate: gate abstain -> abstain, every claim withheld; refuse -> refuse; pass ->
    only evidence inside the gate's E(q)."""
    base = c1_response()
    policy = FailClosedPolicy()
    abstained = policy.decide(
        FCResponse.model_validate({**_dump(base), "gate": {"outcome": "abstain"}})
    )
    assert abstained.response.outcome == "abstain" and abstained.response.gate == "abstain"
    assert {c.reason for c in abstained.claims} == {"gate_abstained"}
    refused = policy.decide(
        FCResponse.model_validate({**_dump(base), "gate": {"outcome": "refuse"}})
    )
    assert refused.response.outcome == "refuse"
    assert {(c.native, c.reason) for c in refused.claims} == {("UNVERIFIED", "gate_refused")}
    gated = FCResponse.model_validate(
        {**_dump(base), "gate": {"outcome": "pass", "evidence_ids": ["k2", "k3"]}}
    )
    decided = policy.decide(gated)
    states = _states(decided)
    assert states["c1"] == ("UNVERIFIED", "no_evidence", [])  # s1, s2 live in k1
    assert states["c5"] == C1_EXPECTED["c5"]
    assert {(n.reference, n.code) for n in decided.references if n.claim_id == "c1"} == {
        ("s1", "outside_gate_evidence"),
        ("s2", "outside_gate_evidence"),
    }


def _dump(answer: FCResponse) -> dict[str, Any]:
    return answer.model_dump(mode="python")


def test_gold_aliases_and_bad_gold() -> None:
    aliases = {"entailed": "supported", "not_enough_info": "unsupported", "neutral": "unsupported"}
    aliases |= {"contradiction": "contradicted", "not-supported": "unsupported"}
    for given, gold in aliases.items():
        assert response([{"claim_id": "c", "gold": given}]).claims[0].gold == gold
    with pytest.raises(ValueError, match="gold"):
        response([{"claim_id": "c", "gold": "maybe"}])
