"""What an adjudication must satisfy before it is written, each refusal one line.

The labels file is read by compare, report and export as gold, so a value that could not
be gold there (a label for a pairwise item, an item the run never held) is refused here,
at the one place entries are written, rather than discovered later by every reader.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.adjudication._items import item_kind
from assay.adjudication._model import (
    MAX_ANNOTATOR_CHARS,
    MAX_LABEL_CHARS,
    MAX_NOTE_CHARS,
    AdjudicationError,
)

__all__ = ["checked"]

_PREFERENCES = {"a": "A", "b": "B", "tie": "tie"}


def _one_line(value: str | None, field: str, limit: int) -> str:
    """A non-empty single-line value of at most `limit` characters, stripped."""
    text = (value or "").strip()
    if not text:
        raise AdjudicationError("must not be empty", field=field)
    if "\n" in text or "\r" in text:
        raise AdjudicationError("must be a single line", field=field)
    if len(text) > limit:
        raise AdjudicationError(f"is {len(text)} characters; at most {limit}", field=field)
    return text


def _note(note: str | None) -> str | None:
    text = (note or "").strip()
    if len(text) > MAX_NOTE_CHARS:
        raise AdjudicationError(
            f"is {len(text)} characters; at most {MAX_NOTE_CHARS}", field="note"
        )
    return text or None


def _gold(pairwise: bool, label: str | None, preference: str | None) -> dict[str, str]:
    """{"label": ...} for a single-response item, {"preference": ...} for a pairwise one."""
    if pairwise:
        if label is not None:
            raise AdjudicationError(
                "a pairwise item takes a preference (A, B or tie), not a label", field="label"
            )
        pref = _PREFERENCES.get((preference or "").strip().lower())
        if pref is None:
            raise AdjudicationError(f"must be A, B or tie, not {preference!r}", field="preference")
        return {"preference": pref}
    if preference is not None:
        raise AdjudicationError(
            "a single-response item takes a label, not a preference", field="preference"
        )
    return {"label": _one_line(label, "label", MAX_LABEL_CHARS)}


def checked(
    run_dir: Path,
    *,
    dataset: str,
    item_id: str,
    annotator: str,
    label: str | None,
    preference: str | None,
    note: str | None,
) -> dict[str, Any]:
    """The entry's fields, normalised (stripped, preference capitalised), or an
    `AdjudicationError` naming the field or the run directory."""
    if not run_dir.is_dir():
        raise AdjudicationError("not a run directory", file=run_dir)
    who = _one_line(annotator, "annotator", MAX_ANNOTATOR_CHARS)
    pairwise = item_kind(run_dir, dataset, item_id)
    if pairwise is None:
        raise AdjudicationError(
            f"the run holds no item {item_id!r} in dataset {dataset!r}", file=run_dir
        )
    return {
        "dataset": dataset,
        "item_id": item_id,
        "annotator": who,
        "note": _note(note),
        **_gold(pairwise, label, preference),
    }
