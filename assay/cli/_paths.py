"""Path options and arguments of the CLI: an empty or blank value is a usage error.

Typer turns `--output-dir ''` into `Path('')`, which is the current directory; every
path-valued parameter takes `parser=cli_path` instead, so the value is checked as typed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from assay.inputs import nonblank_path


def cli_path(value: str | Path) -> Path:
    """A path parameter's value; '' or '  ' is refused naming the option (exit 2)."""
    if isinstance(value, Path):  # a default, or a value typer has converted already
        return value
    try:
        return Path(nonblank_path(value))
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def cli_path_text(value: str) -> str:
    """`cli_path` for an argument kept as text (a file or `builtin:NAME`)."""
    return str(cli_path(value))


RunDirArg = Annotated[Path, typer.Argument(parser=cli_path, help="A run directory.")]
PromptDirs = Annotated[
    list[Path] | None, typer.Option(parser=cli_path, help="Extra prompt directory.")
]
CacheDir = Annotated[
    Path | None,
    typer.Option(
        parser=cli_path, help="Cache directory (default $ASSAY_CACHE_DIR or ~/.cache/assay)."
    ),
]

__all__ = ["CacheDir", "PromptDirs", "RunDirArg", "cli_path", "cli_path_text"]
