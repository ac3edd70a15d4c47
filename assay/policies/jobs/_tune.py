"""`assay policies tune` over a run directory (§5.6, §2.8): the kind's tuning function
on the run's records, and the `tune/` files it leaves (candidate table and result).

All three kinds tune here; `--write-policy` (a `tuned` provenance block in the policy
file) is claim_selective's, whose configuration carries that block.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from assay.core.rundir import ANSWERS_FILE, CANDIDATES_FILE, GATES_FILE, TUNE_RESULT_FILE
from assay.core.rundir import TUNE_DIR as RUNDIR_TUNE
from assay.errors import SpecError, first_problem
from assay.inputs import read_text
from assay.policies.engine._run_inputs import RunInputs
from assay.policies.engine._tuning import TuneResult, TuningSpec
from assay.policies.jobs._apply import Chain, _consumed
from assay.policies.jobs._spec import PolicySpec

TUNE_DIR = RUNDIR_TUNE
CANDIDATES = CANDIDATES_FILE
RESULT = TUNE_RESULT_FILE


class TuneRun(BaseModel):
    """One tuning over a run: what is written to `tune/` and what the CLI does."""

    model_config = ConfigDict(frozen=True)

    candidates: list[dict[str, Any]]
    result: dict[str, Any]
    selected: dict[str, str] | None
    selected_config: dict[str, Any] | None
    exit_code: int
    message: str | None


def load_grid(path: Path) -> TuningSpec:
    """A `--grid` file: a TOML tuning specification (grid, where, constraints,
    objectives, tie_break) replacing the kind's default; bad input is one line."""
    try:
        data = tomllib.loads(read_text(path))  # a UTF-8 byte-order mark is dropped
    except FileNotFoundError:
        raise SpecError("file not found", file=path) from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"not valid TOML: {exc}", file=path) from None
    try:
        return TuningSpec.model_validate(data)
    except ValidationError as exc:
        problem = first_problem(exc, typo_first=False)
        raise SpecError(problem.msg, file=path, field=problem.field) from None


def _tune_record(
    spec: PolicySpec,
    run: RunInputs,
    identity: dict[str, Any],
    result: TuneResult,
    provenance: dict[str, Any] | None,
) -> dict[str, Any]:
    """result.json: what was tuned on what, and what was selected (§5.3, §5.6)."""
    return {
        "policy": spec.name,
        "kind": spec.kind,
        "split": run.split,
        **identity,
        "provenance": provenance,
        "n_candidates": len(result.candidates),
        "n_feasible": result.n_feasible,
        "grid_sha256": result.grid_sha256,
        "selected": result.selected,
        "best_infeasible": result.best_infeasible,
    }


def _outcome(record: dict[str, Any], result: TuneResult, config: dict[str, Any] | None) -> TuneRun:
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


def tune_claim_selective(
    spec: PolicySpec, policy: Any, run: RunInputs, chain: Chain | None, grid: TuningSpec | None
) -> TuneRun:
    """§2.8.2's default tuning of a claim_selective policy on the run's answers."""
    from assay.policies.claim_selective._load import cs_inputs
    from assay.policies.claim_selective._tuning import tune_policy

    verifier = run.resolve_verifier(policy.config.verifier, file=spec.file)
    inputs = cs_inputs(run, verifier, chain.links if chain else None)
    outcome = tune_policy(policy.config, inputs, grid, split=run.split)
    tuned = (outcome.selected_config or {}).get("tuned")
    identity = {"verifier_id": verifier, "inputs": _consumed(run, chain)}
    record = _tune_record(spec, run, identity, outcome.result, tuned)
    return _outcome(record, outcome.result, outcome.selected_config)


def tune_fail_closed_run(
    spec: PolicySpec, policy: Any, run: RunInputs, chain: Chain | None, grid: TuningSpec | None
) -> TuneRun:
    """§4.8's default tuning of a fail_closed policy on the run's answers."""
    from assay.policies.claim_selective._tuning import _provenance
    from assay.policies.fail_closed._load import fc_inputs
    from assay.policies.fail_closed._tuning import default_tuning_spec, tune_fail_closed

    verifier = run.resolve_verifier(policy.config.verifier, file=spec.file)
    responses = fc_inputs(run, verifier, chain.links if chain else None)
    grid = grid or default_tuning_spec()
    result = tune_fail_closed(policy.config, responses, grid)
    identity = {"verifier_id": verifier, "inputs": _consumed(run, chain)}
    tuned = _provenance(grid, result, run.split)
    record = _tune_record(spec, run, identity, result, tuned)
    config = None
    if result.selected is not None:
        chosen = policy.config.with_thresholds(**result.selected)
        config = chosen.model_copy(update={"tuned": tuned}).model_dump(mode="json")
    return _outcome(record, result, config)


def tune_gate_run(
    spec: PolicySpec, policy: Any, run: RunInputs, chain: Chain | None, grid: TuningSpec | None
) -> TuneRun:
    """§3.4's default tuning of an evidence_gate policy on the run's questions."""
    from assay.policies.claim_selective._tuning import _provenance
    from assay.policies.evidence_gate._load import gate_inputs, resolve_gate
    from assay.policies.evidence_gate._tuning import default_tuning_spec, tune_gate, tuned_config

    gate_id = resolve_gate(run, policy.config.gate, file=spec.file)
    grid = grid or default_tuning_spec()
    result = tune_gate(gate_inputs(run, gate_id).questions, policy.config, grid)
    inputs = _consumed(run, None, (ANSWERS_FILE, GATES_FILE))
    identity = {"gate_id": gate_id, "inputs": inputs}
    tuned = _provenance(grid, result, run.split)
    record = _tune_record(spec, run, identity, result, tuned)
    chosen = tuned_config(policy.config, result)
    if chosen is not None:
        chosen = chosen.model_copy(update={"tuned": tuned})
    return _outcome(record, result, None if chosen is None else chosen.model_dump(mode="json"))


TUNERS = {
    "claim_selective": tune_claim_selective,
    "fail_closed": tune_fail_closed_run,
    "evidence_gate": tune_gate_run,
}


def tune_run(
    spec: PolicySpec,
    policy: Any,
    run: RunInputs,
    chain: Chain | None,
    grid: TuningSpec | None = None,
) -> TuneRun:
    """The kind's default tuning (or `grid`) of `spec` on `run` (already restricted
    to the split)."""
    if spec.kind not in TUNERS:
        kinds = ", ".join(sorted(TUNERS))
        raise SpecError(
            f"tuning is built for {kinds}; {spec.name!r} is a {spec.kind}", field="--name"
        )
    return TUNERS[spec.kind](spec, policy, run, chain, grid)


def write_tune(folder: Path, tuned: TuneRun) -> Path:
    """`<folder>/tune/candidates.jsonl` and `result.json` (canonical JSON, §5.8)."""
    from assay.policies.engine._canonical import write_canonical_json, write_canonical_jsonl

    target = folder / TUNE_DIR
    target.mkdir(parents=True, exist_ok=True)
    digest = write_canonical_jsonl(target / CANDIDATES, tuned.candidates)
    write_canonical_json(target / RESULT, {**tuned.result, "candidates_sha256": digest})
    return target


__all__ = ["TuneRun", "load_grid", "tune_run", "write_tune"]
