"""The shared pieces of the policies layer: thresholds, exact ratios, Wilson, canonical
JSON, the tuning engine and response bootstrap."""

from __future__ import annotations

from fractions import Fraction

import pytest
from scipy.stats import binomtest

from assay.errors import SpecError
from assay.policies import (
    Constraint,
    Objective,
    Ratio,
    RatioCounts,
    TieBreak,
    TuningSpec,
    bootstrap_intervals,
    canonical_json,
    decimal_grid,
    paired_delta_interval,
    ratio,
    threshold,
    tune,
    wilson,
)


@pytest.mark.parametrize("bad", ["1.5", "-0.1", "nan", "abc", True])
def test_a_threshold_outside_0_1_or_not_a_number_is_one_line(bad: object) -> None:
    with pytest.raises(SpecError) as info:
        threshold(bad, field="thresholds.support")  # type: ignore[arg-type]
    assert "thresholds.support" in info.value.render() and "\n" not in info.value.render()


def test_thresholds_and_grids_are_exact_decimals() -> None:
    assert threshold("0.35", field="x") == 0.35 and threshold(1, field="x") == 1.0
    grid = decimal_grid("0.00", "1.00", "0.01")
    assert len(grid) == 101 and grid[30] == "0.30" and grid[-1] == "1.00"
    assert Fraction(str(grid[7])) == Fraction(7, 100)


def test_ratios_keep_counts_and_say_why_they_are_null() -> None:
    assert ratio(1, 3).fraction == Fraction(1, 3)
    null = ratio(0, 0)
    assert null.value is None and null.null_reason == "zero_denominator"
    assert ratio(0, 0, when_zero=0.0).value == 0.0


@pytest.mark.parametrize(("k", "n"), [(0, 302), (0, 306), (3, 302), (8, 306), (5, 5)])
def test_wilson_agrees_with_scipy(k: int, n: int) -> None:
    ci = binomtest(k, n).proportion_ci(method="wilson")
    low, high = wilson(k, n) or (None, None)
    assert low == pytest.approx(ci.low, abs=1e-12) and high == pytest.approx(ci.high, abs=1e-12)
    assert wilson(0, 0) is None


def test_canonical_json_is_sorted_compact_and_unescaped() -> None:
    assert canonical_json({"b": 1, "a": "é", "c": 0.1}) == '{"a":"é","b":1,"c":0.1}'
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})


def _metric(params: dict[str, str]) -> dict[str, Ratio]:
    """A toy policy: utility rises with `b`, risk is zero only while a <= 0.2."""
    a, b = Fraction(params["a"]), Fraction(params["b"])
    utility = ratio(int(b * 100), 100)
    risk = ratio(0 if a <= Fraction(1, 5) else 1, 1, when_zero=0.0)
    return {"utility": utility, "risk": risk, "flat": ratio(1, 2)}


def _spec(**overrides: object) -> TuningSpec:
    base: dict[str, object] = {
        "grid": {"a": ["0.10", "0.20", "0.30"], "b": ["0.10", "0.20", "0.30"]},
        "where": ["a <= b"],
        "constraints": [Constraint(metric="risk", op="==", value="0")],
        "objectives": [Objective(metric="utility", direction="max")],
        "tie_break": [TieBreak(param="a", order="desc")],
    }
    return TuningSpec.model_validate(base | overrides)


def test_tuning_respects_where_constraints_objectives_and_tie_break() -> None:
    result = tune(_spec(), _metric)
    assert len(result.candidates) == 6  # a <= b
    # b = 0.30 is best; among a in {0.10, 0.20} (risk 0), the tie-break takes a desc
    assert result.selected == {"a": "0.20", "b": "0.30"}
    assert result.n_feasible == 5  # only (0.30, 0.30) has a > 0.2 and fails the risk
    flat = tune(
        _spec(objectives=[Objective(metric="flat")], tie_break=[TieBreak(param="b", order="asc")]),
        _metric,
    )
    assert flat.selected == {"a": "0.10", "b": "0.10"}


def test_infeasible_tuning_selects_nothing_and_names_the_best_value() -> None:
    spec = _spec(constraints=[Constraint(metric="utility", op=">=", value="0.9")])
    result = tune(spec, _metric)
    assert result.selected is None and result.n_feasible == 0
    assert result.best_infeasible is not None and "utility >= 0.9" in result.best_infeasible
    assert "0.3000" in result.best_infeasible


def test_bootstrap_is_seeded_paired_and_degenerate_when_it_should_be() -> None:
    right = RatioCounts(numerator=[1] * 20, denominator=[1] * 20)
    half = RatioCounts(numerator=[1, 0] * 10, denominator=[1] * 20)
    again = bootstrap_intervals({"a": half}, resamples=300, random_state=4)
    assert again == bootstrap_intervals({"a": half}, resamples=300, random_state=4)
    assert bootstrap_intervals({"a": right})["a"].ci == (1.0, 1.0)
    zero = RatioCounts(numerator=[0] * 5, denominator=[0] * 5, when_zero=0.0)
    assert bootstrap_intervals({"u": zero})["u"].ci == (0.0, 0.0)
    null = bootstrap_intervals({"n": RatioCounts(numerator=[0] * 5, denominator=[0] * 5)})["n"]
    assert null.ci is None and null.n_resamples_valid == 0
    delta = paired_delta_interval(right, half, resamples=500)
    assert delta.ci is not None and 0.0 < delta.ci[0] <= 0.5 <= delta.ci[1]
