"""What `assay run` does between parsing its flags and exiting: dry run, warnings, the
run itself, Ctrl-C with the resume command, and the closing status line.

Kept out of `cli.py` so the command there is only its flags; heavy modules are imported
inside functions, as in the CLI.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from assay._collector import paused
from assay._interrupts import mark_reported
from assay.cli._outcome import console, print_outcome
from assay.errors import AssayError
from assay.redaction import scrub_text

if TYPE_CHECKING:
    from assay.runs import RunOptions, RunOutcome


def print_run_table(run_dir: Path, *, detail: bool = False) -> None:
    """The metrics table of a run directory, if it has metrics yet."""
    from assay.report._output import print_tables  # not the formats: see emit_report
    from assay.runs import METRICS_FILE, read_json

    if not (run_dir / METRICS_FILE).exists():
        return
    print_tables(console(), read_json(run_dir / METRICS_FILE), str(run_dir), detail=detail)


def run_command(spec: Path, options: RunOptions, *, dry_run: bool, fmt: str) -> None:
    """`assay run SPEC`: exit 0 when complete, 1 when not, 130 when interrupted."""
    if fmt not in ("table", "json") or (fmt != "table" and not dry_run):
        raise AssayError(f"--format {fmt!r}: use table or json, with --dry-run")
    from assay.runs import load_spec

    if dry_run:
        from assay.runs.preview._dryrun import plan_run
        from assay.runs.preview._output import print_plan

        print_plan(plan_run(load_spec(spec), options), fmt)
        return
    outcome = _execute(spec, options)
    print_run_table(Path(outcome.run_dir))
    print_outcome(outcome)
    if outcome.status == "budget_exhausted":
        _print_resume_with_more(spec, options, Path(outcome.run_dir))
    if outcome.status != "complete":
        raise typer.Exit(1)


def _print_resume_with_more(spec: Path, options: RunOptions, run_dir: Path) -> None:
    """How much was spent and the command that resumes with a higher cap (double the
    one that stopped the run; a judge's own cap is raised in the spec)."""
    from assay.runs.execute._spending import raised_caps
    from assay.runs.store._resume import resume_command
    from assay.runs.store._rundir import read_run_manifest

    budget = read_run_manifest(run_dir).get("budget") or {}
    cost, requests, note = raised_caps(budget)
    resume = resume_command(
        str(spec),
        str(run_dir),
        cache_dir=options.cache_dir,
        no_cache=not options.use_cache,
        retry_errors=options.retry_errors,
        max_cost_usd=cost,
        max_requests=requests,
    )
    spent = f"${float(budget.get('spent_usd') or 0):.4f} in {budget.get('requests', 0)} requests"
    text = f"spent {spent}, every session counted; to go on with a higher cap: {resume}{note}"
    console(stderr=True).print(escape(text), soft_wrap=True)


def _execute(spec: Path, options: RunOptions) -> RunOutcome:
    """Run the spec; Ctrl-C or SIGTERM prints what was saved and how to resume."""
    from assay.runs import load_spec
    from assay.runs.spec._targets import check_targets
    from assay.runs.store._resume import RunInterrupted, resume_command
    from assay.runs.store._rundir import refuse_if_written

    with paused(freeze=True):  # the spec, the runner modules, datasets, clients: no garbage
        loaded = load_spec(spec)
        check_targets(loaded)  # an endpoint that can never work: refused before the runner
        refuse_if_written(loaded, options)  # before datasets and models are loaded
        from assay.runs import Runner  # the runner, its stages and model clients: ~0.3 s

        runner = Runner(loaded, options)
    err = console(stderr=True)
    for warning in runner.warnings:
        err.print(f"[yellow]warning:[/] {escape(scrub_text(warning))}", soft_wrap=True)
    try:
        return runner.run()
    except RunInterrupted as stop:
        resume = resume_command(
            str(spec),
            stop.run_dir,
            cache_dir=options.cache_dir,
            no_cache=not options.use_cache,
            retry_errors=options.retry_errors,
            max_cost_usd=options.max_cost_usd,
            max_requests=options.max_requests,
        )
        err.print(stop.summary(resume), markup=False, soft_wrap=True)
        mark_reported()
        raise typer.Exit(130) from None


__all__ = ["console", "print_run_table", "run_command"]
