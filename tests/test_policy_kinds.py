"""Every policy kind goes through one route: a `PolicyKind` class registered in POLICIES.

The jobs (apply, tune, sweep, compare, export, report) find a kind's behaviour in its
class, never in a table or a comparison against a kind's name, so a user kind that
offers a hook is used exactly as a built-in one, and one that does not is refused in one
line naming the kinds that do.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import assay.policies
from assay.core.registry import POLICIES
from assay.errors import SpecError
from assay.policies import ClaimPolicy, ClaimPolicyDecisions, ClaimPolicyInputs, PolicyConfig
from assay.policies import policy as register_policy
from assay.policies.engine._kind import PolicyKind, kind_class, kinds_with, known_kinds
from assay.policies.engine._results import Resolved, SweepResult, SweepSettings
from assay.policies.engine._run_inputs import RunInputs
from assay.policies.engine._spec import PolicySpec
from assay.policies.jobs._sweep import resolve

BUILT_IN = ("claim_selective", "evidence_gate", "fail_closed")
POLICIES_DIR = Path(assay.policies.__file__).parent


class Withhold(ClaimPolicy[PolicyConfig]):
    """Withholds everything (no hook but apply)."""

    def decide(self, inputs: ClaimPolicyInputs) -> ClaimPolicyDecisions:
        return ClaimPolicyDecisions(claims={})


class Sweepable(ClaimPolicy[PolicyConfig]):
    """A user kind offering a sweep: the jobs must use it like a built-in's."""

    sweep_ranges = {"margin": ("0.10", "0.30", "0.10")}

    def decide(self, inputs: ClaimPolicyInputs) -> ClaimPolicyDecisions:
        return ClaimPolicyDecisions(claims={})

    def sweep(self, run: RunInputs, chain: Any, resolved: Resolved, file: str) -> SweepResult:
        points = [{"params": {"margin": v}, "metrics": {}} for v in resolved.values]
        return SweepResult(param=resolved.param, points=points, shown=[])


@pytest.fixture(autouse=True)
def kinds() -> Iterator[None]:
    with POLICIES.scoped():
        register_policy("withhold-all", version=1)(Withhold)
        register_policy("sweepable", version=1)(Sweepable)
        yield


def test_every_registered_kind_is_a_policy_kind_class() -> None:
    assert set(BUILT_IN) <= set(known_kinds())
    for kind in known_kinds():
        found = kind_class(kind)
        assert found is not None and issubclass(found, PolicyKind) and found.kind == kind


def test_a_block_is_built_by_the_class_registered_for_its_kind() -> None:
    built = PolicySpec(name="w", kind="withhold-all", block={"name": "w"}, file="p.toml").build()
    assert isinstance(built, Withhold) and built.name == "w"
    with pytest.raises(SpecError, match="not registered here"):
        PolicySpec(name="x", kind="nowhere", block={"name": "x"}, file="p.toml").build()


def test_what_a_kind_offers_is_read_from_its_class() -> None:
    assert kinds_with("chainable") == ["evidence_gate"]
    assert kinds_with("audits") == ["fail_closed"]
    assert kinds_with("sweep_ranges") == [
        "claim_selective",
        "evidence_gate",
        "fail_closed",
        "sweepable",
    ]
    assert "withhold-all" not in kinds_with("compares")


def test_a_user_kind_offering_a_sweep_is_resolved_like_a_built_in_one() -> None:
    resolved = resolve("sweepable", SweepSettings())
    assert resolved.param == "margin" and resolved.values == ["0.10", "0.20", "0.30"]
    with pytest.raises(SpecError, match="a sweepable policy sweeps margin"):
        resolve("sweepable", SweepSettings(param="support"))
    with pytest.raises(SpecError, match="ties are claim_selective's"):
        resolve("sweepable", SweepSettings(ties=("a=b-0.1",)))


def test_a_kind_without_a_hook_is_refused_in_one_line_naming_those_that_have_it() -> None:
    pol = Withhold({"name": "w"})
    run = RunInputs.model_construct()
    with pytest.raises(SpecError, match="tuning is built for claim_selective, evidence_gate"):
        pol.tune(run, None, None, "p.toml")
    with pytest.raises(SpecError, match="comparisons are built for claim_selective"):
        pol.paired_deltas(pol, run, [], None, {"resamples": 0, "random_state": 0})
    with pytest.raises(SpecError, match="audit records are built for fail_closed; 'w'"):
        pol.audit_records(run, {}, None)
    with pytest.raises(SpecError, match="sweeps are built for"):
        resolve("withhold-all", SweepSettings())


def _kind_name_literals(path: Path) -> list[str]:
    names = set(known_kinds())
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        f"{path.name}:{node.lineno} {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in names
    ]


def test_no_job_or_report_module_names_a_kind() -> None:
    """Dispatch is the registry's: jobs/ and report/ hold no kind's name (a `kind ==`
    branch or a per-kind table would need one)."""
    found = [
        hit
        for folder in ("jobs", "report")
        for path in sorted((POLICIES_DIR / folder).glob("*.py"))
        for hit in _kind_name_literals(path)
    ]
    assert not found, found


def test_the_name_check_sees_a_planted_branch(tmp_path: Path) -> None:
    planted = tmp_path / "m.py"
    planted.write_text('def f(kind):\n    return kind == "fail_closed"\n', encoding="utf-8")
    assert _kind_name_literals(planted) == ["m.py:2 'fail_closed'"]
