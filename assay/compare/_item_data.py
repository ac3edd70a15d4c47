"""What a comparison keeps of a run's items: each item's gold and each judge's votes."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache

from assay.core.labels import comparable_label
from assay.metrics._majority import Vote
from assay.metrics._record_fields import ProducerMeta

normalise_label = lru_cache(maxsize=4096)(comparable_label)
"""The run metrics' label normalisation, cached: a run repeats a handful of labels."""

ItemKey = tuple[str, str]
"""(dataset, item_id)"""
VoteKey = tuple[str, ...]
"""(dataset, item_id) of a single-response item; (dataset, item_id, order) of a
pairwise one (order "ab" or "ba")."""


@dataclass(frozen=True, slots=True)
class Gold:
    """An item's gold (items.jsonl) and its human raters' labels."""

    pairwise: bool = False
    label: str | None = None
    score: float | None = None
    preference: str | None = None
    ratings: tuple[tuple[str, str | None], ...] = ()


@dataclass
class ItemData:
    """Items with their gold, and each judge's vote per (item, order)."""

    gold: dict[ItemKey, Gold]
    votes: dict[str, dict[VoteKey, Vote]]
    meta: dict[str, ProducerMeta]
    label_orders: dict[str, list[str]] = field(default_factory=dict)
    """dataset -> its declared label order (`_ordinal.label_orders_from_manifest`)."""
    order_notes: list[str] = field(default_factory=list)
    juries: set[str] = field(default_factory=set)
    """Judges whose records are a jury's votes (`[[juries]]`): not independent raters."""
