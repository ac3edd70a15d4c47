"""One line of a run's labels file: a person's gold label or preference for one item.

A person's correction of the gold lives next to the run's records, never in them: the
record files stay what the run wrote (their digests still match the manifest), and
every correction is a new line, so the history of who changed what, and from what, is
kept. The latest line for an item wins.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from assay.errors import AssayError

__all__ = [
    "LABELS_FILE",
    "MAX_ANNOTATOR_CHARS",
    "MAX_LABEL_CHARS",
    "MAX_NOTE_CHARS",
    "Adjudication",
    "AdjudicationError",
]

LABELS_FILE = "labels.jsonl"  # in the run directory, beside the record files
MAX_NOTE_CHARS = 2000  # a note is a sentence or two, not a document
MAX_LABEL_CHARS = 200
MAX_ANNOTATOR_CHARS = 100


class AdjudicationError(AssayError):
    """An adjudication a person cannot record as given (unknown item, wrong kind of gold)."""


class Adjudication(BaseModel):
    """One line of `labels.jsonl`: the gold a person set for one item of a run.

    A single-response item gets a `label`, a pairwise item a `preference`; exactly one
    is set. `previous` is the value this entry replaced (the item's latest entry before
    it, None for the first), so the file reads as a history without a second lookup."""

    model_config = ConfigDict(extra="ignore")

    dataset: str = Field(description="The item's dataset.")
    item_id: str = Field(description="The item's id.")
    label: str | None = Field(default=None, description="The gold label (single-response items).")
    preference: Literal["A", "B", "tie"] | None = Field(
        default=None, description="The gold preference (pairwise items)."
    )
    note: str | None = Field(default=None, description="Why, in the annotator's words.")
    annotator: str = Field(description="Who: the name given at `assay view --annotator`.")
    at: datetime = Field(description="When the entry was written (UTC).")
    previous: str | None = Field(
        default=None, description="The label or preference this entry replaced, if any."
    )

    @model_validator(mode="after")
    def _one_value(self) -> Adjudication:
        if (self.label is None) == (self.preference is None):
            raise ValueError("an adjudication sets exactly one of label and preference")
        return self

    @property
    def key(self) -> tuple[str, str]:
        return (self.dataset, self.item_id)

    @property
    def value(self) -> str:
        """The gold this entry sets: the label, or the preference of a pairwise item."""
        return self.label if self.label is not None else str(self.preference)
