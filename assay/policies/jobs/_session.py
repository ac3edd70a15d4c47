"""Applying a policy file to a run directory: the one sequence `assay policies apply`,
`tune` and `sweep` share (load the file, pick the policies, check their gates, read the
run, build each chain), and `apply_policies`, its Python entry point.

It lives in the policies layer, not the CLI, so that a policy registered in Python (a
user kind) can be applied from Python without going through the command line.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from assay._interrupts import cancellable
from assay.core.rundir import MANIFEST_FILE
from assay.core.rundir_lock import AGAIN, WriterLock
from assay.errors import RunError, SpecError
from assay.policies.engine._apply_common import Chain, Outputs, Settings
from assay.policies.engine._kind import chainable_kinds
from assay.policies.engine._run_inputs import (
    SPLITS,
    RunInputs,
    read_run,
    restrict_to_split,
    split_of,
)
from assay.policies.engine._spec import PolicySpec, load_policy_file, select
from assay.policies.jobs._write import write_policy

Pick = tuple[PolicySpec, Chain | None]
"""A policy to decide, and the gate chain it reads (None: no `after`)."""


class Loaded(NamedTuple):
    """The run's records (restricted to the split) and each chosen policy with its chain."""

    run: RunInputs
    picks: list[Pick]


class AppliedPolicy(BaseModel):
    """What applying one policy wrote: where, and its metrics (as in `metrics.json`)."""

    model_config = ConfigDict(frozen=True)

    name: str
    kind: str
    version: str
    folder: Path = Field(description="policies/<name>/ in the run directory.")
    metrics: dict[str, Any] = Field(description="metrics.json's content.")
    ratios: dict[str, dict[str, Any]] = Field(description="The headline metrics, by name.")
    responses: int = Field(description="Responses (or questions, for a gate) decided.")
    warnings: list[str] = Field(default_factory=list)


def check_run_dir(run_dir: Path) -> None:
    if not (run_dir / MANIFEST_FILE).is_file():
        raise RunError(f"not a run directory (no {MANIFEST_FILE})", file=run_dir)


def gates_for(specs: list[PolicySpec], chosen: list[PolicySpec]) -> dict[str, PolicySpec]:
    """The file's gate policies; a chosen policy's `after` must name one."""
    gates = {s.name: s for s in specs if s.kind in chainable_kinds()}
    for spec in chosen:
        after = spec.block.get("after")
        if after is not None and after not in gates:
            kinds = " or ".join(chainable_kinds())
            raise SpecError(
                f"{after!r} is not an {kinds} policy of this file",
                file=spec.file,
                field="after",
            )
    return gates


def _splits(run: RunInputs) -> str:
    """`it has dev 12, test 12, no split 3`, for a --split that keeps no answer."""
    counts = Counter(split_of(a) for a in run.answers)
    named = [f"{k} {n}" for k, n in sorted((k, n) for k, n in counts.items() if k is not None)]
    if counts.get(None):
        named.append(f"no split {counts[None]}")
    return f"it has {', '.join(named)}"


def load_policies(run_dir: Path, policy: Path, name: str | None, split: str | None) -> Loaded:
    """Load the policy file, pick `name` (or every policy), check `after` names a gate
    and `split` a split, read the run; nothing is written, so a bad input leaves the
    run untouched."""
    specs = load_policy_file(policy)
    chosen = select(specs, name)
    if split is not None and split not in SPLITS:
        raise SpecError(f"use one of {', '.join(SPLITS)}; got {split!r}", field="--split")
    gates = gates_for(specs, chosen)
    check_run_dir(run_dir)
    whole = read_run(run_dir)
    run = restrict_to_split(whole, split)
    if split is not None and not run.answers and whole.answers:
        raise SpecError(
            f"no answer of the run has split {split!r} ({_splits(whole)})", field="--split"
        )
    picks = []
    for spec in chosen:
        after = spec.block.get("after")
        picks.append((spec, chain_of(gates[after], run) if after is not None else None))
    return Loaded(run=run, picks=picks)


def chain_of(gate_spec: PolicySpec, run: RunInputs) -> Chain:
    """The gate decisions a chained policy reads, from the named gate policy."""
    gate = gate_spec.build()
    chain: Chain = gate.chain(run, gate_spec.file)
    return chain


def mark_in_sample(policy: Any, outputs: Outputs, split: str | None) -> Outputs:
    """Metrics of a policy applied to the split it was tuned on say so."""
    if split is None:
        return outputs
    tuned = getattr(policy.config, "tuned", None)
    in_sample = isinstance(tuned, dict) and tuned.get("split") == split
    warnings = list(outputs.warnings)
    if in_sample:
        warnings.append(f"tuned on split {split!r}: these metrics are in-sample")
    metrics = {**outputs.metrics, "in_sample": in_sample}
    return outputs.model_copy(update={"metrics": metrics, "warnings": warnings})


def decide_all(
    loaded: Loaded, settings: Settings, split: str | None, workers: int
) -> list[tuple[Any, Outputs]]:
    """Every chosen policy decided, up to `workers` at once (threads; the metrics'
    bootstrap is numpy, which releases the GIL). Results keep the file's order, and each
    policy reads the same records, so the outputs do not depend on `workers`."""

    def decide(pick: tuple[PolicySpec, Chain | None]) -> tuple[Any, Outputs]:
        spec, chain = pick
        pol = spec.build()
        outputs = pol.apply(loaded.run, settings, chain, spec.file)
        if outputs.counts["responses"] == 0:
            outputs.warnings.append(pol.empty_note)
        return pol, mark_in_sample(pol, outputs, split)

    if workers <= 1 or len(loaded.picks) <= 1:
        return [decide(pick) for pick in loaded.picks]
    return _in_threads(decide, loaded.picks, workers)


def _in_threads(
    decide: Callable[[Pick], tuple[Any, Outputs]], picks: list[Pick], workers: int
) -> list[tuple[Any, Outputs]]:
    """`decide` over `picks` in threads. Ctrl-C reaches only the main thread: it cancels
    the policies not started and stops the running ones at their next bootstrap chunk,
    so the command ends at once instead of after every policy."""
    stop = threading.Event()

    def one(pick: Pick) -> tuple[Any, Outputs]:
        with cancellable(stop):
            return decide(pick)

    pool = ThreadPoolExecutor(max_workers=min(workers, len(picks)))
    try:
        return list(pool.map(one, picks))
    except BaseException:
        stop.set()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def apply_policies(
    run_dir: str | Path,
    policy_file: str | Path,
    *,
    name: str | None = None,
    split: str | None = None,
    by: str | None = None,
    source_missing: bool = False,
    resamples: int = 1000,
    random_state: int = 0,
    workers: int = 1,
) -> list[AppliedPolicy]:
    """Apply the `[[policies]]` of `policy_file` (or only `name`) to a finished run and
    write `policies/<name>/`, exactly as `assay policies apply` does. Every policy is
    decided before anything is written: a bad input raises and leaves the run as it was.
    Kinds registered in this process (`@policy`) are found."""
    run_path = Path(run_dir)
    check_run_dir(run_path)
    settings = Settings(
        resamples=resamples, random_state=random_state, by=by, source_missing=source_missing
    )
    with WriterLock(run_path, command="assay policies apply", fix=AGAIN):
        loaded = load_policies(run_path, Path(policy_file), name, split)
        applied = []
        for pol, outputs in decide_all(loaded, settings, split, workers):
            folder = write_policy(run_path, pol, loaded.run, outputs, settings)
            applied.append(_applied(pol, outputs, folder))
    return applied


def _applied(pol: Any, outputs: Outputs, folder: Path) -> AppliedPolicy:
    return AppliedPolicy(
        name=pol.name,
        kind=pol.kind,
        version=str(pol.version),
        folder=folder,
        metrics=outputs.metrics,
        ratios=outputs.ratios,
        responses=outputs.counts["responses"],
        warnings=list(outputs.warnings),
    )


__all__ = [
    "AppliedPolicy",
    "Loaded",
    "chain_of",
    "apply_policies",
    "check_run_dir",
    "decide_all",
    "gates_for",
    "load_policies",
    "mark_in_sample",
]
