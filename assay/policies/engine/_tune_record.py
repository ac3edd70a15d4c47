"""What every kind's `policies tune` records (`tune/result.json`) and hands the CLI, so
each kind's tuning only supplies its own identity fields and selection."""

from __future__ import annotations

from typing import Any

from assay.policies.engine._results import TuneRun
from assay.policies.engine._run_inputs import RunInputs
from assay.policies.engine._tuning import TuneResult, TuningSpec


def tuning_provenance(spec: TuningSpec, result: TuneResult, split: str | None) -> dict[str, Any]:
    """A tuned config's `tuned` block: the grid, rules and selection it came from."""
    return {
        "split": split,
        "grid_sha256": result.grid_sha256,
        "where": list(spec.where),
        "constraints": [str(c) for c in spec.constraints],
        "objectives": [f"{o.direction} {o.metric}" for o in spec.objectives],
        "tie_break": [f"{t.param} {t.order}" for t in spec.tie_break],
        "candidates": len(result.candidates),
        "feasible": result.n_feasible,
        "selected": result.selected,
    }


def tune_record(
    policy: Any,
    run: RunInputs,
    identity: dict[str, Any],
    result: TuneResult,
    provenance: dict[str, Any] | None,
) -> dict[str, Any]:
    """result.json: what was tuned on what, and what was selected."""
    return {
        "policy": policy.name,
        "kind": policy.kind,
        "split": run.split,
        **identity,
        "provenance": provenance,
        "n_candidates": len(result.candidates),
        "n_feasible": result.n_feasible,
        "grid_sha256": result.grid_sha256,
        "selected": result.selected,
        "best_infeasible": result.best_infeasible,
    }


def tune_outcome(
    record: dict[str, Any], result: TuneResult, config: dict[str, Any] | None
) -> TuneRun:
    """The tuning as the CLI acts on it: exit 3 and a message when nothing is feasible."""
    infeasible = result.selected is None
    return TuneRun(
        candidates=[c.model_dump(mode="json") for c in result.candidates],
        result=record,
        selected=result.selected,
        selected_config=config,
        exit_code=3 if infeasible else 0,
        message=f"tuning infeasible: {result.best_infeasible or 'no candidate'}"
        if infeasible
        else None,
    )


__all__ = ["tune_outcome", "tune_record", "tuning_provenance"]
