"""What `assay rerun` does between parsing its flags and exiting: re-run a run from its
directory (assay.runs.rerun), or only show what it would send, then print the drift
report (assay.compare._drift) as tables or JSON. With `--fail-on-drift` any drift
measured exits DRIFT_EXIT (3), for CI: 1 stays "the re-run did not complete" and 2 "it
was refused".
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from assay._limits import MAX_BOOTSTRAP
from assay._table import print_table
from assay.cli._paths import CacheDir, cli_path
from assay.errors import AssayError
from assay.redaction import scrub_text

if TYPE_CHECKING:
    from assay.compare._drift import DriftReport
    from assay.runs.rerun import RerunOptions

FORMATS = ("table", "json")
DRIFT_EXIT = 3  # --fail-on-drift: the re-run completed and something moved


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def _signed(value: float | None) -> str:
    return "-" if value is None else f"{value:+.4f}"


def print_drift(report: DriftReport) -> None:
    """The drift report as two tables (judges, metrics), its notes and a verdict line."""
    rows = [
        (
            j.judge,
            j.records,
            str(j.compared),
            f"{j.only_original}/{j.only_rerun}",
            _number(j.agreement),
            _number(j.kappa) if j.kappa is not None else "undefined",
            _number(j.identical_raw),
        )
        for j in report.judges
    ]
    headers = ["judge", "records", "compared", "missing (orig/rerun)", "agreement", "kappa"]
    print_table([*headers, "identical raw"], rows, title="drift: verdicts, re-run vs original")
    if report.metrics:
        print_table(
            ["metric", "judge", "n", "original", "rerun", "diff", "95% CI"],
            [
                (
                    m.metric,
                    m.judge,
                    str(m.n),
                    _number(m.original),
                    _number(m.rerun),
                    _signed(m.diff),
                    f"[{_signed(m.ci_low)}, {_signed(m.ci_high)}]",
                )
                for m in report.metrics
            ],
            title="drift: metrics (diff = rerun - original, paired bootstrap CI)",
        )
    if report.decomposers:
        _print_decomposers(report)
    for note in report.notes:
        print(f"- {scrub_text(note)}")
    moved = [j.judge for j in report.judges if not j.drift_free]
    split = [d.decomposer for d in report.decomposers if not d.drift_free]
    if report.drift_free:
        print(f"no drift: {report.rerun} reproduces {report.original}")
        return
    line = f"drift: {len(moved)} of {len(report.judges)} judges moved"
    if split:
        line += f", {len(split)} of {len(report.decomposers)} decomposers split answers otherwise"
    print(f"{line}; metrics may differ")


def _print_decomposers(report: DriftReport) -> None:
    """Per decomposer: answers split into the same sentences and claims, claim counts."""
    rows = [
        (
            d.decomposer,
            str(d.compared),
            f"{d.only_original}/{d.only_rerun}",
            _number(d.identical_sentences),
            _number(d.identical_claims),
            f"{d.claims_original}/{d.claims_rerun}",
            f"{d.claims_delta:+d}",
        )
        for d in report.decomposers
    ]
    headers = ["decomposer", "answers", "missing (orig/rerun)", "identical sentences"]
    print_table(
        [*headers, "identical claims", "claims (orig/rerun)", "claims diff"],
        rows,
        title="drift: decomposition, re-run vs original (share of answers)",
    )


def emit_drift(
    original: Path, rerun: Path, *, fmt: str, n_boot: int, seed: int, fail_on_drift: bool = False
) -> None:
    """Print the drift report; with `fail_on_drift`, exit DRIFT_EXIT when anything moved."""
    from assay.compare._drift import drift_report

    report = drift_report(original, rerun, n_boot=n_boot, seed=seed)
    if fmt == "json":
        data = report.model_dump(mode="json")
        data["drift_free"] = report.drift_free
        import json

        sys.stdout.write(scrub_text(json.dumps(data, indent=2)) + "\n")
    else:
        print_drift(report)
    if fail_on_drift and not report.drift_free:
        raise typer.Exit(DRIFT_EXIT)


def check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise AssayError(f"--format {fmt!r}: choose one of {', '.join(FORMATS)}")


def rerun_command(
    run_dir: Path,
    options: RerunOptions,
    *,
    dry_run: bool,
    fmt: str,
    n_boot: int,
    seed: int,
    fail_on_drift: bool = False,
) -> None:
    """`assay rerun RUN -o NEW`: exit 0 when the re-run completed (whatever its drift,
    unless `fail_on_drift`: then DRIFT_EXIT when it drifted), 1 when it did not; with
    --dry-run, the requests it would send."""
    from assay.cli._outcome import print_outcome
    from assay.runs.rerun import prepared_rerun
    from assay.runs.rerun._rerun import rerun_runner, run_options

    check_format(fmt)
    with prepared_rerun(run_dir, options) as (loaded, source):
        if dry_run:
            from assay.runs.preview._dryrun import plan_run
            from assay.runs.preview._output import print_plan

            print_plan(plan_run(loaded, run_options(options)), fmt)
            return
        outcome = rerun_runner(loaded, source, options).run()
    if fmt == "table":
        print_outcome(outcome)
    else:
        print(f"{outcome.status}: {outcome.run_dir}", file=sys.stderr)
    if outcome.status != "complete":
        raise typer.Exit(1)
    new = Path(outcome.run_dir)
    emit_drift(run_dir, new, fmt=fmt, n_boot=n_boot, seed=seed, fail_on_drift=fail_on_drift)


PathArg = Annotated[Path, typer.Argument(parser=cli_path, help="A run directory to re-run.")]
RerunDir = Annotated[
    Path | None, typer.Argument(parser=cli_path, help="With --drift-only: the re-run to compare.")
]
OutputDir = Annotated[
    Path | None,
    typer.Option("--output-dir", "-o", parser=cli_path, help="The new run directory."),
]
AllowDataChange = Annotated[
    bool,
    typer.Option(
        "--allow-data-change",
        help="Re-run on a dataset whose bytes changed (the new manifest says so).",
    ),
]
DriftOnly = Annotated[
    bool, typer.Option("--drift-only", help="Only report the drift of RERUN_DIR from RUN_DIR.")
]
DryRun = Annotated[
    bool, typer.Option("--dry-run", help="Show what would be sent and cost; send nothing.")
]
Format = Annotated[str, typer.Option("--format", "-f", help="table or json.")]
NBoot = Annotated[
    int, typer.Option(max=MAX_BOOTSTRAP, help="Paired bootstrap resamples of the deltas.")
]
Seed = Annotated[int, typer.Option(help="Seed of the resampling.")]
FailOnDrift = Annotated[
    bool,
    typer.Option(
        "--fail-on-drift",
        help=f"Exit {DRIFT_EXIT} when any drift is measured (a verdict, raw response or claim "
        "not identical, a metric delta not 0), for CI.",
    ),
]
Progress = Annotated[bool, typer.Option(help="Show a progress bar.")]


def rerun(
    run_dir: PathArg,
    rerun_dir: RerunDir = None,
    output_dir: OutputDir = None,
    cache_dir: CacheDir = None,
    allow_data_change: AllowDataChange = False,
    drift_only: DriftOnly = False,
    dry_run: DryRun = False,
    format: Format = "table",
    n_boot: NBoot = 1000,
    seed: Seed = 0,
    progress: Progress = True,
    fail_on_drift: FailOnDrift = False,
) -> None:
    """Re-run RUN_DIR from its directory alone (spec, snapshotted prompts, datasets by
    sha256) into a new run directory with a fresh cache, then report its drift: label
    agreement, kappa and identical raw responses per judge, metric deltas with paired CIs.
    `--drift-only RUN_DIR RERUN_DIR` reports the drift of an existing re-run.
    `--fail-on-drift` exits 3 when anything drifted."""
    check_format(format)
    if drift_only:
        if rerun_dir is None:
            raise AssayError("--drift-only needs two run directories: ORIGINAL RERUN")
        emit_drift(
            run_dir, rerun_dir, fmt=format, n_boot=n_boot, seed=seed, fail_on_drift=fail_on_drift
        )
        return
    if rerun_dir is not None:
        raise AssayError(f"{rerun_dir}: a second run directory is only read with --drift-only")
    if output_dir is None:
        raise AssayError("--output-dir is required: the new run directory to write")
    from assay.runs.rerun import RerunOptions

    options = RerunOptions(
        output_dir=str(output_dir),
        cache_dir=str(cache_dir) if cache_dir else None,
        allow_data_change=allow_data_change,
        progress=progress,
    )
    rerun_command(
        run_dir,
        options,
        dry_run=dry_run,
        fmt=format,
        n_boot=n_boot,
        seed=seed,
        fail_on_drift=fail_on_drift,
    )


__all__ = ["check_format", "emit_drift", "print_drift", "rerun", "rerun_command"]
