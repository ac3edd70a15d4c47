"""The `assay` command line. Heavy modules are imported inside commands, not here."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from assay._limits import MAX_BOOTSTRAP
from assay.cli._docs import link_docs
from assay.cli._labels import labels_app
from assay.cli._pack import pack, unpack
from assay.cli._paths import CacheDir, PromptDirs, RunDirArg, cli_path, cli_path_text
from assay.cli._policies import policies_app
from assay.cli._rerun import rerun
from assay.errors import AssayError
from assay.redaction import redact, scrub_text

app = typer.Typer(
    name="assay",
    help="Reproducible LLM judges and claim-level verification.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
prompts_app = typer.Typer(help="List, show and render versioned prompts.", no_args_is_help=True)
cache_app = typer.Typer(help="Inspect or clear the response cache.", no_args_is_help=True)
app.add_typer(prompts_app, name="prompts")
app.add_typer(cache_app, name="cache")
app.add_typer(policies_app, name="policies")
app.add_typer(labels_app, name="labels")
GOLD_HELP = (
    "Items' gold: dataset, adjudicated (a person's labels from RUN_DIR/labels.jsonl "
    "over the dataset's) or adjudicated-only."
)


def _console(stderr: bool = False) -> Any:
    from assay.cli._run import console

    return console(stderr)


@app.command()
def run(
    spec: Annotated[Path, typer.Argument(parser=cli_path, help="Run spec (TOML).")],
    output_dir: Annotated[
        Path | None, typer.Option(parser=cli_path, help="Override the spec's output_dir.")
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Neither read nor write the cache.")
    ] = False,
    refresh_cache: Annotated[
        bool, typer.Option(help="Call models again and overwrite cache entries.")
    ] = False,
    cache_dir: CacheDir = None,
    retry_errors: Annotated[
        bool, typer.Option(help="On resume, redo judgments that ended in api_error.")
    ] = False,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would be sent and cost; send nothing.")
    ] = False,
    format: Annotated[
        str, typer.Option("--format", "-f", help="--dry-run output: table or json.")
    ] = "table",
    max_cost_usd: Annotated[
        float | None,
        typer.Option(min=0.0, help="Spending cap in USD, all sessions counted (over the spec's)."),
    ] = None,
    max_requests: Annotated[
        int | None,
        typer.Option(min=1, help="Cap on requests sent, every session counted (over the spec's)."),
    ] = None,
) -> None:
    """Execute SPEC into its run directory; re-running resumes where it stopped."""
    from assay.cli._run import run_command
    from assay.runs import RunOptions

    options = RunOptions(
        output_dir=str(output_dir) if output_dir else None,
        use_cache=not no_cache,
        refresh_cache=refresh_cache,
        cache_dir=str(cache_dir) if cache_dir else None,
        retry_errors=retry_errors,
        progress=progress,
        max_cost_usd=max_cost_usd,
        max_requests=max_requests,
    )
    run_command(spec, options, dry_run=dry_run, fmt=format)


def _print_run_table(run_dir: Path, *, detail: bool = False) -> None:
    from assay.cli._run import print_run_table

    print_run_table(run_dir, detail=detail)


@app.command()
def report(
    run_dir: RunDirArg,
    format: Annotated[
        str, typer.Option("--format", "-f", help="table, json, csv, markdown, html or a plugin's.")
    ] = "table",
    detail: Annotated[
        bool, typer.Option(help="Table: also show per-axis and per-severity rows.")
    ] = False,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            parser=cli_path,
            help="File to write instead of stdout (html: RUN_DIR/report.html).",
        ),
    ] = None,
    gold: Annotated[str, typer.Option(help=GOLD_HELP)] = "dataset",
    verify: Annotated[
        bool,
        typer.Option(
            "--verify",
            help="Audit the run first (assay verify): a verification section (html, json).",
        ),
    ] = False,
) -> None:
    """Print a run's metrics (table, json, csv, markdown), or write them to -o FILE; html
    always goes to a file (default RUN_DIR/report.html). Formats come from the registry
    (`assay list`), so a plugin's format works here too."""
    from assay.adjudication import check_gold_source
    from assay.report import RunReport, emit_report, resolve_format
    from assay.report._gold import with_gold
    from assay.runs.store._rundir import read_run_manifest, read_run_metrics

    fmt = resolve_format(format)  # a typo is reported before the run directory is read
    check_gold_source(gold)
    manifest = redact(read_run_manifest(run_dir))  # a manifest written before redaction
    audit = None
    if verify:
        from assay.audit import verify_run

        audit = verify_run(run_dir).model_dump(mode="json")
    run = RunReport(run_dir, manifest, read_run_metrics(run_dir), detail=detail, verification=audit)
    emit_report(fmt, with_gold(run, gold), output, _console())


@app.command()
def compare(
    run_dirs: Annotated[
        list[Path], typer.Argument(parser=cli_path, help="One or more run directories.")
    ],
    reference: Annotated[
        str | None, typer.Option(help="Judge id every other judge is compared against.")
    ] = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Refuse runs whose items differ.")
    ] = False,
    format: Annotated[
        str, typer.Option("--format", "-f", help="table, json, csv, markdown or html.")
    ] = "table",
    metric: Annotated[
        list[str] | None, typer.Option("--metric", help="Only this metric (repeatable).")
    ] = None,
    n_boot: Annotated[
        int, typer.Option(max=MAX_BOOTSTRAP, help="Paired bootstrap resamples.")
    ] = 1000,
    seed: Annotated[int, typer.Option(help="Seed of the resampling.")] = 0,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", parser=cli_path, help="File to write instead of stdout."),
    ] = None,
    gold: Annotated[str, typer.Option(help=GOLD_HELP)] = "dataset",
) -> None:
    """Compare judges on the same items, within one run or across runs: paired
    differences with bootstrap CIs, McNemar tests, Holm correction, an ablation table."""
    from assay.cli._compare import compare_command

    compare_command(
        run_dirs,
        reference=reference,
        strict=strict,
        fmt=format,
        metrics=metric,
        n_boot=n_boot,
        seed=seed,
        output=output,
        gold=gold,
    )


@app.command()
def recompute(
    run_dir: RunDirArg,
) -> None:
    """Rebuild every metric from the run's record files, without calling any model."""
    from assay.runs import METRICS_FILE
    from assay.runs.rebuild import recompute_run

    problems = recompute_run(run_dir)
    _console().print(f"recomputed {run_dir / METRICS_FILE}", soft_wrap=True)
    _print_run_table(run_dir)
    _exit_if_incomplete(problems, run_dir)


@app.command()
def verify(
    run_dir: RunDirArg,
    format: Annotated[str, typer.Option("--format", "-f", help="table or json.")] = "table",
    allow_skips: Annotated[
        bool,
        typer.Option(help="Exit 0 when no check failed, even if some could not be verified."),
    ] = False,
) -> None:
    """Audit a run directory at zero API cost: records, metrics, prompts, datasets,
    requests, environment. Exit 0 only when every check passes."""
    from assay.cli._verify import verify_command

    code = verify_command(run_dir, fmt=format, allow_skips=allow_skips)
    if code:
        raise typer.Exit(code)


def _exit_if_incomplete(problems: list[str], run_dir: Path) -> None:
    """Metrics over fewer records than planned are labelled so, and the command fails."""
    from assay.core.rundir import METRICS_FILE
    from assay.runs.store._audit import resume_hint
    from assay.runs.store._rundir import read_run_manifest

    if not problems:
        return
    for problem in problems:
        print(f"incomplete: {scrub_text(problem)}", file=sys.stderr)
    hint = resume_hint(read_run_manifest(run_dir), run_dir)
    print(f"{METRICS_FILE} says complete: false; {scrub_text(hint)}", file=sys.stderr)
    raise typer.Exit(1)


@app.command("import-medscore")
def import_medscore(
    source: Annotated[
        Path, typer.Argument(parser=cli_path, help="MedScore output dir or one of its files.")
    ],
    output_dir: Annotated[Path, typer.Option(parser=cli_path, help="Run directory to create.")],
    dataset: Annotated[str, typer.Option(help="Dataset name in the records.")] = "medscore",
) -> None:
    """Import MedScore's released per-claim files as a run and score them under assay's
    rules (unparsable verdicts unscored, not supported) — no model is called."""
    from assay.runs.rebuild._imported import import_medscore_run

    import_medscore_run(source, output_dir, dataset=dataset)
    _console().print(f"imported {source} → {output_dir}", soft_wrap=True)
    _print_run_table(output_dir)


@app.command()
def reparse(
    run_dir: Annotated[Path, typer.Argument(parser=cli_path, help="A finished run directory.")],
) -> None:
    """Re-parse raw outputs with the current parser and recompute metrics (no API calls)."""
    from assay.runs.rebuild import reparse_run_checked

    changes, problems = reparse_run_checked(run_dir)
    summary = ", ".join(f"{k}: {v}" for k, v in changes.items()) or "no status changed"
    _console().print(f"re-parsed {run_dir}: {summary}", soft_wrap=True)
    _print_run_table(run_dir)
    _exit_if_incomplete(problems, run_dir)


@prompts_app.command("list")
def prompts_list(
    prompt_dir: PromptDirs = None,
) -> None:
    """List prompts with version, task and content hash."""
    from assay.prompts import PromptRegistry
    from assay.report import Grid, print_grid

    rows = [
        (p.ref, p.meta.task, ", ".join(p.meta.labels), p.sha256[:12], _source(p))
        for p in PromptRegistry(prompt_dir or [])
    ]
    headers = ("prompt", "task", "labels", "sha256", "source")
    numeric = (False, False, False, True, False)  # hashes are never cut
    print_grid(_console(), Grid("", headers, numeric, rows))


def _source(prompt: Any) -> str:
    return "built-in" if prompt.builtin else str(prompt.path)


@prompts_app.command("show")
def prompts_show(
    ref: Annotated[str, typer.Argument(help="ID or ID@VERSION.")],
    prompt_dir: PromptDirs = None,
) -> None:
    """Show a prompt's metadata and template source."""
    from assay.prompts import PromptRegistry

    p = PromptRegistry(prompt_dir or []).get(ref)
    with open(p.path, encoding="utf-8", newline="") as fh:  # exactly as stored
        source = fh.read()
    meta = json.dumps(p.meta.model_dump(), indent=2, ensure_ascii=False)
    # Plain writes: no console-width wrapping, no markup, no highlighting of the template.
    sys.stdout.write(f"{p.ref}  sha256 {p.sha256}\nfile {p.path}\n{meta}\n{source}")
    if not source.endswith("\n"):
        sys.stdout.write("\n")


@prompts_app.command("render")
def prompts_render(
    ref: Annotated[str, typer.Argument(help="ID or ID@VERSION.")],
    data: Annotated[
        Path, typer.Option(parser=cli_path, help="JSON file with the template variables.")
    ],
    prompt_dir: PromptDirs = None,
) -> None:
    """Render a prompt with variables from a JSON file, as the model would see it."""
    from assay.prompts import PromptRegistry

    variables = _template_variables(data)
    messages = PromptRegistry(prompt_dir or []).get(ref).render(variables, where=str(data))
    for m in messages:  # plain writes: the text exactly as the model receives it
        sys.stdout.write(f"----- {m.role} -----\n{m.content}")
        if not m.content.endswith("\n"):
            sys.stdout.write("\n")


_DATA_FILE_ERRORS = {
    FileNotFoundError: "data file not found",
    IsADirectoryError: "expected a JSON file, got a directory",
    UnicodeDecodeError: "data file is not valid UTF-8",
}


def _template_variables(data: Path) -> dict[str, Any]:
    """The JSON object of template variables in `data`, or one error naming the file."""
    try:
        variables = json.loads(data.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise AssayError(f"not valid JSON: {exc.msg}", file=data, line=exc.lineno) from None
    except (FileNotFoundError, IsADirectoryError, UnicodeDecodeError) as exc:
        raise AssayError(_DATA_FILE_ERRORS[type(exc)], file=data) from None
    if not isinstance(variables, dict):
        raise AssayError("data must be a JSON object of variables", file=data)
    return variables


@app.command()
def validate(
    dataset: Annotated[
        str,
        typer.Argument(
            parser=cli_path_text,
            help="A run spec (.toml), or a ForceBench .jsonl/.csv file or builtin:NAME.",
        ),
    ],
    ping: Annotated[
        bool, typer.Option("--ping", help="Spec: send one request to every model endpoint.")
    ] = False,
) -> None:
    """Check a run spec (datasets, prompts, models) or a ForceBench dataset file; errors
    name file, line and field. With --ping, one request per endpoint says what works."""
    from collections import Counter

    from assay.datasets import load_pairs

    if dataset.endswith(".toml"):
        _validate_spec(dataset, ping)
        return
    if ping:
        raise AssayError("--ping needs a run spec (.toml), not a dataset file")
    ds = load_pairs(dataset)
    axes = Counter(p.axis.value for p in ds.pairs)
    _console().print(
        f"{ds.path}: {ds.rows} pairs ok · "
        + ", ".join(f"{k} {v}" for k, v in sorted(axes.items())),
        soft_wrap=True,
    )


def _validate_spec(spec: str, ping: bool) -> None:
    from assay.runs.preview._ping import check_spec, ping_targets

    runner, lines = check_spec(spec)
    for line in [*lines, f"{spec}: spec ok"]:
        sys.stdout.write(f"{line}\n")
    if not ping:
        return
    results = ping_targets(runner)
    for result in results:
        sys.stdout.write(f"{result.line()}\n")
    if not results:
        sys.stdout.write("no hosted model endpoint to ping\n")
    if not all(r.ok for r in results):
        raise typer.Exit(1)


@cache_app.command("info")
def cache_info(cache_dir: CacheDir = None) -> None:
    """Show where the cache is, how many entries it holds and its size."""
    from assay.models import ResponseCache

    cache = ResponseCache(cache_dir)
    _console().print(
        f"{cache.directory}: {len(cache)} entries, {cache.volume() / 1e6:.1f} MB", soft_wrap=True
    )


@cache_app.command("clear")
def cache_clear(
    cache_dir: CacheDir = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False,
) -> None:
    """Delete every cached response."""
    from assay.models import ResponseCache

    cache = ResponseCache(cache_dir)
    if not yes and not typer.confirm(f"delete {len(cache)} entries in {cache.directory}?"):
        raise typer.Exit(1)
    _console().print(f"removed {cache.clear()} entries from {cache.directory}", soft_wrap=True)


@app.command()
def version() -> None:
    """Print the assay version."""
    from assay import __version__

    print(__version__)


def _print_version(value: bool) -> None:
    if value:
        from assay import __version__

        print(f"assay {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    show_version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version."
        ),
    ] = False,
) -> None:
    """Reproducible LLM judges and claim-level verification."""


@app.command()
def view(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(parser=cli_path, help="Run directories or folders of them (default runs/)."),
    ] = None,
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (default 0: a free one).")] = 0,
    host: Annotated[
        str, typer.Option(help="Address to bind; anything but 127.0.0.1 warns.")
    ] = "127.0.0.1",
    open_browser: Annotated[bool, typer.Option("--open", help="Open it in a browser.")] = False,
    read_only: Annotated[
        bool, typer.Option("--read-only", help="Refuse every write (no labels).")
    ] = False,
    annotator: Annotated[
        str | None, typer.Option(help="Name written with labels (default $USER or anonymous).")
    ] = None,
) -> None:
    """Browse runs in a local web viewer (127.0.0.1): reports, a judgments table with
    filters, each item's exact messages, human labels. Every page needs the session
    token of the printed URL (it then sets a cookie). Needs the view extra."""
    from assay.cli._view import view_command

    view_command(
        paths or [Path("runs")],
        host=host,
        port=port,
        open_browser=open_browser,
        read_only=read_only,
        annotator=annotator,
    )


LIST_SECTIONS = (  # assay.catalog.SECTIONS, spelled out so --help imports no registry
    "judges, baselines, decomposers, verifiers, schemas, importers, transports, "
    "report-formats, policies, prompts, datasets"
)


@app.command("list")
def list_(
    section: Annotated[
        str | None,
        typer.Argument(help=f"One of: {LIST_SECTIONS} (default all)."),
    ] = None,
) -> None:
    """List every registered judge, verifier, decomposer, schema, importer, transport and
    report format (with the package it came from), the baselines, prompts and datasets."""
    from assay.catalog import print_catalog

    print_catalog(section)


app.command()(pack)
app.command()(unpack)
app.command()(rerun)

link_docs(app)  # after every command is registered: each help ends with its docs page


def main() -> None:
    """Entry point: any failure becomes one `error:` line on stderr and a non-zero exit."""
    from assay.cli._errors import run_guarded

    sys.exit(run_guarded(app))


if __name__ == "__main__":
    main()
