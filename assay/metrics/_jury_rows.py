"""A fitted jury's rows are computed on held-out items only.

A jury whose weights were fitted on a split (`[[juries]] fit_on`, provenance in its
records' `jury` field) would otherwise be scored partly on the items it was fitted on,
an in-sample number reported as if it were held out. Its rows count only the items of
the other splits (`n_items`) and say so (`evaluated_on`). Juries sit out of panels: their
verdicts are functions of their members'.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from assay.core.records import ItemJudgmentRecord, ItemRecord

V = TypeVar("V")


def _fit_split(records: Sequence[ItemJudgmentRecord]) -> str | None:
    for record in reversed(records):
        if record.jury is not None:
            return record.jury.fit_on
    return None


def held_out(
    items: Sequence[ItemRecord], records: Sequence[ItemJudgmentRecord]
) -> Sequence[ItemRecord]:
    """The items a judge's row is computed on: all of them, except for a fitted jury,
    the items outside its fit split."""
    split = _fit_split(records)
    return items if split is None else [it for it in items if it.split != split]


def jury_fields(records: Sequence[ItemJudgmentRecord]) -> dict[str, Any]:
    """`evaluated_on` of a fitted jury's row; nothing for any other judge."""
    split = _fit_split(records)
    if split is None:
        return {}
    return {"evaluated_on": f"items not in split {split!r} (its weights were fitted there)"}


def without_juries(
    labels: Mapping[str, V], by_judge: Mapping[str, Sequence[ItemJudgmentRecord]]
) -> dict[str, V]:
    """Judges other than juries: a panel's agreement counts each independent rater once,
    and a jury's verdicts repeat its members'."""
    return {
        judge: value
        for judge, value in labels.items()
        if not any(r.jury is not None for r in by_judge.get(judge, ()))
    }
