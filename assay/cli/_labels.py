"""`assay labels export`: a run's adjudicated gold (labels.jsonl) as an items-dataset CSV.

Kept out of `cli/__init__.py` so that file only registers the sub-command group; the
adjudication modules are imported inside the command, as in the rest of the CLI.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from assay.cli._paths import RunDirArg, cli_path

labels_app = typer.Typer(
    help="A person's gold labels of a run (labels.jsonl, set in `assay view`).",
    no_args_is_help=True,
)


@labels_app.command("export")
def export(
    run_dir: RunDirArg,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", parser=cli_path, help="CSV file to write (default stdout)."),
    ] = None,
    dataset: Annotated[
        str | None, typer.Option(help="Only this dataset's items (ids must be unique).")
    ] = None,
    adjudicated_only: Annotated[
        bool, typer.Option("--adjudicated-only", help="Only the items a person labelled.")
    ] = False,
) -> None:
    """Write the run's gold after adjudication as CSV (id, dataset, gold_label, gold_score,
    gold_preference, gold_source, annotator, at, note, previous): an items dataset
    (`[[datasets]] kind = "items"`) reads it with its default columns."""
    from assay.adjudication._export import export_rows, write_labels_csv
    from assay.core.atomic import atomic_writer
    from assay.runs.store._rundir import read_run_manifest

    read_run_manifest(run_dir)  # a missing or non-run directory is named as such
    rows = export_rows(run_dir, dataset=dataset, adjudicated_only=adjudicated_only)
    if output is None:
        write_labels_csv(rows, sys.stdout)
        return
    with atomic_writer(output) as fh:
        n = write_labels_csv(rows, fh)
    print(f"wrote {n} items to {output}", file=sys.stderr)


__all__ = ["labels_app"]
