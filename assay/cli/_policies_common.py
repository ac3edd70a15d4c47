"""What the `assay policies` commands share: option types, number formatting, and the one
sequence every command over a policy file runs (load the file, pick the policies, check
their gates, read the run, build each chain)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, cast

import typer

from assay._limits import MAX_BOOTSTRAP
from assay.cli._paths import cli_path
from assay.core.rundir import MANIFEST_FILE

if TYPE_CHECKING:
    from assay.policies.jobs._session import Loaded

RunDir = Annotated[Path, typer.Argument(parser=cli_path, help="A finished run directory.")]
AppliedRunDir = Annotated[
    Path, typer.Argument(parser=cli_path, help="A run directory with applied policies.")
]
PolicyFile = Annotated[
    Path,
    typer.Option(
        "--policy", parser=cli_path, help="A policy file or run spec (TOML) with policies blocks."
    ),
]
OnlyName = Annotated[str | None, typer.Option(help="Only the policy with this name.")]
Name = Annotated[str, typer.Option(help="The policy's name in the file.")]
Split = Annotated[str | None, typer.Option(help="Only answers of this split (train, dev or test).")]
Resamples = Annotated[
    int, typer.Option(min=0, max=MAX_BOOTSTRAP, help="Bootstrap resamples (0: no intervals).")
]
RandomState = Annotated[int, typer.Option(min=0, help="Seed of the bootstrap (PCG64, >= 0).")]
F = TypeVar("F", bound=Callable[..., Any])


def fmt(value: Any) -> str:
    return "null" if value is None else f"{value:.4f}"


def interval(ci: Any) -> str:
    return f"{fmt(ci[0])}–{fmt(ci[1])}" if ci else ""


def check_run_dir(run_dir: Path) -> None:
    from assay.policies.jobs._session import check_run_dir as check

    check(run_dir)


def writes_run_dir(command: str) -> Callable[[F], F]:
    """For a command that writes into its RUN_DIR (`tune`, `sweep`, `compare`): hold the
    run directory's writer lock while it works, as `apply` and `assay run` do, so a
    writer already there refuses it in one line (a directory that is not a run is left
    to the command, which says so)."""

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def locked(**kwargs: Any) -> Any:
            from assay.core.rundir_lock import AGAIN, WriterLock

            run_dir = Path(kwargs["run_dir"])
            if not (run_dir / MANIFEST_FILE).is_file():
                return fn(**kwargs)
            with WriterLock(run_dir, command=command, fix=AGAIN):
                return fn(**kwargs)

        return cast(F, locked)

    return wrap


def load_policies(run_dir: Path, policy: Path, name: str | None, split: str | None) -> Loaded:
    """Load the policy file, pick the policies, read the run (`policies/jobs/_session`;
    imported here on first use so the CLI starts without the policies layer)."""
    from assay.policies.jobs._session import load_policies as load

    return load(run_dir, policy, name, split)


__all__ = [
    "AppliedRunDir",
    "Name",
    "OnlyName",
    "PolicyFile",
    "RandomState",
    "Resamples",
    "RunDir",
    "Split",
    "check_run_dir",
    "fmt",
    "interval",
    "load_policies",
    "writes_run_dir",
]
