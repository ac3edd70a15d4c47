"""`assay policies tune` over a run directory: the kind's tuning function
on the run's records, and the `tune/` files it leaves (candidate table and result).

Each kind tunes itself (`PolicyKind.tune`); this module reads `--grid` and writes what
the tuning returns.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from assay.core.rundir import CANDIDATES_FILE, TUNE_RESULT_FILE
from assay.core.rundir import TUNE_DIR as RUNDIR_TUNE
from assay.errors import SpecError, first_problem
from assay.inputs import read_text
from assay.policies.engine._apply_common import Chain
from assay.policies.engine._results import TuneRun
from assay.policies.engine._run_inputs import RunInputs
from assay.policies.engine._spec import PolicySpec
from assay.policies.engine._tuning import TuningSpec

TUNE_DIR = RUNDIR_TUNE
CANDIDATES = CANDIDATES_FILE
RESULT = TUNE_RESULT_FILE


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


def tune_run(
    spec: PolicySpec,
    policy: Any,
    run: RunInputs,
    chain: Chain | None,
    grid: TuningSpec | None = None,
) -> TuneRun:
    """The kind's default tuning (or `grid`) of `spec` on `run` (already restricted
    to the split); a kind that does not tune refuses in one line."""
    tuned: TuneRun = policy.tune(run, chain, grid, spec.file)
    return tuned


def write_tune(folder: Path, tuned: TuneRun) -> Path:
    """`<folder>/tune/candidates.jsonl` and `result.json` (canonical JSON)."""
    from assay.policies.engine._canonical import write_canonical_json, write_canonical_jsonl

    target = folder / TUNE_DIR
    target.mkdir(parents=True, exist_ok=True)
    digest = write_canonical_jsonl(target / CANDIDATES, tuned.candidates)
    write_canonical_json(target / RESULT, {**tuned.result, "candidates_sha256": digest})
    return target


__all__ = ["TuneRun", "load_grid", "tune_run", "write_tune"]
