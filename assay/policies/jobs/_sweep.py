"""`assay policies sweep` over a run directory: one point (params + metrics) per value
of the moving threshold, for every kind (§2.8.3, §3.6, §4.8).

The threshold that moves and its default range depend on the kind, so the CLI passes
None for what the user left out and `resolve` fills it in here. An evidence_gate sweep
also has a summary the points cannot carry: the areas under its risk-coverage curve
(C-5 names `aurc`, `aurc_opt`, `e_aurc`), independent of `tau` and `tau_min`; it goes to
`sweep_summary.json` beside `sweep.jsonl`.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from assay._limits import MAX_GRID_POINTS
from assay.core.rundir import ANSWERS_FILE, GATES_FILE, SWEEP_FILE, SWEEP_SUMMARY_FILE
from assay.errors import SpecError
from assay.policies.engine._canonical import canonical_sha256
from assay.policies.engine._numbers import decimal_grid, threshold
from assay.policies.engine._run_inputs import RunInputs
from assay.policies.jobs._apply import Chain, _consumed
from assay.policies.jobs._spec import PolicySpec
from assay.policies.jobs._write import policy_sha256

SWEEP = SWEEP_FILE
SUMMARY = SWEEP_SUMMARY_FILE
CS_DEFAULT_TIE = "condition_limited=support-0.10"

# kind -> moving threshold -> (from, to, step); the first threshold is the default.
RANGES: dict[str, dict[str, tuple[str, str, str]]] = {
    "claim_selective": {
        "support": ("0.10", "0.90", "0.05"),
        "conflict": ("0.10", "0.90", "0.05"),
        "condition_limited": ("0.10", "0.90", "0.05"),
        "limitation": ("0.10", "0.90", "0.05"),
    },
    "fail_closed": {
        "tau_entail": ("0.50", "0.99", "0.01"),
        "tau_contradict": ("0.50", "0.99", "0.01"),
    },
    "evidence_gate": {
        "tau": ("0.00", "1.00", "0.01"),
        "tau_min": ("0.00", "1.00", "0.01"),
    },
}
THRESHOLDS = tuple(RANGES["claim_selective"])
CURVE_METRICS = ("coverage", "selective_risk_label", "selective_risk_support")  # §3.6
AURC_KEYS = ("aurc", "aurc_opt", "e_aurc", "aurc_support", "aurc_opt_support", "e_aurc_support")


class SweepSettings(BaseModel):
    """What the user asked for; None means the kind's default (see `resolve`)."""

    model_config = ConfigDict(frozen=True)

    param: str | None = None
    start: str | None = None
    stop: str | None = None
    step: str | None = None
    ties: tuple[str, ...] | None = None


class Resolved(BaseModel):
    """The sweep actually run: every setting written out."""

    model_config = ConfigDict(frozen=True)

    param: str
    start: str
    stop: str
    step: str
    values: list[str]
    ties: tuple[str, ...]


class SweepResult(BaseModel):
    """sweep.jsonl's points, and sweep_summary.json's content (evidence_gate only)."""

    model_config = ConfigDict(frozen=True)

    param: str
    points: list[dict[str, Any]]
    shown: list[str] = Field(description="The metrics the CLI's table shows.")
    summary: dict[str, Any] | None = None


def _step(step: str) -> Decimal:
    """A finite decimal in (0, 1]; anything else is one line naming --step."""
    try:
        value = Decimal(step)
    except InvalidOperation:
        value = Decimal(-1)
    if not value.is_finite() or not Decimal(0) < value <= Decimal(1):
        raise SpecError(f"must be a decimal in (0, 1] such as 0.05, got {step!r}", field="--step")
    return value


def _default(value: str, given: bool, param: str) -> str:
    """`0.90`, or for a value the user left out `0.90 (support's default)`."""
    return value if given else f"{value} ({param}'s default)"


def _grid(param: str, start: str, stop: str, step: str, settings: SweepSettings) -> list[str]:
    """The values a sweep runs over, lowest first: bounds in [0, 1], `--from` not above
    `--to`, a step in (0, 1] that fits in the range (any step for `--from` = `--to`:
    one point), so a range that gives no point, or only its first, is refused."""
    low, high = threshold(start, field="--from"), threshold(stop, field="--to")
    size = _step(step)
    first = _default(start, settings.start is not None, param)
    last = _default(stop, settings.stop is not None, param)
    if low > high:
        if settings.start is None:  # only --to was given: it is the value to change
            message, field = f"{stop} is below --from {first}", "--to"
        else:
            message, field = f"{start} is above --to {last}", "--from"
        raise SpecError(f"{message}: a sweep runs from the lower value up", field=field)
    if low < high and size > Decimal(stop) - Decimal(start):
        raise SpecError(
            f"{step} is larger than the range {first} to {last}: only {start} would be "
            "swept; use a smaller --step",
            field="--step",
        )
    _check_points(int((Decimal(stop) - Decimal(start)) / size) + 1, step)
    return decimal_grid(start, stop, str(size))


def _check_points(points: int, step: str) -> None:
    """A range of more than MAX_GRID_POINTS points is refused before any is made."""
    if points > MAX_GRID_POINTS:
        raise SpecError(
            f"{step} gives {points} points; a sweep has at most {MAX_GRID_POINTS}: use a "
            "larger --step or a shorter range",
            field="--step",
        )


def _base(kind: str, param: str) -> str:
    """The threshold a parameter names: an intent-aware claim_selective policy also takes
    `<family>.support` (one family; `with_params` checks the family)."""
    return param.rpartition(".")[2] if kind == "claim_selective" else param


def resolve(kind: str, settings: SweepSettings) -> Resolved:
    """The kind's defaults where the user gave none; a --param or --tie the kind does
    not have is one line naming the option and what is allowed."""
    ranges = RANGES[kind]
    param = settings.param or next(iter(ranges))
    if _base(kind, param) not in ranges:
        allowed = ", ".join(ranges)
        raise SpecError(f"a {kind} policy sweeps {allowed}; got {param!r}", field="--param")
    default = ranges[_base(kind, param)]
    start = (default[0] if settings.start is None else settings.start).strip()
    stop = (default[1] if settings.stop is None else settings.stop).strip()
    step = (default[2] if settings.step is None else settings.step).strip()
    values = _grid(param, start, stop, step, settings)
    ties: tuple[str, ...] = settings.ties or ()
    if kind != "claim_selective" and ties:
        raise SpecError(f"ties are claim_selective's; this is a {kind}", field="--tie")
    if kind == "claim_selective" and settings.ties is None and param == "support":
        ties = (CS_DEFAULT_TIE,)
    return Resolved(param=param, start=start, stop=stop, step=step, values=values, ties=ties)


def _check_ties(resolved: Resolved) -> None:
    from assay.policies.claim_selective._tuning import parse_tie

    for text in resolved.ties:
        target, source, _ = parse_tie(text)
        if source != resolved.param or _base("claim_selective", target) not in THRESHOLDS:
            raise SpecError(
                f"{text!r}: a tie moves a threshold with --param {resolved.param}", field="--tie"
            )


def _sweep_claim_selective(
    spec: PolicySpec, policy: Any, run: RunInputs, chain: Chain | None, resolved: Resolved
) -> SweepResult:
    from assay.policies.claim_selective._load import cs_inputs
    from assay.policies.claim_selective._tuning import SWEEP_METRICS, sweep

    _check_ties(resolved)
    verifier = run.resolve_verifier(policy.config.verifier, file=spec.file)
    inputs = cs_inputs(run, verifier, chain.links if chain else None)
    points = sweep(
        policy.config,
        inputs,
        param=resolved.param,
        start=resolved.start,
        stop=resolved.stop,
        step=resolved.step,
        ties=resolved.ties,
    )
    dumped = [p.model_dump(mode="json") for p in points]
    shown = list(dumped[0]["metrics"]) if dumped else list(SWEEP_METRICS)
    return SweepResult(param=resolved.param, points=dumped, shown=shown)


def _sweep_fail_closed(
    spec: PolicySpec, policy: Any, run: RunInputs, chain: Chain | None, resolved: Resolved
) -> SweepResult:
    from assay.policies.fail_closed._load import fc_inputs
    from assay.policies.fail_closed._tuning import SWEEP_METRICS, evaluate

    verifier = run.resolve_verifier(policy.config.verifier, file=spec.file)
    responses = fc_inputs(run, verifier, chain.links if chain else None)
    config = policy.config
    points = []
    for value in resolved.values:
        moved = config.with_thresholds(**{resolved.param: value})
        metrics = evaluate(config, responses, {resolved.param: value})
        points.append(
            {
                "params": {"tau_entail": moved.tau_entail, "tau_contradict": moved.tau_contradict},
                "metrics": {m: r.model_dump(mode="json") for m, r in metrics.items()},
            }
        )
    return SweepResult(param=resolved.param, points=points, shown=list(SWEEP_METRICS))


def _check_gate_range(config: Any, resolved: Resolved) -> None:
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


def _sweep_gate(
    spec: PolicySpec, policy: Any, run: RunInputs, chain: Chain | None, resolved: Resolved
) -> SweepResult:
    from assay.policies.evidence_gate._load import gate_inputs, resolve_gate
    from assay.policies.evidence_gate._tuning import Prepared, sweep_gate

    _check_gate_range(policy.config, resolved)
    gate_id = resolve_gate(run, policy.config.gate, file=spec.file)
    questions = gate_inputs(run, gate_id).questions
    curve = sweep_gate(questions, policy.config, param=resolved.param, values=resolved.values)
    points = [
        {
            "params": {"tau": p.tau, "tau_min": p.tau_min},
            "metrics": p.model_dump(
                mode="json",
                include=set(CURVE_METRICS),
            ),
        }
        for p in curve
    ]
    values = Prepared(questions, policy.config).metrics(policy.config.tau, policy.config.tau_min)
    summary = {
        "policy": spec.name,
        "kind": spec.kind,
        "gate_id": gate_id,
        "param": resolved.param,
        "n_points": len(points),
        **{key: values[key].model_dump(mode="json") for key in AURC_KEYS},
    }
    shown = list(CURVE_METRICS)
    return SweepResult(param=resolved.param, points=points, shown=shown, summary=summary)


SWEEPERS = {
    "claim_selective": _sweep_claim_selective,
    "fail_closed": _sweep_fail_closed,
    "evidence_gate": _sweep_gate,
}


def consumed_by(kind: str, run: RunInputs, chain: Chain | None) -> dict[str, str]:
    """The records a sweep reads, hashed as `apply` records them in its manifest
    (`inputs.records_sha256`): a report compares the two."""
    if kind == "evidence_gate":
        return _consumed(run, None, (ANSWERS_FILE, GATES_FILE))
    return _consumed(run, chain)


def sweep_run(
    spec: PolicySpec, policy: Any, run: RunInputs, chain: Chain | None, settings: SweepSettings
) -> SweepResult:
    """The curve of `spec` over `run` (already restricted to the split), chained
    policies reading their gate's decisions. Each point names the split, the
    `policy_sha256` and the hash of the records it was computed on, so a report never
    plots it against a point of other answers, configuration or records unsaid."""
    resolved = resolve(spec.kind, settings)
    result = SWEEPERS[spec.kind](spec, policy, run, chain, resolved)
    data = {
        "split": run.split,
        "policy_sha256": policy_sha256(policy),
        "inputs_sha256": canonical_sha256(consumed_by(spec.kind, run, chain)),
    }
    return result.model_copy(update={"points": [{**p, **data} for p in result.points]})


def write_sweep(folder: Path, result: SweepResult) -> list[Path]:
    """`<folder>/sweep.jsonl` and, with a summary, `sweep_summary.json` (canonical
    JSON); a summary left by an earlier sweep of the same policy is removed."""
    from assay.policies.engine._canonical import write_canonical_json, write_canonical_jsonl

    folder.mkdir(parents=True, exist_ok=True)
    written = [folder / SWEEP]
    write_canonical_jsonl(folder / SWEEP, result.points)
    if result.summary is not None:
        write_canonical_json(folder / SUMMARY, result.summary)
        written.append(folder / SUMMARY)
    else:
        (folder / SUMMARY).unlink(missing_ok=True)
    return written


__all__ = ["RANGES", "SweepResult", "SweepSettings", "resolve", "sweep_run", "write_sweep"]
