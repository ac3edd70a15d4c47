"""What the `assay policies` commands share: option types, number formatting, and the one
sequence every command over a policy file runs (load the file, pick the policies, check
their gates, read the run, build each chain)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple

import typer

from assay.errors import RunError, SpecError

if TYPE_CHECKING:
    from assay.policies._apply import Chain
    from assay.policies._load_run import RunInputs
    from assay.policies._spec import PolicySpec

RunDir = Annotated[Path, typer.Argument(help="A finished run directory.")]
AppliedRunDir = Annotated[Path, typer.Argument(help="A run directory with applied policies.")]
PolicyFile = Annotated[
    Path, typer.Option("--policy", help="A policy file or run spec (TOML) with policies blocks.")
]
OnlyName = Annotated[str | None, typer.Option(help="Only the policy with this name.")]
Name = Annotated[str, typer.Option(help="The policy's name in the file.")]
Split = Annotated[str | None, typer.Option(help="Only answers of this split (train, dev or test).")]
Resamples = Annotated[int, typer.Option(help="Bootstrap resamples.")]
RandomState = Annotated[int, typer.Option(help="Seed of the bootstrap (PCG64).")]


def fmt(value: Any) -> str:
    return "null" if value is None else f"{value:.4f}"


def interval(ci: Any) -> str:
    return f"{fmt(ci[0])}–{fmt(ci[1])}" if ci else ""


def check_run_dir(run_dir: Path) -> None:
    if not (run_dir / "manifest.json").is_file():
        raise RunError("not a run directory (no manifest.json)", file=run_dir)


def gates_for(specs: list[PolicySpec], chosen: list[PolicySpec]) -> dict[str, PolicySpec]:
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


class Loaded(NamedTuple):
    """The run's records (restricted to the split) and each chosen policy with its chain."""

    run: RunInputs
    picks: list[tuple[PolicySpec, Chain | None]]


def load_policies(run_dir: Path, policy: Path, name: str | None, split: str | None) -> Loaded:
    """Load the policy file, pick `name` (or every policy), check `after` names a gate
    and `--split` a split, read the run; nothing is written, so a bad input leaves the
    run untouched."""
    from assay.policies._apply import chain_of
    from assay.policies._load_run import SPLITS, read_run, restrict_to_split
    from assay.policies._spec import load_policy_file, select

    specs = load_policy_file(policy)
    chosen = select(specs, name)
    if split is not None and split not in SPLITS:
        raise SpecError(f"use one of {', '.join(SPLITS)}; got {split!r}", field="--split")
    gates = gates_for(specs, chosen)
    check_run_dir(run_dir)
    run = restrict_to_split(read_run(run_dir), split)
    picks = []
    for spec in chosen:
        after = spec.block.get("after")
        picks.append((spec, chain_of(gates[after], run) if after is not None else None))
    return Loaded(run=run, picks=picks)


__all__ = [
    "AppliedRunDir",
    "Loaded",
    "Name",
    "OnlyName",
    "PolicyFile",
    "RandomState",
    "Resamples",
    "RunDir",
    "Split",
    "check_run_dir",
    "fmt",
    "gates_for",
    "interval",
    "load_policies",
]
