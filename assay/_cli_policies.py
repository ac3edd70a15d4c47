"""`assay policies apply | list | export`: decisions over a finished run's records.

Kept out of `cli.py` so that file only registers the sub-command group; the policies
modules are imported inside the commands, as in the rest of the CLI.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from assay.errors import RunError, SpecError

policies_app = typer.Typer(
    help="Apply versioned decision policies to a run's verifications.", no_args_is_help=True
)

_EMPTY = {
    "claim_selective": "no responses to evaluate: every metric is null but the UCCR variants (0.0)",
    "fail_closed": "no responses to evaluate: every metric is null",
    "evidence_gate": "no questions to evaluate: every metric is null",
}
EXPORTS = {"certificates": "certificates.jsonl", "gate-log": "gate_decisions.jsonl"}


def _fmt(value: Any) -> str:
    return "null" if value is None else f"{value:.4f}"


def _metric_rows(ratios: dict[str, dict[str, Any]]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for name, r in ratios.items():
        ci = r.get("ci")
        interval = f"{_fmt(ci[0])}–{_fmt(ci[1])}" if ci else ""
        count = f"{r['numerator']}/{r['denominator']}"
        rows.append((name, _fmt(r.get("value")), count, interval, r.get("null_reason") or ""))
    return rows


def _check_run_dir(run_dir: Path) -> None:
    if not (run_dir / "manifest.json").is_file():
        raise RunError("not a run directory (no manifest.json)", file=run_dir)


def _mark_in_sample(policy: Any, outputs: Any, split: str | None) -> Any:
    """Metrics of a policy applied to the split it was tuned on say so (§5.5)."""
    if split is None:
        return outputs
    tuned = getattr(policy.config, "tuned", None)
    in_sample = isinstance(tuned, dict) and tuned.get("split") == split
    warnings = list(outputs.warnings)
    if in_sample:
        warnings.append(f"tuned on split {split!r}: these metrics are in-sample")
    metrics = {**outputs.metrics, "in_sample": in_sample}
    return outputs.model_copy(update={"metrics": metrics, "warnings": warnings})


def _gates_for(specs: list[Any], chosen: list[Any]) -> dict[str, Any]:
    """The file's gate policies; a chosen policy's `after` must name one (§5.9)."""
    gates = {s.name: s for s in specs if s.kind == "evidence_gate"}
    for spec in chosen:
        after = spec.block.get("after")
        if after is not None and after not in gates:
            raise SpecError(
                f"{after!r} is not an evidence_gate policy of this file",
                file=spec.file,
                field="after",
            )
    return gates


def _report(pol: Any, outputs: Any, folder: Path) -> None:
    from assay._table import print_table

    for warning in outputs.warnings:
        print(f"warning: {pol.name}: {warning}", file=sys.stderr)
    title = f"{pol.name} ({pol.kind} v{pol.version}) · {outputs.counts['responses']} responses"
    headers = ("metric", "value", "n/d", "95% CI", "null")
    print_table(headers, _metric_rows(outputs.ratios), title=title)
    print(f"wrote {folder}", file=sys.stderr)


@policies_app.command("apply")
def apply(
    run_dir: Annotated[Path, typer.Argument(help="A finished run directory.")],
    policy: Annotated[
        Path,
        typer.Option("--policy", help="A policy file or run spec (TOML) with policies blocks."),
    ],
    name: Annotated[str | None, typer.Option(help="Only the policy with this name.")] = None,
    resamples: Annotated[int, typer.Option(help="Bootstrap resamples of the metrics.")] = 1000,
    random_state: Annotated[int, typer.Option(help="Seed of the bootstrap (PCG64).")] = 0,
    split: Annotated[
        str | None, typer.Option(help="Only answers of this split (train, dev or test).")
    ] = None,
    by: Annotated[
        str | None, typer.Option(help="Also metrics per value of this response field.")
    ] = None,
    slice_: Annotated[
        str | None,
        typer.Option("--slice", help="source-missing: also the no-evidence counterfactual."),
    ] = None,
) -> None:
    """Decide every claim and response of RUN_DIR under each policy and write
    policies/<name>/ (records, metrics.json, manifest.json)."""
    from assay.policies._apply import RUNNERS, Settings, chain_of
    from assay.policies._apply_write import write_policy
    from assay.policies._load_run import SPLITS, read_run, restrict_to_split
    from assay.policies._spec import load_policy_file, select

    specs = load_policy_file(policy)
    chosen = select(specs, name)
    if split is not None and split not in SPLITS:
        raise SpecError(f"use one of {', '.join(SPLITS)}; got {split!r}", field="--split")
    if slice_ not in (None, "source-missing"):
        raise SpecError(f"use source-missing; got {slice_!r}", field="--slice")
    gates = _gates_for(specs, chosen)
    _check_run_dir(run_dir)
    run = restrict_to_split(read_run(run_dir), split)
    settings = Settings(
        resamples=resamples, random_state=random_state, by=by, source_missing=slice_ is not None
    )
    results = []  # every policy decided before anything is written
    for spec in chosen:
        after = spec.block.get("after")
        chain = chain_of(gates[after], run) if after is not None else None
        pol = spec.build()
        outputs = RUNNERS[spec.kind](spec, pol, run, settings, chain)
        if outputs.counts["responses"] == 0:
            outputs.warnings.append(_EMPTY.get(pol.kind, "no responses to evaluate"))
        results.append((pol, _mark_in_sample(pol, outputs, split)))
    for pol, outputs in results:
        _report(pol, outputs, write_policy(run_dir, pol, run, outputs, settings))


@policies_app.command("tune")
def tune(
    run_dir: Annotated[Path, typer.Argument(help="A finished run directory.")],
    policy: Annotated[
        Path,
        typer.Option("--policy", help="A policy file or run spec (TOML) with policies blocks."),
    ],
    name: Annotated[str, typer.Option(help="The policy to tune.")],
    split: Annotated[
        str | None, typer.Option(help="Tune on answers of this split (dev; never test).")
    ] = None,
    grid: Annotated[
        Path | None, typer.Option("--grid", help="A TOML tuning spec replacing the default.")
    ] = None,
    write_policy_to: Annotated[
        Path | None,
        typer.Option("--write-policy", help="Write a policy file with the chosen thresholds."),
    ] = None,
) -> None:
    """Select thresholds of policy NAME on RUN_DIR's records with the kind's default
    tuning; write policies/<name>/tune/ (candidates.jsonl, result.json)."""
    from assay.policies._apply import chain_of
    from assay.policies._apply_write import policy_dir
    from assay.policies._load_run import read_run, restrict_to_split
    from assay.policies._spec import load_policy_file, select
    from assay.policies._tune_run import load_grid, tune_run, write_tune

    grid_spec = load_grid(grid) if grid is not None else None
    specs = load_policy_file(policy)
    spec = select(specs, name)[0]
    if write_policy_to is not None and spec.kind != "claim_selective":
        raise SpecError(
            f"--write-policy is built for claim_selective; {name!r} is a {spec.kind}",
            field="--write-policy",
        )
    gates = _gates_for(specs, [spec])
    _check_run_dir(run_dir)
    run = restrict_to_split(read_run(run_dir), split)
    after = spec.block.get("after")
    chain = chain_of(gates[after], run) if after is not None else None
    tuned = tune_run(spec, spec.build(), run, chain, grid_spec)
    folder = write_tune(policy_dir(run_dir, spec.name), tuned)
    print(f"wrote {folder}", file=sys.stderr)
    if tuned.selected is None:
        print(f"error: {tuned.message}", file=sys.stderr)
        raise typer.Exit(code=tuned.exit_code)
    for param, value in sorted(tuned.selected.items()):
        print(f"{param} = {value}")
    if write_policy_to is not None:
        from assay.policies._tune_write import write_tuned_policy

        write_tuned_policy(write_policy_to, spec, tuned.selected_config or {})
        print(f"wrote {write_policy_to}", file=sys.stderr)


@policies_app.command("sweep")
def sweep(
    run_dir: Annotated[Path, typer.Argument(help="A finished run directory.")],
    policy: Annotated[
        Path,
        typer.Option("--policy", help="A policy file or run spec (TOML) with policies blocks."),
    ],
    name: Annotated[str, typer.Option(help="The claim_selective policy to sweep.")],
    param: Annotated[str, typer.Option(help="The threshold that moves.")] = "support",
    start: Annotated[str, typer.Option("--from", help="First value (decimal).")] = "0.10",
    stop: Annotated[str, typer.Option("--to", help="Last value (decimal).")] = "0.90",
    step: Annotated[str, typer.Option(help="Step (decimal).")] = "0.05",
    tie: Annotated[
        list[str] | None,
        typer.Option(help="Q=P-0.10: Q follows P (repeatable; default condition_limited)."),
    ] = None,
    split: Annotated[
        str | None, typer.Option(help="Only answers of this split (train, dev or test).")
    ] = None,
) -> None:
    """The risk-coverage curve of policy NAME on RUN_DIR (one point per value of
    --param); writes policies/<name>/sweep.jsonl."""
    from assay._table import print_table
    from assay.policies._apply import chain_of
    from assay.policies._apply_write import policy_dir
    from assay.policies._canonical import write_canonical_jsonl
    from assay.policies._load_run import read_run, restrict_to_split
    from assay.policies._spec import load_policy_file, select
    from assay.policies._tune_run import SweepSettings, sweep_run

    specs = load_policy_file(policy)
    spec = select(specs, name)[0]
    gates = _gates_for(specs, [spec])
    _check_run_dir(run_dir)
    run = restrict_to_split(read_run(run_dir), split)
    after = spec.block.get("after")
    chain = chain_of(gates[after], run) if after is not None else None
    ties = tuple(tie) if tie is not None else SweepSettings().ties
    settings = SweepSettings(param=param, start=start, stop=stop, step=step, ties=ties)
    points = sweep_run(spec, spec.build(), run, chain, settings)
    names = list(points[0]["metrics"]) if points else []
    rows = [
        (
            ", ".join(f"{k}={v}" for k, v in p["params"].items()),
            *(_fmt(p["metrics"][m]["value"]) for m in names),
        )
        for p in points
    ]
    print_table(("thresholds", *names), rows, title=f"{spec.name} sweep of {param}")
    target = policy_dir(run_dir, spec.name) / "sweep.jsonl"
    write_canonical_jsonl(target, points)
    print(f"wrote {target}", file=sys.stderr)


@policies_app.command("compare")
def compare(
    run_dir: Annotated[Path, typer.Argument(help="A run directory with applied policies.")],
    a: Annotated[str, typer.Option("--a", help="The first applied policy.")],
    b: Annotated[str, typer.Option("--b", help="The policy subtracted from the first.")],
    resamples: Annotated[int, typer.Option(help="Paired bootstrap resamples.")] = 1000,
    random_state: Annotated[int, typer.Option(help="Seed of the bootstrap (PCG64).")] = 0,
    metrics: Annotated[
        str | None, typer.Option(help="Comma-separated metrics (default: all).")
    ] = None,
) -> None:
    """Paired deltas a - b of two applied claim_selective policies on the same
    responses, with bootstrap intervals; writes policies/<a>/compare/<b>.json."""
    from assay._table import print_table
    from assay.policies._canonical import write_canonical_json
    from assay.policies._compare_run import compare_path, compare_policies

    _check_run_dir(run_dir)
    chosen = [m.strip() for m in metrics.split(",")] if metrics else None
    result = compare_policies(
        run_dir, a, b, metrics=chosen, resamples=resamples, random_state=random_state
    )
    rows = []
    for d in result["deltas"]:
        ci = d.get("ci") if d["delta"] is not None else None  # no interval for no delta
        interval = f"{_fmt(ci[0])}–{_fmt(ci[1])}" if ci else ""
        rows.append(
            (d["metric"], _fmt(d["a"]["value"]), _fmt(d["b"]["value"]), _fmt(d["delta"]), interval)
        )
    print_table(("metric", a, b, "delta", "95% CI"), rows, title=f"{a} - {b}")
    target = compare_path(run_dir, a, b)
    write_canonical_json(target, result)
    print(f"wrote {target}", file=sys.stderr)


@policies_app.command("list")
def list_kinds() -> None:
    """Policy kinds with their versions."""
    from assay._table import print_table
    from assay.core.registry import POLICIES
    from assay.policies import _kinds  # noqa: F401  (registers the built-in kinds)

    rows = [
        (e.name, str(getattr(POLICIES.get(e.name), "version", "")), e.description)
        for e in POLICIES.entries()
    ]
    print_table(("kind", "version", "description"), rows)


def _file_bytes(run_dir: Path, name: str, what: str) -> bytes:
    from assay.policies._apply_write import policy_dir

    source = policy_dir(run_dir, name) / EXPORTS[what]
    if not source.is_file():
        raise RunError(f"policy {name!r} wrote no {EXPORTS[what]}: apply it first", file=source)
    return source.read_bytes()


def _audit_bytes(run_dir: Path, name: str) -> bytes:
    from assay.policies._apply_write import MANIFEST, policy_dir
    from assay.policies._canonical import canonical_json
    from assay.policies._export import audit_records

    if not (policy_dir(run_dir, name) / MANIFEST).is_file():
        raise RunError(
            f"policy {name!r} was not applied here: apply it first", file=policy_dir(run_dir, name)
        )
    return "".join(canonical_json(r) + "\n" for r in audit_records(run_dir, name)).encode()


@policies_app.command("export")
def export(
    run_dir: Annotated[Path, typer.Argument(help="A run directory with applied policies.")],
    name: Annotated[str, typer.Option(help="The applied policy's name.")],
    what: Annotated[str, typer.Option(help="certificates, audit or gate-log.")] = "certificates",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="File to write instead of stdout.")
    ] = None,
) -> None:
    """Print (or write) certificates or the gate log of an applied policy byte for byte,
    or the audit objects of a fail_closed policy (rebuilt from its manifest)."""
    if what not in (*EXPORTS, "audit"):
        raise SpecError(f"use one of certificates, audit, gate-log; got {what!r}", field="--what")
    data = _audit_bytes(run_dir, name) if what == "audit" else _file_bytes(run_dir, name, what)
    if output is None:
        sys.stdout.write(data.decode("utf-8"))
        return
    output.write_bytes(data)
    print(f"wrote {output}", file=sys.stderr)


__all__ = ["policies_app"]
