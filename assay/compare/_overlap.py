"""Whether the runs given to `assay compare` were judged on the same items at all.

Each kind of item (ForceBench pairs, items, pairwise items, factuality responses) is
compared on the keys the runs holding it share. A run sharing no item of any kind
with any other run would only be compared with itself, its rows shown beside unrelated
ones: that is refused, naming the run and what it holds. A kind only some runs hold is
compared within those runs, and a note says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from assay.compare._load import LoadedRun
from assay.errors import RunError

Keys = set[tuple[str, ...]]


def run_items(run: LoadedRun) -> dict[str, Keys]:
    """The run's items per kind, keyed as the comparisons key them (judged kinds only)."""
    kinds: dict[str, Keys] = {}
    if run.force is not None:
        pairs = run.force.pairs
        kinds["ForceBench pairs"] = set(zip(pairs["dataset"], pairs["pair_id"], strict=True))
    if run.items is not None:
        voted = {len(k) == 3 for votes in run.items.votes.values() for k in votes}
        for pairwise, kind in ((False, "items"), (True, "pairwise items")):
            if pairwise in voted:
                gold = run.items.gold.items()
                kinds[kind] = {k for k, g in gold if g.pairwise == pairwise}
    if run.facts is not None:
        kinds["factuality responses"] = set(run.facts.responses)
    return {kind: keys for kind, keys in kinds.items() if keys}


def _count(n: int, kind: str) -> str:
    return f"{n} {kind if n != 1 else kind.removesuffix('s')}"


def _holding(run: LoadedRun, kinds: dict[str, Keys]) -> str:
    held = ", ".join(_count(len(keys), kind) for kind, keys in kinds.items()) or "no item"
    return f"{run.name} ({held})"


def _shares(kinds: dict[str, Keys], others: Sequence[dict[str, Keys]]) -> bool:
    return any(keys & other.get(kind, set()) for kind, keys in kinds.items() for other in others)


def check_overlap(runs: Sequence[LoadedRun], notes: list[str]) -> None:
    """Refuse runs that share no item with any other run; note kinds only some hold."""
    if len(runs) < 2:
        return
    held = [run_items(run) for run in runs]
    alone = [i for i, kinds in enumerate(held) if not _shares(kinds, held[:i] + held[i + 1 :])]
    if alone:
        shown = ", ".join(_holding(runs[i], held[i]) for i in alone)
        if len(alone) == len(runs):
            what = f"runs {shown} have no item in common"
        else:
            rest = ", ".join(r.name for i, r in enumerate(runs) if i not in alone)
            verb = "has" if len(alone) == 1 else "have"
            what = f"run{'s' * (len(alone) > 1)} {shown} {verb} no item in common with {rest}"
        raise RunError(f"{what}; compare runs judged on the same items (same datasets and ids)")
    for kind in dict.fromkeys(k for kinds in held for k in kinds):
        holders = [run.name for run, kinds in zip(runs, held, strict=True) if kind in kinds]
        if len(holders) < len(runs):
            where = "that run" if len(holders) == 1 else "those runs"
            notes.append(
                f"{kind}: only in run{'s' * (len(holders) > 1)} {', '.join(holders)}; "
                f"compared within {where}, Holm-adjusted as their own family"
            )
