"""evidence_gate over a run directory: what `apply`, `tune`, `sweep`, `compare`, chaining
(`after =`) and the report's curve do with this kind (the `EvidenceGatePolicy` hooks call
these)."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from assay.core.rundir import ANSWERS_FILE, GATES_FILE
from assay.errors import SpecError
from assay.policies.engine._apply_common import (
    GATE_DECISIONS,
    Chain,
    Outputs,
    Settings,
    _consumed,
    _counts,
    _dump,
    no_slices,
    provenance,
)
from assay.policies.engine._deltas import Units, counted_deltas
from assay.policies.engine._kind import Links
from assay.policies.engine._results import MetricDelta, Resolved, SweepResult, TuneRun
from assay.policies.engine._run_inputs import RunInputs
from assay.policies.engine._tune_record import tune_outcome, tune_record, tuning_provenance
from assay.policies.engine._tuning import TuningSpec
from assay.policies.evidence_gate._load import chain_links, gate_inputs, resolve_gate, short_pools
from assay.policies.evidence_gate._metrics import GateRow, metric_counts, metric_values
from assay.policies.evidence_gate._tuning import (
    Prepared,
    default_tuning_spec,
    risk_coverage_curve,
    sweep_gate,
    tune_gate,
    tuned_config,
)

Dump = dict[str, Any]
INPUTS = (ANSWERS_FILE, GATES_FILE)
RANGES: dict[str, tuple[str, str, str]] = {
    "tau": ("0.00", "1.00", "0.01"),
    "tau_min": ("0.00", "1.00", "0.01"),
}
CURVE_METRICS = ("coverage", "selective_risk_label", "selective_risk_support")
AURC_KEYS = ("aurc", "aurc_opt", "e_aurc", "aurc_support", "aurc_opt_support", "e_aurc_support")


def records_read(run: RunInputs) -> dict[str, str]:
    """A gate reads the answers and the gate records (never claims or verifications)."""
    return _consumed(run, None, INPUTS)


def apply(
    policy: Any, run: RunInputs, settings: Settings, chain: Chain | None, file: str
) -> Outputs:
    """Gate decisions (`gate_decisions.jsonl`) and metrics for every question of the run."""
    no_slices(policy, settings)
    gate_id = resolve_gate(run, policy.config.gate, file=file)
    decisions = policy.decide(gate_inputs(run, gate_id))
    metrics = policy.metrics(
        decisions,
        resamples=settings.resamples,
        random_state=settings.random_state,
        confidence=settings.confidence,
    )
    ratios = {k: v.model_dump(mode="json") for k, v in metrics.metrics.items()}
    short = short_pools(run, gate_id, policy.config.k1_expanded)
    warnings = (
        [
            f"{short} gate records scored fewer than k1_expanded = {policy.config.k1_expanded} "
            "ranks: those questions are refused (pool_too_small)"
        ]
        if short
        else []
    )
    return Outputs(
        records={GATE_DECISIONS: _dump(decisions)},
        metrics=metrics.model_dump(mode="json"),
        ratios=ratios,
        gate_id=gate_id,
        consumed=records_read(run),
        provenance=provenance(run, None, gate_id),
        counts=_counts(len(decisions), 0, metrics.n_refused, ratios),
        warnings=warnings,
    )


def chain(policy: Any, run: RunInputs, file: str) -> Chain:
    """The gate decisions a chained claim-level policy reads."""
    gate_id = resolve_gate(run, policy.config.gate, file=file)
    links = chain_links(policy, run, gate_id)
    return Chain(
        gate_policy=policy.name, gate_id=gate_id, gate_config=policy.describe(), links=links
    )


def tune(
    policy: Any, run: RunInputs, chain: Chain | None, grid: TuningSpec | None, file: str
) -> TuneRun:
    """The default tuning of an evidence_gate policy on the run's questions."""
    gate_id = resolve_gate(run, policy.config.gate, file=file)
    grid = grid or default_tuning_spec()
    result = tune_gate(gate_inputs(run, gate_id).questions, policy.config, grid)
    identity = {"gate_id": gate_id, "inputs": records_read(run)}
    tuned = tuning_provenance(grid, result, run.split)
    record = tune_record(policy, run, identity, result, tuned)
    chosen = tuned_config(policy.config, result)
    if chosen is not None:
        chosen = chosen.model_copy(update={"tuned": tuned})
    return tune_outcome(record, result, None if chosen is None else chosen.model_dump(mode="json"))


def _check_range(config: Any, resolved: Resolved) -> None:
    """A gate point needs tau > tau_min: a range where the other threshold leaves no
    such point is refused before any work (it would write an empty curve)."""
    tau, tau_min = Decimal(config.tau), Decimal(config.tau_min)
    if resolved.param == "tau":
        if any(Decimal(v) > tau_min for v in resolved.values):
            return
        fixed, other, side, field = "tau_min", config.tau_min, "at or below", "--to"
    else:
        if any(tau > Decimal(v) for v in resolved.values):
            return
        fixed, other, side, field = "tau", config.tau, "at or above", "--from"
    raise SpecError(
        f"every value from {resolved.start} to {resolved.stop} is {side} the policy's "
        f"{fixed} {other}, and a gate needs tau > tau_min: no point to sweep",
        field=field,
    )


def sweep_points(policy: Any, run: RunInputs, resolved: Resolved, file: str) -> SweepResult:
    """The curve's points, and the areas under it, which no point carries."""
    _check_range(policy.config, resolved)
    gate_id = resolve_gate(run, policy.config.gate, file=file)
    questions = gate_inputs(run, gate_id).questions
    curve = sweep_gate(questions, policy.config, param=resolved.param, values=resolved.values)
    points = [
        {
            "params": {"tau": p.tau, "tau_min": p.tau_min},
            "metrics": p.model_dump(mode="json", include=set(CURVE_METRICS)),
        }
        for p in curve
    ]
    values = Prepared(questions, policy.config).metrics(policy.config.tau, policy.config.tau_min)
    summary = {
        "policy": policy.name,
        "kind": policy.kind,
        "gate_id": gate_id,
        "param": resolved.param,
        "n_points": len(points),
        **{key: values[key].model_dump(mode="json") for key in AURC_KEYS},
    }
    shown = list(CURVE_METRICS)
    return SweepResult(param=resolved.param, points=points, shown=shown, summary=summary)


def default_curve(policy: Any, run: RunInputs, inputs: Dump) -> list[Dump]:
    """The risk–coverage curve on the gate records the manifest names."""
    questions = gate_inputs(run, inputs["gate_id"]).questions
    return [p.model_dump(mode="json") for p in risk_coverage_curve(questions, policy.config)]


def _units(policy: Any, run: RunInputs, inputs: Dump) -> Units:
    decisions = policy.decide(gate_inputs(run, inputs["gate_id"]))
    rows = [GateRow.of(d) for d in decisions]
    alpha = policy.config.alpha_fraction
    keys = [(d.dataset, d.question_id) for d in decisions]
    return keys, metric_values(rows, alpha), metric_counts(rows, alpha)


def deltas(
    a: Any,
    b: Any,
    run: RunInputs,
    sides: Sequence[tuple[Dump, Links | None]],
    metrics: Sequence[str] | None,
    bootstrap: dict[str, int],
) -> list[MetricDelta]:
    """Each metric's exact a - b with a paired interval over the same questions."""
    units_a, units_b = _units(a, run, sides[0][0]), _units(b, run, sides[1][0])
    return counted_deltas(units_a, units_b, metrics, bootstrap)


__all__ = [
    "AURC_KEYS",
    "CURVE_METRICS",
    "RANGES",
    "apply",
    "chain",
    "default_curve",
    "deltas",
    "records_read",
    "sweep_points",
    "tune",
]
