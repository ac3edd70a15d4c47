"""claim_selective tuning and sweeps: the default grid, the
engine's choice against a by-hand enumeration, the tie-break, infeasibility (exit 3),
and the risk–coverage sweep."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
from _cs_fixtures import claim, response, s1

from assay.errors import SpecError
from assay.policies import TuningSpec
from assay.policies.claim_selective._config import parse_config, with_params
from assay.policies.claim_selective._inputs import ResponseInput
from assay.policies.claim_selective._metrics import evaluate
from assay.policies.claim_selective._policy import ClaimSelectivePolicy
from assay.policies.claim_selective._tuning import (
    INFEASIBLE_EXIT_CODE,
    SWEEP_METRICS,
    default_tuning_spec,
    parse_tie,
    sweep,
    sweep_point,
    tune_policy,
)
from assay.policies.engine._tuning import enumerate_grid


def s1_like() -> list[ResponseInput]:
    """S-1 plus responses whose best thresholds differ from the paper's point."""
    extra = [
        response("X1", [claim("c1", (0.42, 0.0, 0.0), gold="certified")], gold_action="full"),
        response("X2", [claim("c1", (0.38, 0.0, 0.0), gold="omitted")], gold_action="abstain"),
        response(
            "X3", [claim("c1", (0.70, 0.47, 0.0), gold="conflicting")], gold_action="conflict"
        ),
    ]
    return [*s1(), *extra]


def test_the_default_grid_has_420_candidates_with_the_papers_point() -> None:
    spec = default_tuning_spec()
    points = enumerate_grid(spec)
    assert len(points) == 420
    assert {"support": "0.35", "conflict": "0.55", "condition_limited": "0.30",
            "limitation": "0.50"} in points  # fmt: skip
    assert all(Decimal(p["condition_limited"]) <= Decimal(p["support"]) for p in points)
    assert [str(c) for c in spec.constraints] == ["uccr_cert == 0"]
    assert [(o.metric, o.direction) for o in spec.objectives] == [
        ("pau", "max"),
        ("action_accuracy", "max"),
        ("f1", "max"),
    ]


def by_hand(rows: list[ResponseInput]) -> dict[str, str]:
    """Enumerate the default grid through the full record path and rank independently."""
    base = parse_config({})
    best: tuple[Fraction | Decimal, ...] | None = None
    chosen: dict[str, str] = {}
    for params in enumerate_grid(default_tuning_spec()):
        policy = ClaimSelectivePolicy(with_params(base, params))
        m = evaluate(policy.decide(rows)).ratios()
        if m["uccr_cert"].fraction != 0:
            continue
        key: tuple[Fraction | Decimal, ...] = tuple(
            -(m[k].fraction or Fraction(-1)) for k in ("pau", "action_accuracy", "f1")
        )
        key += (
            -Decimal(params["support"]),
            -Decimal(params["condition_limited"]),
            Decimal(params["conflict"]),
            Decimal(params["limitation"]),
        )
        if best is None or key < best:
            best, chosen = key, params
    return chosen


def test_tuning_selects_the_candidate_a_by_hand_enumeration_predicts() -> None:
    rows = s1_like()
    outcome = tune_policy(parse_config({}), rows)
    assert outcome.exit_code == 0 and outcome.message is None
    assert outcome.result.selected == by_hand(rows)
    selected = outcome.selected_config
    assert selected is not None and selected["tuned"]["candidates"] == 420
    assert selected["thresholds"]["support"] == outcome.result.selected["support"].rstrip("0")
    chosen = ClaimSelectivePolicy(selected)  # the written-back policy loads again
    assert evaluate(chosen.decide(rows)).uccr_cert.value == 0.0


def test_every_candidates_metrics_equal_the_record_path() -> None:
    rows = s1_like()
    base = parse_config({})
    outcome = tune_policy(base, rows)
    for candidate in outcome.result.candidates[::37]:
        policy = ClaimSelectivePolicy(with_params(base, candidate.params))
        full = evaluate(policy.decide(rows)).ratios()
        assert {k: (v.numerator, v.denominator, v.value) for k, v in full.items()} == {
            k: (v.numerator, v.denominator, v.value) for k, v in candidate.metrics.items()
        }


def test_ties_on_every_objective_go_to_the_most_conservative_thresholds() -> None:
    rows = [response("a", [claim("c1", (0.9, 0.0, 0.0), gold="certified")], gold_action="full")]
    outcome = tune_policy(parse_config({}), rows)
    assert outcome.result.n_feasible == 420  # every candidate certifies the claim
    assert outcome.result.selected == {
        "support": "0.60",
        "condition_limited": "0.50",
        "conflict": "0.40",
        "limitation": "0.50",
    }


def test_infeasible_tuning_exits_3_with_one_line_and_selects_nothing() -> None:
    config = parse_config({"certificate_standard": {"conflict_max": "0"}})  # nothing valid
    rows = [response("a", [claim("c1", (0.9, 0.0, 0.0), gold="certified")], gold_action="full")]
    outcome = tune_policy(config, rows)
    assert outcome.exit_code == INFEASIBLE_EXIT_CODE == 3
    assert outcome.result.selected is None and outcome.selected_config is None
    assert outcome.message is not None and "\n" not in outcome.message
    assert outcome.message.startswith("tuning infeasible: no candidate meets uccr_cert == 0")
    assert "best uccr_cert = 1.0000 at" in outcome.message
    assert '"selected":null' in outcome.result.model_dump_json()


def test_a_gold_constraint_and_per_family_parameters() -> None:
    rows = [
        response("a", [claim("c1", (0.45, 0.42, 0.0), gold="conflicting")], intent="interaction"),
        response("b", [claim("c1", (0.45, 0.0, 0.0), gold="certified")], intent="indication"),
    ]
    spec = TuningSpec.model_validate(
        {
            "grid": {"conflict_oriented.conflict": ["0.40", "0.45"], "support": ["0.40", "0.50"]},
            "constraints": [{"metric": "uccr_gold", "op": "<=", "value": "0"}],
            "objectives": [{"metric": "pau", "direction": "max"}],
            "tie_break": [{"param": "conflict_oriented.conflict", "order": "desc"}],
        }
    )
    outcome = tune_policy(parse_config({"selector": "intent_aware"}), rows, spec)
    assert outcome.result.selected == {"conflict_oriented.conflict": "0.40", "support": "0.40"}
    families = (outcome.selected_config or {})["families"]
    assert families["conflict_oriented"]["conflict"] == "0.4"
    assert families["mixed"]["support"] == "0.4"


def test_a_bad_grid_value_is_one_line_before_anything_is_computed() -> None:
    spec = default_tuning_spec().model_copy(
        update={"grid": {"support": ["0.35", "1.5"], "conflict": ["0.55"]}, "where": []}
    )
    with pytest.raises(SpecError) as info:
        tune_policy(parse_config({}), s1(), spec)
    assert "thresholds.support" in info.value.render() and "1.5" in info.value.render()


def test_tuning_reads_only_the_chosen_split() -> None:
    dev = [r.model_copy(update={"split": "dev"}) for r in s1()]
    other = [response("T", [claim("c1", (0.9, 0.9, 0.0), gold="certified")], split="test")]
    outcome = tune_policy(parse_config({}), dev + other, split="dev")
    assert outcome.result.selected == tune_policy(parse_config({}), s1()).result.selected
    assert (outcome.selected_config or {})["tuned"]["split"] == "dev"


def test_the_sweep_ties_condition_limited_to_support() -> None:
    points = sweep(parse_config({}), s1_like())
    assert len(points) == 17
    assert points[0].params == {"support": "0.10", "condition_limited": "0.00"}
    assert points[-1].params == {"support": "0.90", "condition_limited": "0.80"}
    assert all(set(p.metrics) == set(SWEEP_METRICS) for p in points)
    coverage = [p.metrics["critical_coverage"].fraction for p in points]
    assert coverage == sorted(coverage, key=lambda f: f or 0, reverse=True)
    assert coverage[0] != coverage[-1]
    fixed = sweep_point(parse_config({}), s1())
    assert fixed.params == {} and fixed.metrics["critical_coverage"].value == 0.5


def test_tie_rules() -> None:
    assert parse_tie("condition_limited=support-0.10") == (
        "condition_limited",
        "support",
        Decimal("-0.10"),
    )
    assert parse_tie("limitation = support + 0.05")[2] == Decimal("0.05")
    with pytest.raises(SpecError):
        parse_tie("condition_limited")
