"""`assay pack` and `assay unpack`: a run directory as one portable archive, and back.

Kept out of `cli/__init__.py`, which only registers them; `assay.archive` is imported
inside the commands, as the rest of the CLI does. A refused pack or unsafe archive is
bad input (exit 2); an archive whose files do not match its SHA256SUMS exits 1, like a
failed check.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from assay.cli._paths import RunDirArg, cli_path
from assay.redaction import scrub_text

__all__ = ["pack", "unpack"]


def pack(
    run_dir: RunDirArg,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", parser=cli_path, help="Archive to write (default RUN_NAME.tar.gz)."
        ),
    ] = None,
    with_data: Annotated[
        bool,
        typer.Option(
            "--with-data",
            help="Also pack the dataset and input files the manifest names (sha256 checked).",
        ),
    ] = False,
    allow_incomplete: Annotated[
        bool, typer.Option("--allow-incomplete", help="Pack a run whose status is not complete.")
    ] = False,
) -> None:
    """Pack a finished run directory into a deterministic .tar.gz with a SHA256SUMS list,
    after a secrets scan of every file (anything credential-like refuses the pack)."""
    from assay.archive import pack_run

    target = output if output is not None else Path(f"{run_dir.resolve().name}.tar.gz")
    result = pack_run(run_dir, target, with_data=with_data, allow_incomplete=allow_incomplete)
    for copy in result.data:
        what = copy.dataset if copy.section == "inputs" else f"dataset {copy.dataset!r}"
        if copy.reason:
            print(f"warning: {what} not packed: {copy.reason}", file=sys.stderr)
    packed = sum(1 for copy in result.data if copy.snapshot and copy.section != "inputs")
    inputs = sum(1 for copy in result.data if copy.snapshot and copy.section == "inputs")
    data = f", {packed} dataset file(s)" if with_data else ""
    data += f", {inputs} other input file(s)" if inputs else ""
    print(f"packed {run_dir} -> {result.archive} ({result.files} files{data})")


def unpack(
    archive: Annotated[
        Path, typer.Argument(parser=cli_path, help="An archive made by `assay pack`.")
    ],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            parser=cli_path,
            help="Run directory to create (default: the archive's folder name, here).",
        ),
    ] = None,
) -> None:
    """Check an archive (safe member paths, every file against its SHA256SUMS), then
    extract it and print the run directory; an existing directory is never overwritten."""
    from assay.archive import ChecksumMismatch, unpack_archive

    try:
        run_dir = unpack_archive(archive, output)
    except ChecksumMismatch as exc:
        print(f"error: {scrub_text(exc.render())}", file=sys.stderr)
        raise typer.Exit(1) from None
    print(run_dir)
