"""Which items several runs are compared on: the ones every run has.

Items are keyed within their kind (ForceBench pairs, items, pairwise items, factuality
responses, claims). Runs whose sets differ are compared on the intersection, with a note
giving the counts; `strict` refuses instead. Runs sharing no item at all are refused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from assay.compare._load import LoadedRun
from assay.errors import RunError

K = TypeVar("K", bound=tuple[str, ...])
V = TypeVar("V")

DisplayId = Callable[[LoadedRun, str], str]
"""(run, judge id in that run) -> the judge's id in the comparison."""


@dataclass(frozen=True)
class Common(Generic[K]):
    """The keys compared (sorted) and each key's position."""

    kind: str
    keys: list[K]
    index: dict[K, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", {k: i for i, k in enumerate(self.keys)})

    def __len__(self) -> int:
        return len(self.keys)


def _names(runs: Iterable[LoadedRun]) -> str:
    return ", ".join(r.name for r in runs)


def common_keys(
    kind: str, per_run: Sequence[tuple[LoadedRun, set[K]]], *, strict: bool, notes: list[str]
) -> Common[K]:
    """The keys of `kind` that every run in `per_run` has (a note or an error when the
    runs differ: see the module docstring)."""
    sets = [keys for _, keys in per_run]
    shared = set.intersection(*sets) if sets else set()
    runs = [run for run, _ in per_run]
    if len(per_run) > 1 and any(len(s) != len(shared) for s in sets):
        counts = ", ".join(f"{run.name} {len(keys)}" for run, keys in per_run)
        if not shared:
            raise RunError(f"runs {_names(runs)} have no {kind} in common ({counts})")
        if strict:
            raise RunError(
                f"--strict: runs {_names(runs)} differ in their {kind} ({counts}; "
                f"{len(shared)} in common); leave out --strict to compare on those"
            )
        notes.append(f"{kind}: compared on the {len(shared)} every run has ({counts})")
    return Common(kind, sorted(shared))  # keys are tuples of strings


def merge_gold(kind: str, per_run: Sequence[tuple[LoadedRun, dict[K, V]]]) -> dict[K, V]:
    """One gold value per key; runs that disagree on a key's gold are refused."""
    if len(per_run) == 1:
        return dict(per_run[0][1])
    merged: dict[K, V] = {}
    source: dict[K, LoadedRun] = {}
    for run, gold in per_run:
        for key, value in gold.items():
            old = merged.setdefault(key, value)
            source.setdefault(key, run)
            if old != value:
                raise RunError(
                    f"{kind} {key} has gold {old!r} in run {source[key].name} and {value!r} "
                    f"in run {run.name}; compare runs of the same dataset version"
                )
    return merged
