"""A run directory's jury judgments kept in step with its members' records, and the
checks of `[[juries]]` against the run's judges and items (at assembly, before any
request).

Jury records live in `item_judgments.jsonl` beside the judges' (their `jury` field says
how they were computed), so every table, comparison and the viewer reads a jury as a
judge. They are rebuilt at the end of the items stage, and by `assay recompute` and
`assay reparse`; the file is rewritten only when a jury's judgments changed, so doing it
again changes nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import RootModel, ValidationError

from assay.core.atomic import atomic_writer
from assay.core.records import ItemJudgmentRecord, ItemRecord
from assay.core.rundir import ITEM_JUDGMENTS_FILE, ITEMS_FILE, iter_rows, latest
from assay.errors import SpecError, first_problem
from assay.juries._records import jury_records
from assay.juries._spec import JurySpec


class _Line(RootModel[dict[str, Any]]):
    """A kept record line, written back as it was read."""


def _comparable(records: Sequence[ItemJudgmentRecord]) -> dict[Any, dict[str, Any]]:
    return {r.key: r.model_dump(mode="json", exclude={"recorded_at"}) for r in records}


def refresh_jury_records(run_dir: Path, juries: Sequence[JurySpec]) -> int:
    """Recompute every jury's judgments from the members' latest records; rewrite
    `item_judgments.jsonl` (members' lines kept as they are) only if they changed.
    Returns the jury records written (0: nothing changed)."""
    path = run_dir / ITEM_JUDGMENTS_FILE
    if not juries or not path.is_file() or not (run_dir / ITEMS_FILE).is_file():
        return 0
    names = {j.name for j in juries}
    items = list(latest(run_dir / ITEMS_FILE, ItemRecord).values())
    records = list(latest(path, ItemJudgmentRecord).values())
    members = [r for r in records if r.jury is None and r.judge_id not in names]
    fresh = jury_records(items, members, juries)
    old = [r for r in records if r.jury is not None or r.judge_id in names]
    if _comparable(old) == _comparable(fresh):
        return 0
    kept = [
        row
        for row in iter_rows(path)
        if row.get("jury") is None and row.get("judge_id") not in names
    ]
    now = datetime.now(UTC)
    with atomic_writer(path) as fh:
        for row in kept:
            fh.write(_Line(row).model_dump_json() + "\n")
        for record in fresh:
            fh.write(record.model_copy(update={"recorded_at": now}).model_dump_json() + "\n")
    return len(fresh)


def juries_of(spec: Mapping[str, Any], where: str) -> list[JurySpec]:
    """The `[[juries]]` of a spec as recorded in a manifest (`assay recompute`)."""
    out = []
    for i, block in enumerate(spec.get("juries") or []):
        try:
            out.append(JurySpec.model_validate(block))
        except ValidationError as exc:
            raise SpecError(first_problem(exc).message, file=where, field=f"juries[{i}]") from None
    return out


def check_juries(
    juries: Sequence[JurySpec],
    items: Sequence[ItemRecord],
    judges_of: Mapping[str, Collection[str]],
    spec_path: str,
) -> None:
    """Each jury against the run: its name is no judge's id, its members are items
    judges of one task, `mean` votes on single-response items, and a fitted jury's split
    holds items with gold and leaves items to judge it on."""
    ids = {j for judges in judges_of.values() for j in judges}
    for i, jury in enumerate(juries):

        def fail(message: str, field: str, i: int = i) -> SpecError:
            return SpecError(message, file=spec_path, field=f"juries[{i}].{field}")

        if jury.name in ids:
            raise fail(f"jury {jury.name!r} has the id of a judge; pick another name", "name")
        unknown = [m for m in jury.members if m not in ids]
        if unknown:
            known = ", ".join(sorted(ids))
            raise fail(f"no items judge {unknown[0]!r}; judges: {known}", "members")
        voted = [d for d, judges in judges_of.items() if set(jury.members) <= set(judges)]
        if not voted:
            raise fail(
                "its members judge no items dataset together (single vs pairwise)", "members"
            )
        pairwise = {it.dataset for it in items if it.pairwise}
        if jury.vote == "mean" and any(d in pairwise for d in voted):
            raise fail('"mean" averages scores; pairwise items vote on preferences', "vote")
        if jury.fit_on is not None:
            for dataset in voted:
                _check_fit_split(jury, [it for it in items if it.dataset == dataset], fail)


def _check_fit_split(jury: JurySpec, items: Sequence[ItemRecord], fail: Any) -> None:
    fit = [it for it in items if it.split == jury.fit_on]
    dataset = items[0].dataset if items else "?"
    gold = [it for it in fit if it.gold_label or it.gold_preference or it.gold_score is not None]
    if not gold:
        splits = sorted({it.split for it in items if it.split is not None})
        raise fail(
            f"dataset {dataset!r} has no item with gold in split {jury.fit_on!r} "
            f"(splits: {', '.join(splits) or 'none; set split_column'})",
            "fit_on",
        )
    if len(fit) == len(items):
        raise fail(
            f"every item of {dataset!r} is in split {jury.fit_on!r}: none left to judge it on",
            "fit_on",
        )
