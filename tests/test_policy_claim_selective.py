"""claim_selective decisions: fixtures S-1, S-2, ties, the order of the action algorithm, failed
inputs, evidence filters and capped pairs, links and certificates, priors, the gate."""

from __future__ import annotations

import math

import pytest
from _cs_fixtures import claim, response, s1

from assay.core.registry import POLICIES
from assay.errors import DatasetError, SpecError
from assay.policies import Policy, canonical_json
from assay.policies.claim_selective._config import ClaimSelectiveConfig, parse_config
from assay.policies.claim_selective._inputs import response_from_row
from assay.policies.claim_selective._metrics import evaluate
from assay.policies.claim_selective._policy import ClaimSelectivePolicy
from assay.policies.claim_selective._records import Decisions
from assay.policies.claim_selective._reference import binary_support_gate, express_all
from assay.policies.claim_selective._rule import claim_status, prepare_claim

S1_EXPECTED = {
    ("R1", "c1"): ("certified", "certified"),
    ("R1", "c2"): ("certified", "certified"),
    ("R2", "c1"): ("condition_limited", "limitation_downgrade"),
    ("R2", "c2"): ("omitted", "insufficient_support"),
    ("R3", "c1"): ("conflicting", "conflict_threshold"),
    ("R3", "c2"): ("certified", "certified"),
    ("R4", "c1"): ("omitted", "insufficient_support"),
    ("R4", "c2"): ("omitted", "verification_not_ok"),
    ("R5", "c1"): ("condition_limited", "weak_support"),
    ("R7", "c1"): ("omitted", "verification_not_ok"),
}
S1_ACTIONS = {
    "R1": ("full", "answer_full", "all_required_certified"),
    "R2": ("partial", "answer_partial", "some_required_not_certified"),
    "R3": ("conflict", "conflict", "material_conflict"),
    "R4": ("abstain", "abstain", "no_expressible_claim"),
    "R5": ("partial", "answer_partial", "some_required_not_certified"),
    "R6": ("abstain", "abstain", "no_expressible_claim"),
    "R7": ("refuse", "refuse", "all_verifications_failed"),
}
DECISION = {
    "certified": "assert",
    "condition_limited": "qualify",
    "conflicting": "dispute",
    "omitted": "withhold",
}


def status_of(config: ClaimSelectiveConfig, triple: tuple[float, float, float], intent: str) -> str:
    family = config.family_of(intent)
    theta = config.thresholds_of(family).theta()
    return claim_status(prepare_claim(claim("c", triple)), theta)[0]


def test_the_kind_is_registered_and_meets_the_policy_protocol() -> None:
    policy = POLICIES.get("claim_selective")({"name": "cert"})
    assert isinstance(policy, Policy) and isinstance(policy, ClaimSelectivePolicy)
    assert policy.kind == "claim_selective" and policy.version == 1
    assert policy.name == "cert"
    again = ClaimSelectivePolicy(policy.describe())
    assert again.describe() == policy.describe() and again.sha256 == policy.sha256


def test_s1_statuses_reasons_and_actions() -> None:
    decisions = ClaimSelectivePolicy().decide(s1())
    got = {(c.answer_id, c.claim_id): (c.native, c.reason) for c in decisions.claims}
    assert got == S1_EXPECTED
    assert all(c.decision == DECISION[c.native] for c in decisions.claims)
    actions = {r.answer_id: (r.native, r.outcome, r.reason) for r in decisions.responses}
    assert actions == S1_ACTIONS
    correct = {r.answer_id: r.action_correct for r in decisions.responses}
    assert correct == {f"R{i}": i not in (5, 7) for i in range(1, 8)}


def test_s1_metrics() -> None:
    m = evaluate(ClaimSelectivePolicy().decide(s1()))
    assert (m.pau.numerator, m.pau.denominator) == (4, 5) and f"{m.pau.value:.4f}" == "0.8000"
    assert (m.pau_precision.numerator, m.pau_precision.denominator) == (4, 5)
    assert (m.f1.numerator, m.f1.denominator) == (8, 10) and m.f1.value == 0.8
    assert (m.uccr_gold.numerator, m.uccr_gold.denominator, m.uccr_gold.value) == (1, 5, 0.2)
    assert (m.uccr_cert.numerator, m.uccr_cert.denominator, m.uccr_cert.value) == (0, 5, 0.0)
    assert (m.action_accuracy.numerator, m.action_accuracy.denominator) == (5, 7)
    assert f"{m.action_accuracy.value:.4f}" == "0.7143"
    assert (m.critical_coverage.numerator, m.critical_coverage.denominator) == (5, 10)
    assert m.n_refused == 1 and m.n_responses == 7 and m.n_claims == 10
    assert m.uccr_cert.ci_method == "wilson" and m.uccr_cert.ci is not None
    assert m.confusion["refuse"]["abstain"] == 1 and m.confusion["partial"]["conflict"] == 1
    assert sum(sum(row.values()) for row in m.confusion.values()) == 7


def test_s1_express_all_reference() -> None:
    decisions = express_all(s1())
    assert all(c.reference and c.native == "certified" for c in decisions.claims)
    m = evaluate(decisions)
    assert (m.pau.numerator, m.pau.denominator, m.pau.value) == (5, 5, 1.0)
    assert (m.pau_precision.numerator, m.pau_precision.denominator) == (5, 10)
    assert f"{m.f1.value:.4f}" == "0.6667"
    assert (m.uccr_gold.numerator, m.uccr_gold.denominator) == (5, 10)
    assert (m.uccr_cert.numerator, m.uccr_cert.denominator) == (6, 10)
    invalid = {(c.answer_id, c.claim_id) for c in decisions.claims if not c.certificate_valid}
    assert invalid == {
        ("R2", "c2"), ("R3", "c1"), ("R4", "c1"), ("R4", "c2"), ("R5", "c1"), ("R7", "c1")
    }  # fmt: skip
    assert (m.action_accuracy.numerator, m.action_accuracy.denominator) == (2, 7)
    assert {r.answer_id: r.native for r in decisions.responses}["R7"] == "full"  # no refuse step
    r1c1 = next(c for c in decisions.claims if (c.answer_id, c.claim_id) == ("R1", "c1"))
    assert [link.passage_id for link in r1c1.links] == ["p0", "p1"]  # the whole pool


def test_binary_support_gate_answers_on_the_best_support() -> None:
    decisions = binary_support_gate(s1(), "0.34")
    actions = {r.answer_id: r.native for r in decisions.responses}
    # R4's best support is its parse_error claim's 0.99: references ignore failed inputs
    assert actions == {
        "R1": "full", "R2": "full", "R3": "full", "R4": "full", "R5": "full",
        "R6": "abstain", "R7": "full",
    }  # fmt: skip
    high = {r.answer_id: r.native for r in binary_support_gate(s1(), "0.95").responses}
    assert high["R4"] == "full" and high["R1"] == "abstain" and high["R7"] == "abstain"
    assert all(c.native == "omitted" for c in binary_support_gate(s1(), "1").claims)


CERT, LIM, CONF = "certified", "condition_limited", "conflicting"


@pytest.mark.parametrize(
    ("selector", "family", "intent", "expected"),
    [
        ("threshold", None, "indication", (CERT, CERT, LIM)),
        ("intent_aware", "full_certify", "indication", (CERT, CERT, LIM)),
        ("intent_aware", "mixed", "research_question", (CERT, CERT, LIM)),
        ("intent_aware", "mixed", None, (CERT, CERT, LIM)),
        ("intent_aware", "partial_oriented", "Pregnancy", (LIM, CERT, LIM)),
        ("intent_aware", "conflict_oriented", "interaction", (LIM, CONF, LIM)),
        ("intent_aware", "instruction_specific", "dosage-adjustment", (LIM, CERT, LIM)),
        ("intent_aware", "instruction_specific", "monitoring", (LIM, CERT, LIM)),
    ],
)
def test_s2_intent_families(
    selector: str, family: str | None, intent: str | None, expected: tuple[str, str, str]
) -> None:
    config = parse_config({"selector": selector})
    assert config.family_of(intent) == family
    triples = [(0.45, 0.00, 0.30), (0.60, 0.45, 0.00), (0.32, 0.00, 0.00)]
    assert tuple(status_of(config, t, intent or "") for t in triples) == expected


def test_family_thresholds_and_mapping_are_configurable() -> None:
    config = parse_config(
        {
            "selector": "intent_aware",
            "families": {"partial_oriented": {"limitation": "0.40"}, "strict": {"support": "0.9"}},
            "intent_families": {"Monitoring": "partial_oriented", "other": "strict"},
        }
    )
    assert config.thresholds_of("partial_oriented").limitation == "0.4"
    assert config.thresholds_of("partial_oriented").conflict == "0.55"  # merged with defaults
    assert config.family_of("monitoring") == "partial_oriented"
    assert status_of(config, (0.45, 0.0, 0.30), "pregnancy") == "certified"  # 0.30 < 0.40
    assert status_of(config, (0.6, 0.0, 0.0), "other") == "condition_limited"


@pytest.mark.parametrize(
    ("triple", "status", "reason"),
    [
        ((0.10, 0.55, 0.00), "conflicting", "conflict_threshold"),  # S_conf = θ.conflict
        ((0.35, 0.00, 0.49), "certified", "certified"),  # S_sup = θ.support, S_lim below
        ((0.90, 0.00, 0.50), "condition_limited", "limitation_downgrade"),  # S_lim = θ.limitation
        ((0.30, 0.00, 0.00), "condition_limited", "weak_support"),  # S_sup = θ.condition_limited
        ((0.29, 0.54, 0.00), "omitted", "insufficient_support"),
    ],
)
def test_ties_behave_as_the_operators_state(
    triple: tuple[float, float, float], status: str, reason: str
) -> None:
    theta = parse_config({}).thresholds_of(None).theta()
    assert claim_status(prepare_claim(claim("c", triple)), theta) == (status, reason)


def actions(*responses_: object, scope: str = "critical") -> list[str]:
    policy = ClaimSelectivePolicy({"conflict_scope": scope})
    return [r.native for r in policy.decide(responses_).responses]  # type: ignore[arg-type]


def test_order_of_the_action_algorithm() -> None:
    certified, conflicting = (0.9, 0.0, 0.0), (0.9, 0.9, 0.0)
    one_conflict = response(
        "a", [claim("c1", conflicting), claim("c2", certified), claim("c3", certified)]
    )
    noncritical = response(
        "b", [claim("c1", conflicting, critical=False), claim("c2", (0.1, 0.0, 0.0))]
    )
    empty = response("c", [])
    omitted_critical = response("d", [claim("c1", (0.1, 0.0, 0.0)), claim("c2", certified)])
    assert actions(one_conflict, noncritical, empty, omitted_critical) == [
        "conflict",
        "abstain",
        "abstain",
        "partial",
    ]
    assert actions(noncritical, scope="any") == ["conflict"]


def test_required_defaults_to_critical_and_all_are_required_when_none_is() -> None:
    certified, weak = (0.9, 0.0, 0.0), (0.1, 0.0, 0.0)
    optional_omitted = response("a", [claim("c1", certified), claim("c2", weak, required=False)])
    noncritical_omitted = response("b", [claim("c1", certified), claim("c2", weak, critical=False)])
    nothing_required = response(
        "c", [claim("c1", certified, required=False), claim("c2", weak, required=False)]
    )
    assert actions(optional_omitted, noncritical_omitted, nothing_required) == [
        "full",
        "full",
        "partial",
    ]


@pytest.mark.parametrize(
    ("score", "reason"),
    [(math.nan, "invalid_score"), (math.inf, "invalid_score"), (1.5, "invalid_score")]
    + [(-0.1, "invalid_score"), (None, "invalid_score")],
)
def test_one_invalid_pair_withholds_the_whole_claim(score: float | None, reason: str) -> None:
    bad = claim("c1", (0.9, 0.0, 0.0), (score, 0.0, 0.0))  # type: ignore[arg-type]
    decisions = ClaimSelectivePolicy().decide([response("a", [bad])])
    record = decisions.claims[0]
    assert (record.native, record.decision, record.reason) == ("omitted", "withhold", reason)
    assert record.pooled is None and record.links == [] and not record.verification_ok
    assert decisions.responses[0].native == "refuse"
    canonical_json(record)  # writes as canonical JSON despite the NaN input
    assert decisions.certificates[0].verifies()


def test_missing_verification_and_empty_pools() -> None:
    missing = response("a", [{"claim_id": "c1"}])  # type: ignore[list-item]
    empty = response("b", [claim("c1")])
    capped = response(
        "c",
        [{"claim_id": "c1", "verification": {"pairs": [], "pairs_dropped_by_cap": 3}}],  # type: ignore[list-item]
    )
    decisions = ClaimSelectivePolicy().decide([missing, empty, capped])
    reasons = [(c.native, c.reason, c.verification_status) for c in decisions.claims]
    assert reasons == [
        ("omitted", "missing_verification", "missing"),
        ("omitted", "no_evidence", "ok"),
        ("omitted", "cap_exceeded", "ok"),
    ]
    assert [r.native for r in decisions.responses] == ["refuse", "abstain", "abstain"]


def test_links_name_the_passages_behind_each_status() -> None:
    limited = claim("c1", (0.9, 0.0, 0.2), (0.9, 0.1, 0.7), (0.2, 0.0, 0.7))
    conflicting = claim("c2", (0.5, 0.6, 0.0), (0.7, 0.2, 0.0))
    omitted = claim("c3", (0.1, 0.0, 0.0))
    decisions = ClaimSelectivePolicy().decide([response("a", [limited, conflicting, omitted])])
    by_id = {c.claim_id: c for c in decisions.claims}
    links = [(link.passage_id, link.roles) for link in by_id["c1"].links]
    assert links == [("p0", ["support"]), ("p1", ["support", "limitation"]), ("p2", ["limitation"])]
    assert [(link.passage_id, link.roles) for link in by_id["c2"].links] == [("p0", ["conflict"])]
    assert by_id["c3"].links == []
    link = by_id["c1"].links[1]
    assert (link.doc_id, link.page, link.s_limitation) == ("doc-p1", 2, 0.7)
    assert link.thresholds == {
        "conflict": "0.55",
        "support": "0.35",
        "condition_limited": "0.3",
        "limitation": "0.5",
    }


def test_certificates_hash_verifies_and_changes_with_any_threshold() -> None:
    base = ClaimSelectivePolicy().decide(s1()).certificates
    assert all(c.verifies() for c in base)
    other = ClaimSelectivePolicy({"thresholds": {"limitation": "0.51"}}).decide(s1()).certificates
    assert base[0].policy.policy_sha256 != other[0].policy.policy_sha256
    assert base[0].certificate_sha256 != other[0].certificate_sha256
    tampered = base[0].model_copy(update={"native": "partial"})
    assert not tampered.verifies()


def test_unscored_and_out_of_pool_evidence_is_ignored_and_logged() -> None:
    c = claim("c1", (0.9, 0.0, 0.0), (0.2, 0.0, 0.0), cited_passages=["p0", "p9"])
    outside = response("a", [c], evidence_pool=["p1"])
    record = ClaimSelectivePolicy().decide([outside]).claims[0]
    assert [(i.passage_id, i.reason) for i in record.ignored_references] == [
        ("p0", "outside_evidence_pool"),
        ("p9", "unscored_reference"),
    ]
    assert record.native == "omitted" and record.links == []  # p0's 0.9 is not evidence


def test_gate_composition() -> None:
    strong = claim("c1", (0.9, 0.0, 0.0), (0.2, 0.0, 0.0))
    rows = [
        response("a", [strong], gate={"outcome": "abstain", "rule": "low_score"}),
        response("b", [strong], gate={"outcome": "refuse"}),
        response("c", [strong], gate={"outcome": "pass", "evidence": ["p1"]}),
        response("d", [strong], gate={"outcome": "pass"}),
    ]
    decisions = ClaimSelectivePolicy({"after": "gate"}).decide(rows)
    got = [(r.native, r.reason) for r in decisions.responses]
    assert got == [
        ("abstain", "gate_abstained"),
        ("refuse", "gate_refused"),
        ("abstain", "no_expressible_claim"),  # only p1 (0.2) is in E(q)
        ("full", "all_required_certified"),
    ]
    assert [c.reason for c in decisions.claims[:2]] == ["gate_abstained", "gate_refused"]


def test_dosage_label_rescue_lifts_support_in_the_instruction_family_only() -> None:
    rows = [
        response(
            answer_id,
            [claim("c1", (0.40, 0.0, 0.0))],
            intent=intent,
            source=source,
            passages={"p0": {"dosage_instruction": True}},
        )
        for answer_id, intent, source in [
            ("a", "dosage", "label"),
            ("b", "dosage", "literature"),
            ("c", "indication", "label"),
        ]
    ]
    plain = ClaimSelectivePolicy({"selector": "intent_aware"})
    hooked = ClaimSelectivePolicy(
        {"selector": "intent_aware", "priors": {"dosage_label_rescue": {"sources": ["label"]}}}
    )
    assert [c.native for c in plain.decide(rows).claims] == [
        "condition_limited",
        "condition_limited",
        "certified",
    ]
    rescued = hooked.decide(rows).claims
    assert [c.native for c in rescued] == ["certified", "condition_limited", "certified"]
    assert rescued[0].priors == ["dosage_label_rescue"] and rescued[1].priors == []
    assert rescued[0].links[0].roles == ["support", "dosage_label_rescue"]
    assert hooked.sha256 != plain.sha256


def test_review_downgrade_turns_full_into_partial() -> None:
    def row(answer_id: str, level: str, claim_type: str) -> object:
        return response(
            answer_id,
            [claim("c1", (0.9, 0.0, 0.0), claim_type=claim_type)],
            source="literature",
            passages={"p0": {"evidence_level": level}},
        )

    hook = {"sources": ["literature"], "claim_types": ["efficacy"]}
    policy = ClaimSelectivePolicy({"priors": {"review_downgrade": hook}})
    rows = [row("a", "review", "efficacy"), row("b", "trial", "efficacy")]
    decisions = policy.decide([*rows, row("c", "review", "safety")])  # type: ignore[list-item]
    got = [(r.native, r.reason, r.priors) for r in decisions.responses]
    assert got == [
        ("partial", "prior:review_downgrade", ["review_downgrade"]),
        ("full", "all_required_certified", []),
        ("full", "all_required_certified", []),
    ]


IA = "intent_aware"


@pytest.mark.parametrize(
    ("block", "field"),
    [
        ({"thresholds": {"support": "1.5"}}, "thresholds.support"),
        ({"thresholds": {"support": "abc"}}, "thresholds.support"),
        ({"thresholds": {"condition_limited": "0.4"}}, "thresholds"),
        ({"thresholds": {"suport": "0.4"}}, "thresholds.suport"),
        ({"treshold": 1}, "treshold"),
        ({"selector": "intent_aware", "thresholds": {"support": "0.4"}}, "thresholds"),
        ({"families": {"mixed": {"support": "0.4"}}}, "families"),
        ({"selector": IA, "intent_families": {"dosage": "nope"}}, "intent_families.dosage"),
        ({"selector": IA, "families": {"mixed": {"conflict": "2"}}}, "families.mixed.conflict"),
        ({"priors": {"dosage_label_rescue": {"sources": ["label"]}}}, "priors.dosage_label_rescue"),
        ({"conflict_scope": "some"}, "conflict_scope"),
        ({"certificate_standard": {"conflict_max": "-1"}}, "certificate_standard.conflict_max"),
    ],
)
def test_bad_configuration_is_one_line_naming_file_and_field(
    block: dict[str, object], field: str
) -> None:
    with pytest.raises(SpecError) as info:
        parse_config(block, file="policies.toml")
    line = info.value.render()
    assert "\n" not in line and line.startswith("policies.toml: ") and f"field '{field}'" in line


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ({"answer_id": "a", "gold_action": "maybe"}, "gold_action"),
        ({"answer_id": "a", "split": "validation"}, "split"),
        (
            {
                "answer_id": "a",
                "claims": [{"claim_id": "c", "gold_status": "certified", "gold_usable": 0}],
            },
            "claims.0",
        ),
        ({"answer_id": "a", "claims": [{"claim_id": "c"}, {"claim_id": "c"}]}, "claims"),
    ],
)
def test_bad_dataset_rows_are_one_line(row: dict[str, object], field: str) -> None:
    with pytest.raises(DatasetError) as info:
        response_from_row(row, file="data.jsonl", line=3)
    assert info.value.render().startswith(f"data.jsonl:3: field '{field}'")


def test_gold_usable_is_derived_and_intents_are_snake_case() -> None:
    row = response_from_row(
        {
            "answer_id": "a",
            "intent": " Dosage Adjustment ",
            "claims": [{"claim_id": "c", "gold_status": "condition_limited"}, {"claim_id": "d"}],
        }
    )
    assert row.intent == "dosage_adjustment"
    assert [c.gold_usable for c in row.claims] == [True, None]


def test_records_are_ordered_and_canonical() -> None:
    rows = list(reversed(s1()))
    decisions = ClaimSelectivePolicy().decide(rows + [response("R1", [], gold_action="abstain")])
    assert [r.answer_id for r in decisions.responses] == [f"R{i}" for i in range(1, 8)]
    assert decisions.responses[0].n_claims == 0  # a repeated key keeps its last record

    def lines(d: Decisions) -> list[str]:
        return [canonical_json(x) for x in [*d.claims, *d.responses, *d.certificates]]

    policy = ClaimSelectivePolicy()
    assert lines(policy.decide(s1())) == lines(policy.decide(reversed(s1())))
    for record in [*decisions.claims, *decisions.responses, *decisions.certificates]:
        text = canonical_json(record)
        assert "NaN" not in text and text == canonical_json(type(record).model_validate_json(text))


def test_an_evidence_gate_chain_feeds_the_gate_link() -> None:
    from assay.policies.evidence_gate import GateChain, GateSummary, gate_chain

    strong = claim("c1", (0.9, 0.0, 0.0), (0.2, 0.0, 0.0))
    passed = GateChain(
        gate=GateSummary(policy_id="g", outcome="pass", rule="4a_sufficient", s_final=0.6),
        evidence=("p1",),
    )
    rows = [
        response("a", [strong], gate=passed.as_link()),
        response("b", [strong], gate=gate_chain(None, policy_id="g").as_link()),
    ]
    decisions = ClaimSelectivePolicy({"after": "g"}).decide(rows)
    assert [r.native for r in decisions.responses] == ["abstain", "refuse"]
    ignored = decisions.claims[0].ignored_references
    assert [(i.passage_id, i.reason) for i in ignored] == [("p0", "outside_gate_evidence")]
    assert decisions.responses[0].gate is not None
    assert decisions.responses[0].gate.rule == "4a_sufficient"


def test_the_public_module_and_policy_metrics() -> None:
    from assay.policies import claim_selective as cs

    policy = cs.ClaimSelectivePolicy({"certificate_standard": {"support_min": "0.5"}})
    decisions = policy.decide(s1())
    strict = policy.metrics(decisions, resamples=0)
    assert (strict.uccr_cert.numerator, strict.uccr_cert.denominator) == (1, 5)  # R3c2 at 0.40
    assert strict.certificate_standard["support_min"] == "0.5"
    assert cs.evaluate(decisions).uccr_cert.value == 0.0  # the default standard
    assert set(cs.__all__) <= set(dir(cs))


def test_dosage_cues_flag_passages_for_the_rescue_prior() -> None:
    import hashlib
    from importlib import resources

    from assay.policies import claim_selective as cs

    raw = resources.files("assay.policies").joinpath("lexicons", "cs-priors@1.toml").read_bytes()
    assert cs.priors_lexicon_digest() == {"cs-priors@1": hashlib.sha256(raw).hexdigest()}
    assert cs.dosage_instruction("Take 10 mg once\n daily.") and cs.dosage_instruction("5mg")
    assert not cs.dosage_instruction("Amgen reported xmg results")
    texts = {"p0": "Adults: 20 MG by mouth.", "p1": "A review of outcomes."}
    info = cs.passage_info(texts, {"p1": "review"})
    assert info["p0"].dosage_instruction and not info["p1"].dosage_instruction
    assert info["p1"].evidence_level == "review"
    row = response(
        "a", [claim("c1", (0.40, 0.0, 0.0))], intent="dosage", source="label", passages=info
    )
    hooked = ClaimSelectivePolicy(
        {"selector": "intent_aware", "priors": {"dosage_label_rescue": {"sources": ["label"]}}}
    )
    assert hooked.decide([row]).claims[0].native == "certified"
    assert hooked.describe()["priors"]["dosage_label_rescue"]["cues"] == "cs-priors@1"
