"""`assay policies apply | tune | list | export` (and `sweep | compare`, registered from
`assay.cli._policies_curves`): decisions over a finished run's records.

Kept out of `cli.py` so that file only registers the sub-command group; the policies
modules are imported inside the commands, as in the rest of the CLI.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from assay._limits import MAX_WORKERS
from assay.cli import _policies_curves as curves
from assay.cli._paths import cli_path
from assay.cli._policies_common import (
    AppliedRunDir,
    Name,
    OnlyName,
    PolicyFile,
    RandomState,
    Resamples,
    RunDir,
    Split,
    fmt,
    interval,
    load_policies,
    writes_run_dir,
)
from assay.core.rundir import CERTIFICATES_FILE, GATE_DECISIONS_FILE
from assay.errors import RunError, SpecError

policies_app = typer.Typer(
    help="Apply versioned decision policies to a run's verifications.", no_args_is_help=True
)

EXPORTS = {"certificates": CERTIFICATES_FILE, "gate-log": GATE_DECISIONS_FILE}


def _metric_rows(ratios: dict[str, dict[str, Any]]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for name, r in ratios.items():
        count = f"{r['numerator']}/{r['denominator']}"
        row = (name, fmt(r.get("value")), count, interval(r.get("ci")), r.get("null_reason") or "")
        rows.append(row)
    return rows


def _report(applied: Any) -> None:
    from assay._table import print_table

    for warning in applied.warnings:
        print(f"warning: {applied.name}: {warning}", file=sys.stderr)
    title = f"{applied.name} ({applied.kind} v{applied.version}) · {applied.responses} responses"
    headers = ("metric", "value", "n/d", "95% CI", "null")
    print_table(headers, _metric_rows(applied.ratios), title=title)
    print(f"wrote {applied.folder}", file=sys.stderr)


@policies_app.command("apply")
def apply(
    run_dir: RunDir,
    policy: PolicyFile,
    name: OnlyName = None,
    resamples: Resamples = 1000,
    random_state: RandomState = 0,
    split: Split = None,
    by: Annotated[
        str | None, typer.Option(help="Also metrics per value of this response field.")
    ] = None,
    slice_: Annotated[
        str | None,
        typer.Option("--slice", help="source-missing: also the no-evidence counterfactual."),
    ] = None,
    workers: Annotated[
        int,
        typer.Option(
            min=1,
            max=MAX_WORKERS,
            help="Policies decided at once (threads); outputs do not change.",
        ),
    ] = 1,
) -> None:
    """Decide every claim and response of RUN_DIR under each policy and write
    policies/<name>/ (records, metrics.json, manifest.json)."""
    from assay.policies.jobs._session import apply_policies

    if slice_ not in (None, "source-missing"):
        raise SpecError(f"use source-missing; got {slice_!r}", field="--slice")
    applied = apply_policies(
        run_dir,
        policy,
        name=name,
        split=split,
        by=by,
        source_missing=slice_ is not None,
        resamples=resamples,
        random_state=random_state,
        workers=workers,
    )
    for one in applied:
        _report(one)


@policies_app.command("tune")
@writes_run_dir("assay policies tune")
def tune(
    run_dir: RunDir,
    policy: PolicyFile,
    name: Name,
    split: Annotated[
        str | None, typer.Option(help="Tune on answers of this split (dev; never test).")
    ] = None,
    grid: Annotated[
        Path | None,
        typer.Option("--grid", parser=cli_path, help="A TOML tuning spec replacing the default."),
    ] = None,
    write_policy_to: Annotated[
        Path | None,
        typer.Option(
            "--write-policy",
            parser=cli_path,
            help="Write a policy file with the chosen thresholds.",
        ),
    ] = None,
) -> None:
    """Select thresholds of policy NAME on RUN_DIR's records with the kind's default
    tuning; write policies/<name>/tune/ (candidates.jsonl, result.json)."""
    from assay.policies.engine._canonical import check_target
    from assay.policies.jobs._tune import load_grid, tune_run, write_tune
    from assay.policies.jobs._write import policy_dir

    if write_policy_to is not None:
        inputs = [("--policy", policy), *([("--grid", grid)] if grid is not None else [])]
        check_target(write_policy_to, "--write-policy", inputs=inputs, run_dir=run_dir)
    grid_spec = load_grid(grid) if grid is not None else None
    loaded = load_policies(run_dir, policy, name, split)
    spec, chain = loaded.picks[0]
    tuned = tune_run(spec, spec.build(), loaded.run, chain, grid_spec)
    folder = write_tune(policy_dir(run_dir, spec.name), tuned)
    print(f"wrote {folder}", file=sys.stderr)
    if tuned.selected is None:
        print(f"error: {tuned.message}", file=sys.stderr)
        raise typer.Exit(code=tuned.exit_code)
    for param, value in sorted(tuned.selected.items()):
        print(f"{param} = {value}")
    if write_policy_to is not None:
        from assay.policies.jobs._tune_write import write_tuned_policy

        write_tuned_policy(write_policy_to, spec, tuned.selected_config or {})
        print(f"wrote {write_policy_to}", file=sys.stderr)


policies_app.command("sweep")(writes_run_dir("assay policies sweep")(curves.sweep))
policies_app.command("compare")(writes_run_dir("assay policies compare")(curves.compare))


@policies_app.command("list")
def list_kinds() -> None:
    """Policy kinds with their versions."""
    from assay._table import print_table
    from assay.core.registry import POLICIES

    rows = [
        (e.name, str(getattr(POLICIES.get(e.name), "version", "")), e.description)
        for e in POLICIES.entries()
    ]
    print_table(("kind", "version", "description"), rows)


def _file_bytes(run_dir: Path, name: str, what: str) -> bytes:
    """An applied policy's file; one that its kind never writes says so (applying it
    again would not help)."""
    from assay.policies.jobs._write import MANIFEST, policy_dir

    folder = policy_dir(run_dir, name)
    source = folder / EXPORTS[what]
    if not source.is_file():
        kind = curves._applied_kind(run_dir, name) if (folder / MANIFEST).is_file() else None
        if kind is not None:
            raise SpecError(
                f"{name!r} is a {kind}, which writes no {EXPORTS[what]}", field="--what"
            )
        raise RunError(f"policy {name!r} wrote no {EXPORTS[what]}: apply it first", file=source)
    return source.read_bytes()


def _audit_bytes(run_dir: Path, name: str) -> bytes:
    from assay.policies.engine._canonical import canonical_json
    from assay.policies.jobs._export import audit_records
    from assay.policies.jobs._write import MANIFEST, policy_dir

    if not (policy_dir(run_dir, name) / MANIFEST).is_file():
        raise RunError(
            f"policy {name!r} was not applied here: apply it first", file=policy_dir(run_dir, name)
        )
    return "".join(canonical_json(r) + "\n" for r in audit_records(run_dir, name)).encode()


@policies_app.command("export")
def export(
    run_dir: AppliedRunDir,
    name: Annotated[str, typer.Option(help="The applied policy's name.")],
    what: Annotated[str, typer.Option(help="certificates, audit or gate-log.")] = "certificates",
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", parser=cli_path, help="File to write instead of stdout."),
    ] = None,
) -> None:
    """Print (or write) certificates or the gate log of an applied policy byte for byte,
    or the audit objects of a fail_closed policy (rebuilt from its manifest)."""
    from assay.policies.engine._canonical import check_target, write_bytes_atomic

    if what not in (*EXPORTS, "audit"):
        raise SpecError(f"use one of certificates, audit, gate-log; got {what!r}", field="--what")
    if output is not None:
        check_target(output, "--output", run_dir=run_dir)
    data = _audit_bytes(run_dir, name) if what == "audit" else _file_bytes(run_dir, name, what)
    if output is None:
        sys.stdout.write(data.decode("utf-8"))
        return
    write_bytes_atomic(output, data)
    print(f"wrote {output}", file=sys.stderr)


__all__ = ["policies_app"]
