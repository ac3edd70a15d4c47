"""`assay policies sweep` over a run directory: one point (params + metrics) per value
of the moving threshold, for every kind.

The threshold that moves and its default range are the kind's (`sweep_ranges`), so the CLI passes
None for what the user left out and `resolve` fills it in here. An evidence_gate sweep also has a
summary the points cannot carry: the areas under its risk-coverage curve (`aurc`, `aurc_opt`,
`e_aurc`: docs/reference/policies/evidence-gate.md#aurc), independent of `tau` and `tau_min`; it
goes to `sweep_summary.json` beside `sweep.jsonl`.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from assay._limits import MAX_GRID_POINTS
from assay.core.rundir import SWEEP_FILE, SWEEP_SUMMARY_FILE
from assay.errors import SpecError
from assay.policies.engine._apply_common import Chain
from assay.policies.engine._canonical import canonical_sha256
from assay.policies.engine._kind import PolicyKind, kind_class, kinds_with
from assay.policies.engine._numbers import decimal_grid, threshold
from assay.policies.engine._results import Resolved, SweepResult, SweepSettings
from assay.policies.engine._run_inputs import RunInputs
from assay.policies.engine._spec import PolicySpec
from assay.policies.jobs._write import policy_sha256

SWEEP = SWEEP_FILE
SUMMARY = SWEEP_SUMMARY_FILE


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


def _kind(kind: str) -> type[PolicyKind]:
    """The registered class of a kind that sweeps (`sweep_ranges`), else one line."""
    found = kind_class(kind)
    if found is None or not found.sweep_ranges:
        kinds = ", ".join(kinds_with("sweep_ranges"))
        raise SpecError(f"sweeps are built for {kinds}; this is a {kind}", field="--param")
    return found


def resolve(kind: str, settings: SweepSettings) -> Resolved:
    """The kind's defaults where the user gave none; a --param or --tie the kind does
    not have is one line naming the option and what is allowed."""
    found = _kind(kind)
    ranges = found.sweep_ranges
    param = settings.param or next(iter(ranges))
    if found.sweep_base(param) not in ranges:
        allowed = ", ".join(ranges)
        raise SpecError(f"a {kind} policy sweeps {allowed}; got {param!r}", field="--param")
    default = ranges[found.sweep_base(param)]
    start = (default[0] if settings.start is None else settings.start).strip()
    stop = (default[1] if settings.stop is None else settings.stop).strip()
    step = (default[2] if settings.step is None else settings.step).strip()
    values = _grid(param, start, stop, step, settings)
    ties: tuple[str, ...] = settings.ties or ()
    if not found.takes_ties and ties:
        takers = " and ".join(kinds_with("takes_ties"))
        raise SpecError(f"ties are {takers}'s; this is a {kind}", field="--tie")
    if settings.ties is None:
        ties = found.default_ties(param)
    return Resolved(param=param, start=start, stop=stop, step=step, values=values, ties=ties)


def sweep_run(
    spec: PolicySpec, policy: Any, run: RunInputs, chain: Chain | None, settings: SweepSettings
) -> SweepResult:
    """The curve of `spec` over `run` (already restricted to the split), chained
    policies reading their gate's decisions. Each point names the split, the
    `policy_sha256` and the hash of the records it was computed on, so a report never
    plots it against a point of other answers, configuration or records unsaid."""
    resolved = resolve(spec.kind, settings)
    result: SweepResult = policy.sweep(run, chain, resolved, spec.file)
    data = {
        "split": run.split,
        "policy_sha256": policy_sha256(policy),
        "inputs_sha256": canonical_sha256(policy.records_read(run, chain)),
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


__all__ = ["SweepResult", "SweepSettings", "resolve", "sweep_run", "write_sweep"]
