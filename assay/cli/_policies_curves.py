"""`assay policies sweep | compare`: curves of one policy and paired deltas of two, for
every kind. Registered on `policies_app` by `assay.cli._policies`, so this module needs
nothing of it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from assay.cli._policies_common import (
    AppliedRunDir,
    Name,
    PolicyFile,
    RandomState,
    Resamples,
    RunDir,
    Split,
    check_run_dir,
    fmt,
    interval,
    load_policies,
)
from assay.errors import AssayError, SpecError


def sweep(
    run_dir: RunDir,
    policy: PolicyFile,
    name: Name,
    param: Annotated[
        str | None,
        typer.Option(
            help="The threshold that moves (default: claim_selective support, "
            "fail_closed tau_entail, evidence_gate tau)."
        ),
    ] = None,
    start: Annotated[
        str | None, typer.Option("--from", help="First value (default per kind).")
    ] = None,
    stop: Annotated[str | None, typer.Option("--to", help="Last value (default per kind).")] = None,
    step: Annotated[str | None, typer.Option(help="Step (default per kind).")] = None,
    tie: Annotated[
        list[str] | None,
        typer.Option(
            help="Q=P-0.10: Q follows P (claim_selective; repeatable; "
            "default condition_limited=support-0.10 when sweeping support)."
        ),
    ] = None,
    split: Split = None,
) -> None:
    """The risk-coverage curve of policy NAME on RUN_DIR (one point per value of
    --param); writes policies/<name>/sweep.jsonl (evidence_gate: also
    sweep_summary.json with aurc, aurc_opt, e_aurc)."""
    from assay._table import print_table
    from assay.policies.jobs._sweep import SweepSettings, resolve, sweep_run, write_sweep
    from assay.policies.jobs._write import policy_dir

    loaded = load_policies(run_dir, policy, name, split)
    spec, chain = loaded.picks[0]
    settings = SweepSettings(
        param=param, start=start, stop=stop, step=step, ties=tuple(tie) if tie else None
    )
    _offered(spec.kind, spec.name, "sweeps", "--name")
    resolve(spec.kind, settings)  # a bad option fails before any work
    result = sweep_run(spec, spec.build(), loaded.run, chain, settings)
    names = result.shown
    rows = [
        (
            ", ".join(f"{k}={v}" for k, v in p["params"].items()),
            *(fmt(p["metrics"][m]["value"]) for m in names),
        )
        for p in result.points
    ]
    print_table(("thresholds", *names), rows, title=f"{spec.name} sweep of {result.param}")
    if result.summary is not None:
        for key in ("aurc", "aurc_opt", "e_aurc"):
            print(f"{key} = {fmt(result.summary[key]['value'])}")
    for target in write_sweep(policy_dir(run_dir, spec.name), result):
        print(f"wrote {target}", file=sys.stderr)


def compare(
    run_dir: AppliedRunDir,
    a: Annotated[str, typer.Option("--a", help="The first applied policy.")],
    b: Annotated[str, typer.Option("--b", help="The policy subtracted from the first.")],
    resamples: Resamples = 1000,
    random_state: RandomState = 0,
    metrics: Annotated[
        str | None, typer.Option(help="Comma-separated metrics (default: all of the kind's).")
    ] = None,
) -> None:
    """Paired deltas a - b of two applied policies of one kind on the same responses
    (questions, for evidence_gate), with bootstrap intervals; writes
    policies/<a>/compare/<b>.json."""
    from assay._table import print_table
    from assay.policies.engine._canonical import write_canonical_json
    from assay.policies.jobs._compare import compare_path, compare_policies, metric_list

    chosen = None if metrics is None else metric_list(metrics)
    check_run_dir(run_dir)
    _offered(_applied_kind(run_dir, a), a, "comparisons", "--a")
    result = compare_policies(
        run_dir, a, b, metrics=chosen, resamples=resamples, random_state=random_state
    )
    rows = []
    for d in result["deltas"]:
        ci = d.get("ci") if d["delta"] is not None else None  # no interval for no delta
        rows.append(
            (
                d["metric"],
                fmt(d["a"]["value"]),
                fmt(d["b"]["value"]),
                fmt(d["delta"]),
                interval(ci),
            )
        )
    print_table(("metric", a, b, "delta", "95% CI"), rows, title=f"{a} - {b}")
    target = compare_path(run_dir, a, b)
    write_canonical_json(target, result)
    print(f"wrote {target}", file=sys.stderr)


_OFFERED_BY = {"sweeps": "sweep_ranges", "comparisons": "compares"}


def _offered(kind: str | None, name: str, what: str, field: str) -> None:
    """Sweeps and comparisons are for kinds that offer them (one line otherwise)."""
    from assay.policies.engine._kind import kind_class, kinds_with

    attribute = _OFFERED_BY[what]
    found = kind_class(kind) if kind is not None else None
    if kind is not None and not getattr(found, attribute, None):
        kinds = ", ".join(kinds_with(attribute))
        raise SpecError(f"{what} are built for {kinds}; {name!r} is a {kind}", field=field)


def _applied_kind(run_dir: Path, name: str) -> str | None:
    """The kind an applied policy's manifest names (None: unreadable, compare says why)."""
    from assay.core.rundir import MANIFEST_FILE, read_json
    from assay.policies.jobs._write import policy_dir

    try:
        kind = read_json(policy_dir(run_dir, name) / MANIFEST_FILE)["policy"]["kind"]
    except (AssayError, OSError, ValueError, KeyError, TypeError):
        return None
    return kind if isinstance(kind, str) else None


__all__ = ["compare", "sweep"]
