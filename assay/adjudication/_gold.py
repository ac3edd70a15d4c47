"""Gold after adjudication: the dataset's gold with each item's latest labels-file entry
laid over it, in memory (items.jsonl and metrics.json are never rewritten).

Three sources, chosen by `--gold` in `assay compare` and `assay report`:

- `dataset` (the default): the gold the run recorded from its dataset; nothing is read.
- `adjudicated`: an adjudicated item takes the person's label (single-response) or
  preference (pairwise); every other item keeps the dataset's gold.
- `adjudicated-only`: only adjudicated items have gold; the others have none, so the
  gold metrics are computed on what people checked.

With either adjudicated source the person is also a rater, `adjudicated` (the latest
label per item, whoever set it), so the rater-vs-judge tables (the kappa matrix) show
the human's agreement with each judge on the items adjudicated. One rater, not one per
annotator: the adjudicated gold is one judgment per item, and a column per annotator
would count the same person twice in the raters' alpha. Adjudications of
several runs compared together are pooled (the latest entry per item across them wins),
so every run sees the same gold, as a comparison requires.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, cast, get_args

from assay.adjudication._model import LABELS_FILE, Adjudication, AdjudicationError
from assay.adjudication._store import iter_adjudications
from assay.core.records import ItemRecord

__all__ = [
    "ADJUDICATED_RATER",
    "GOLD_SOURCES",
    "GoldOverlay",
    "GoldSource",
    "check_gold_source",
    "gold_overlay",
]

GoldSource = Literal["dataset", "adjudicated", "adjudicated-only"]
GOLD_SOURCES: tuple[str, ...] = get_args(GoldSource)
ADJUDICATED_RATER = "adjudicated"
ItemKey = tuple[str, str]


def check_gold_source(value: str) -> GoldSource:
    """`value` as a gold source, or a one-line error naming the choices."""
    if value not in GOLD_SOURCES:
        raise AdjudicationError(
            f"--gold {value!r}: not a gold source; choose {', '.join(GOLD_SOURCES)}"
        )
    return cast(GoldSource, value)


@dataclass(frozen=True)
class GoldOverlay:
    """The adjudications of some runs, ready to lay over their items' gold."""

    source: GoldSource = "dataset"
    latest: dict[ItemKey, Adjudication] = field(default_factory=dict)
    annotators: tuple[str, ...] = ()

    @property
    def active(self) -> bool:
        return self.source != "dataset"

    def apply(self, item: ItemRecord) -> ItemRecord:
        """`item` with its gold after adjudication and the adjudicators as raters."""
        if not self.active:
            return item
        adj = self.latest.get(item.key)
        if adj is None:
            if self.source == "adjudicated-only":
                return item.model_copy(
                    update={"gold_label": None, "gold_score": None, "gold_preference": None}
                )
            return item
        update: dict[str, object] = (
            {"gold_label": adj.label}
            if adj.label is not None
            else {"gold_preference": adj.preference}
        )
        if adj.label is not None:
            name = ADJUDICATED_RATER
            while name in item.ratings:  # the dataset has a rater of that name
                name += "#labels"
            update["ratings"] = {**item.ratings, name: adj.label}
        return item.model_copy(update=update)

    def note(self, keys: Iterable[ItemKey]) -> str | None:
        """What the report says about its gold: how many of `keys` were adjudicated."""
        if not self.active:
            return None
        universe = set(keys)
        n = len(universe & set(self.latest))
        rest = (
            "the others keep the dataset's gold"
            if self.source == "adjudicated"
            else "the others have no gold"
        )
        who = ", ".join(self.annotators) or "nobody"
        return (
            f"gold: {self.source}: {n} of {len(universe)} items take a person's label from "
            f"{LABELS_FILE} (latest entry per item; annotators: {who}); {rest}; the rater "
            f"'{ADJUDICATED_RATER}' is the person's agreement with each judge"
        )


def gold_overlay(run_dirs: Sequence[Path], source: str) -> GoldOverlay:
    """The pooled adjudications of `run_dirs` for `source`; an adjudicated source with
    no labels file in any of them is refused (the result would silently be the dataset's
    gold)."""
    checked = check_gold_source(source)
    if checked == "dataset":
        return GoldOverlay()
    files = [Path(d) / LABELS_FILE for d in run_dirs]
    if not any(f.is_file() for f in files):
        where = files[0] if len(files) == 1 else f"any of the {len(files)} runs"
        raise AdjudicationError(
            f"--gold {checked}: no {LABELS_FILE} in {where}; adjudicate items in "
            "`assay view` (or with assay.adjudication.append_adjudication) first"
        )
    entries = sorted(
        (e for d in run_dirs for e in iter_adjudications(Path(d))), key=lambda e: e.at
    )  # stable: entries at the same instant keep file order
    latest = {e.key: e for e in entries}
    annotators = tuple(sorted({e.annotator for e in entries}))
    return GoldOverlay(checked, latest, annotators)
