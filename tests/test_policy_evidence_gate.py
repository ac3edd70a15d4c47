"""The evidence gate's decisions: G-2 decisions and rule codes,
score normalisation, fail-closed refusals, the evidence set and citations, the decision
log record, and what a claim-level policy chained behind the gate must do."""

from __future__ import annotations

import math

import pytest
from _gate_fixtures import DATASET, G2, candidate, g2_questions, gate_record, scored_record

from assay.core.decisions import ClaimDecision, GateOutcome, ResponseOutcome
from assay.core.outcomes import Status
from assay.core.registry import POLICIES
from assay.errors import SpecError
from assay.policies import Policy, canonical_json
from assay.policies.evidence_gate._compose import (
    GATE_ABSTAINED,
    GATE_REFUSED,
    gate_chain,
    gate_chains,
)
from assay.policies.evidence_gate._config import (
    EvidenceGateConfig,
    GateQuestion,
    SupportLevel,
    reranker_scores,
    support_from_claims,
)
from assay.policies.evidence_gate._decide import gate_record_sha256
from assay.policies.evidence_gate._policy import EvidenceGatePolicy, GateInputs
from assay.policies.evidence_gate._records import GateDecisionRecord


def _policy(**config: object) -> EvidenceGatePolicy:
    return EvidenceGatePolicy({"name": "gate", "tau": "0.30", "tau_min": "0.10", **config})


def _decide(questions: list[GateQuestion], **config: object) -> dict[str, GateDecisionRecord]:
    decisions = _policy(**config).decide(GateInputs(run_id="run-1", questions=questions))
    return {d.question_id: d for d in decisions}


def test_g2_every_decision_and_rule_code() -> None:
    decided = _decide(g2_questions())
    for q, _, _, label, outcome, rule, _ in G2:
        d = decided[q]
        assert (d.outcome.value, d.rule.value, d.label) == (outcome, rule, label), q
        assert d.decision.value == {"pass": "ANSWER", "abstain": "NO_ANSWER"}[outcome]
        assert d.correct is ((outcome == "pass") == (label == "has_evidence"))


def test_g2_passes_cite_evidence_and_use_the_score_of_their_pool() -> None:
    decided = _decide(g2_questions())
    for q, s_init, s_exp, *_ in G2:
        d = decided[q]
        if d.outcome is not GateOutcome.PASS:
            assert (d.citations, d.evidence, d.evidence_count) == ([], [], 0)
            continue
        assert d.citations and d.evidence_count >= 1
        assert d.evidence_count == len({(c.doc_id, c.page) for c in d.citations})
        expanded = d.rule.value.startswith("4b")
        assert (d.pool_used, d.reassessed) == (
            ("expanded", True) if expanded else ("initial", False)
        )
        assert d.s_final == (s_exp if expanded else s_init)
        assert d.s_final is not None and d.s_final >= 0.30


def test_reassessment_uses_the_expanded_pool_and_its_passages() -> None:
    d = _decide(g2_questions())["q04"]  # 0.25 initially, 0.45 at rank 70
    assert (d.s_initial, d.s_expanded, d.s_final) == (0.25, 0.45, 0.45)
    assert d.evidence[0] == "q04-p70" and d.citations[0].doc_id == "d3"
    # 4a uses the initial pool only: the rank-70 passage of q08 is not in E(q)
    q08 = _decide(g2_questions())["q08"]
    assert q08.rule.value == "4a_sufficient" and "q08-p70" not in q08.evidence


def test_ties_pass_at_tau_and_are_admissible_at_tau_min() -> None:
    decided = _decide(g2_questions())
    assert decided["q06"].outcome is GateOutcome.PASS  # 0.30 == tau
    q07 = decided["q07"]  # 0.10 == tau_min: admissible, reassessed, still short
    assert (q07.rule.value, q07.reassessed, q07.pool_used) == (
        "3_insufficient_after_reassess",
        True,
        "expanded",
    )


def test_evidence_set_is_top_k_by_score_then_rank_admissible_only() -> None:
    candidates = [
        candidate("a", 1, 0.50, "d1", 1),
        candidate("b", 2, 0.05, "d2", 1),  # below tau_min: not admissible
        candidate("c", 3, 0.40, "d1", 1),  # same (doc, page) as a
        candidate("d", 4, 0.40, "d1", 2),  # ties c on score: rank decides
        candidate("e", 5, 0.35, "d4", 9),
    ]
    q = GateQuestion(dataset=DATASET, question_id="q", record=gate_record("q", candidates))
    d = _decide([q], top_k=3)["q"]
    assert d.evidence == ["a", "c", "d"]  # top 3 of the pool: e is cut
    assert [(c.doc_id, c.page, c.passage_id) for c in d.citations] == [
        ("d1", 1, "a"),
        ("d1", 2, "d"),
    ]
    assert d.evidence_count == 2 and d.citations[0].score == 0.50
    wide = _decide([q], top_k=12)["q"]
    assert wide.evidence == ["a", "c", "d", "e"]  # b (0.05 < tau_min) never


def test_a_passage_without_doc_id_is_its_own_document() -> None:
    candidates = [candidate("a", 1, 0.9, None, None), candidate("b", 2, 0.8, None, None)]
    q = GateQuestion(dataset=DATASET, question_id="q", record=gate_record("q", candidates))
    assert _decide([q])["q"].evidence_count == 2


def test_normalisation_of_logits_and_identity_range() -> None:
    assert [round(s, 4) for s in reranker_scores([-2, 0, 2], "sigmoid")] == [0.1192, 0.5, 0.8808]
    assert reranker_scores([0.0, 0.25, 1.0], "identity") == [0.0, 0.25, 1.0]
    with pytest.raises(SpecError) as info:
        reranker_scores([0.5, 1.2], "identity")
    line = info.value.render()
    assert "\n" not in line and "normalization" in line and "1.2" in line


def test_logits_are_normalised_when_no_score_was_recorded() -> None:
    bare = candidate("a", 1, 0.5).model_copy(update={"rerank_score": None, "rerank_logit": 2.0})
    record = gate_record("q", [bare], s_initial=None, s_expanded=None)
    d = _decide([GateQuestion(dataset=DATASET, question_id="q", record=record)])["q"]
    assert d.s_initial == pytest.approx(0.8807970779778823, abs=0) and d.outcome is GateOutcome.PASS


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"tau": "0.10", "tau_min": "0.10"}, "tau"),
        ({"tau": "0.05", "tau_min": "0.10"}, "tau"),
        ({"tau": "1.5"}, "tau"),
        ({"tau_min": "-0.1"}, "tau_min"),
        ({"colour": "red"}, "colour"),
        ({"k1_initial": 200}, "k1_initial"),
    ],
)
def test_bad_configuration_is_one_line_naming_the_field(
    config: dict[str, object], field: str
) -> None:
    with pytest.raises(SpecError) as info:
        EvidenceGateConfig.parse({"name": "gate", **config}, file="policies.toml")
    line = info.value.render()
    assert "\n" not in line and line.startswith("policies.toml") and f"'{field}'" in line


def _refused(record: object) -> GateQuestion:
    return GateQuestion(dataset=DATASET, question_id="qx", record=record, label="no_evidence")


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        (None, "missing_gate_record"),
        (gate_record("qx", [], status=Status.API_ERROR, error="timeout"), "gate_not_ok"),
        (gate_record("qx", [candidate("a", 1, 0.9)], status=Status.PARSE_ERROR), "gate_not_ok"),
        (
            gate_record(
                "qx", [candidate("a", 1, 0.9).model_copy(update={"rerank_score": math.nan})]
            ),
            "invalid_score",
        ),
        (
            gate_record("qx", [candidate("a", 1, 0.9).model_copy(update={"rerank_score": 1.5})]),
            "invalid_score",
        ),
        (
            gate_record(
                "qx",
                [
                    candidate("a", 1, 0.9).model_copy(
                        update={"rerank_score": None, "rerank_logit": None}
                    )
                ],
            ),
            "invalid_score",
        ),
        (gate_record("qx", [candidate("a", 1, 0.9)], s_initial=0.5), "inconsistent_scores"),
        (gate_record("qx", [candidate("a", 1, 0.9)], k1_expanded=50), "pool_too_small"),
    ],
)
def test_missing_failed_or_invalid_gate_records_refuse(record: object, reason: str) -> None:
    d = _decide([_refused(record)])["qx"]
    assert (d.outcome, d.decision.value, d.rule.value, d.reason) == (
        GateOutcome.REFUSE,
        "REFUSE",
        "error",
        reason,
    )
    assert d.correct is False and d.citations == [] and d.evidence == []


def test_a_refusal_without_label_has_no_correctness() -> None:
    q = GateQuestion(dataset=DATASET, question_id="qx")
    assert _decide([q])["qx"].correct is None


def test_decision_log_carries_the_audit_fields_and_is_canonical_json() -> None:
    policy = _policy()
    questions = g2_questions()
    d = policy.decide(GateInputs(run_id="run-1", questions=questions))[0]
    assert (d.run_id, d.dataset, d.question_id, d.gate_id) == ("run-1", DATASET, "q01", "ce-tiny")
    assert (d.policy_id, d.policy_version, d.policy_sha256) == ("gate", 1, policy.sha256)
    assert (d.tau, d.tau_min, d.k1_initial, d.k1_expanded, d.top_k) == ("0.3", "0.1", 50, 100, 12)
    assert d.reranker is not None and d.reranker.fingerprint == "ab" * 32
    assert d.gate_record_sha256 == gate_record_sha256(questions[0].record)
    line = canonical_json(d)
    assert '"citations":[{"doc_id":"d1","page":1,"passage_id":"q01-p1","score":0.92}' in line


def test_the_record_hash_ignores_timing_but_not_scores() -> None:
    record = scored_record("q01", 0.92, 0.92)
    cached = record.model_copy(update={"latency_s": 0.0, "cache_hit": True})
    assert gate_record_sha256(record) == gate_record_sha256(cached)
    rescored = record.model_copy(update={"s_initial": 0.91})
    assert gate_record_sha256(record) != gate_record_sha256(rescored)


def test_decisions_are_ordered_and_independent_of_input_order() -> None:
    questions = g2_questions()
    forward = _policy().decide(GateInputs(questions=questions))
    backward = _policy().decide(GateInputs(questions=list(reversed(questions))))
    assert [d.question_id for d in forward] == [q for q, *_ in G2]
    assert [canonical_json(d) for d in forward] == [canonical_json(d) for d in backward]


def test_policy_is_registered_and_its_hash_follows_every_setting() -> None:
    assert "evidence_gate" in POLICIES.names()
    built = POLICIES.get("evidence_gate")({"name": "gate"})
    assert built.describe()["tau"] == "0.3" and built.describe()["version"] == 1
    assert _policy().sha256 == _policy(tau="0.3").sha256  # "0.30" and "0.3" are one value
    assert _policy().sha256 != _policy(tau="0.35").sha256
    assert _policy().sha256 != _policy(top_k=5).sha256


def test_chained_policy_follows_the_gate() -> None:
    decided = _policy().decide(GateInputs(questions=g2_questions()))
    by_id = {d.question_id: d for d in decided}
    passed = gate_chain(by_id["q04"], policy_id="gate")
    assert passed.decides and passed.response_outcome is None and passed.claim_decision is None
    assert passed.split(["q04-p70", "q04-p1", "elsewhere"]) == (
        ["q04-p70", "q04-p1"],
        ["elsewhere"],
    )
    abstained = gate_chain(by_id["q05"], policy_id="gate")
    assert (abstained.response_outcome, abstained.claim_decision, abstained.claim_reason) == (
        ResponseOutcome.ABSTAIN,
        ClaimDecision.WITHHOLD,
        GATE_ABSTAINED,
    )
    assert not abstained.admits("q05-p1")
    assert abstained.gate.rule.value == "3_insufficient_after_reassess"


def test_a_question_the_gate_never_decided_or_refused_is_refused_downstream() -> None:
    refused = _policy().decide(GateInputs(questions=[_refused(None)]))
    chains = gate_chains(refused, [(DATASET, "qx"), (DATASET, "unknown")], policy_id="gate")
    for chain in chains.values():
        assert chain.response_outcome is ResponseOutcome.REFUSE
        assert chain.claim_reason == GATE_REFUSED and chain.split(["a"]) == ([], ["a"])


@pytest.mark.parametrize(
    ("value", "level"),
    [
        (1, "full"),
        ("1", "full"),
        (0.5, "partial"),
        ("0.25", "partial"),
        (0, "none"),
        ("Full", "full"),
        (None, None),
    ],
)
def test_support_annotations_read_as_levels(value: object, level: str | None) -> None:
    q = GateQuestion(dataset=DATASET, question_id="q", support=value)
    assert (q.support.value if q.support else None) == level


@pytest.mark.parametrize("bad", [1.5, -0.5, "most", True])
def test_a_bad_support_annotation_is_rejected(bad: object) -> None:
    with pytest.raises(ValueError, match="support"):
        GateQuestion(dataset=DATASET, question_id="q", support=bad)


def test_support_derived_from_claim_verifications() -> None:
    assert support_from_claims([True, True]) is SupportLevel.FULL
    assert support_from_claims([True, False]) is SupportLevel.PARTIAL
    assert support_from_claims([False, False]) is SupportLevel.NONE
    assert support_from_claims([]) is None


def test_a_record_of_another_question_is_refused_at_construction() -> None:
    with pytest.raises(ValueError, match="given for"):
        GateQuestion(dataset=DATASET, question_id="q02", record=scored_record("q01", 0.5, 0.5))


def test_the_gate_is_a_policy() -> None:
    policy = _policy()
    assert isinstance(policy, Policy) and policy.kind == "evidence_gate" and policy.name == "gate"
    assert not vars(policy).keys() - {"config"}  # no results stored on the object


def test_the_chain_feeds_both_claim_level_kinds() -> None:
    """`as_link()` validates as claim_selective's GateLink and fail_closed's FCGate."""
    from assay.policies.claim_selective._inputs import GateLink
    from assay.policies.fail_closed import FCGate

    decided = {d.question_id: d for d in _policy().decide(GateInputs(questions=g2_questions()))}
    passed = gate_chain(decided["q04"], policy_id="gate").as_link()
    link, fc = GateLink.model_validate(passed), FCGate.model_validate(passed)
    assert link.outcome is GateOutcome.PASS and link.rule == "4b_sufficient_after_reassess"
    assert link.evidence == fc.evidence_ids == decided["q04"].evidence and link.s_final == 0.45
    assert fc.outcome == "pass" and link.gate_id == "ce-tiny"
    refused = gate_chain(None, policy_id="gate").as_link()
    assert GateLink.model_validate(refused).outcome is GateOutcome.REFUSE
    assert FCGate.model_validate(refused).outcome == "refuse"


def test_the_public_module_exports_the_gate() -> None:
    from assay.policies import evidence_gate

    assert evidence_gate.EvidenceGatePolicy is EvidenceGatePolicy
    assert all(hasattr(evidence_gate, name) for name in evidence_gate.__all__)
