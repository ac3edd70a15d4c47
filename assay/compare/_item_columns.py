"""A run's item judgments and items read as columns (`rundir.read_columns`, DuckDB):
the same votes and gold as the record-by-record read of `_load`, several times faster.

`VOTE_COLUMNS` and `ITEM_COLUMNS` are the fields of `_load._ItemVoteFields` and of
`ItemRecord`, typed as they type them (tests/test_rundir_columns.py checks both).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import TypeAdapter, ValidationError

from assay.compare._item_data import Gold, ItemData, ItemKey, VoteKey, normalise_label
from assay.core.outcomes import Status
from assay.core.rundir import Column, read_columns
from assay.metrics._majority import Vote
from assay.metrics._pairwise import unswap
from assay.metrics._record_fields import ProducerMeta

VOTE_COLUMNS = {
    "dataset": Column("str", required=True),
    "item_id": Column("str", required=True),
    "judge_id": Column("str", required=True),
    "order": Column("str", values=("ab", "ba")),
    "status": Column("str", required=True, values=tuple(Status)),
    "label": Column("str"),
    "score": Column("float"),
    "raw_score": Column("float"),
    "preference": Column("str", values=("A", "B", "tie")),
    "label_probability": Column("float"),
    "jury": Column("object"),
    "model": Column("str"),
    "prompt_id": Column("str"),
    "prompt_version": Column("int"),
}
"""`_load._ItemVoteFields` as columns (`rundir.read_columns`): the same fields, types, values."""
ITEM_COLUMNS = {
    "dataset": Column("str", required=True),
    "item_id": Column("str", required=True),
    "line": Column("int"),
    "pairwise": Column("bool"),
    "gold_label": Column("str"),
    "gold_score": Column("float"),
    "gold_preference": Column("str", values=("A", "B", "tie")),
    "ratings": Column("object"),
    "split": Column("str"),
}
"""`ItemRecord` as columns (its ratings validated as the record does, `_RATINGS`)."""
_RATINGS = TypeAdapter(dict[str, str | None])


def gold_from_columns(path: Path) -> dict[ItemKey, Gold] | None:
    """Each item's gold (as `_load._gold` makes it) read as columns; None when the
    columns cannot be read (`rundir.read_columns`) or a rater's label is refused."""
    c = read_columns(path, ITEM_COLUMNS)
    ratings = None if c is None else _ratings(c["ratings"])
    if c is None or ratings is None:
        return None
    made: dict[tuple[Any, ...], Gold] = {}  # items share a handful of golds: made once each
    fields = zip(c["pairwise"], c["gold_label"], c["gold_score"], c["gold_preference"],
                 ratings, strict=True)  # fmt: skip
    golds = [_gold_fields(made, *f) for f in fields]
    return dict(zip(zip(c["dataset"], c["item_id"], strict=True), golds, strict=True))


def _ratings(texts: list[str | None]) -> list[tuple[tuple[str, str | None], ...]] | None:
    """Each item's ratings as `ItemRecord` validates them, sorted by rater and with
    normalised labels; None if one is refused (the record-by-record read then names its
    line)."""
    try:
        parsed = [None if x is None else _RATINGS.validate_json(x) for x in texts]
    except ValidationError:
        return None
    return [
        tuple(sorted((k, normalise_label(v)) for k, v in r.items())) if r else () for r in parsed
    ]


def _gold_fields(
    made: dict[tuple[Any, ...], Gold], pairwise: bool | None, label: str | None,
    score: float | None, preference: str | None, ratings: tuple[tuple[str, str | None], ...],
) -> Gold:  # fmt: skip
    key = (pairwise, label, score, preference, ratings)
    gold = made.get(key)
    if gold is None:
        gold = made[key] = Gold(
            pairwise=bool(pairwise),
            label=normalise_label(label),
            score=score,
            preference=preference,
            ratings=ratings,
        )
    return gold


def add_columns(data: ItemData, c: dict[str, list[Any]]) -> None:
    """`_load._add_records` on the records' columns (`VOTE_COLUMNS`), the same votes; a run of
    lines of one judge at a time (the run stage writes them so), in C loops."""
    judges, orders = c["judge_id"], c["order"]
    items = list(zip(c["dataset"], c["item_id"], strict=True))
    pairwise = orders.count(None) < len(orders)
    keys: Sequence[VoteKey] = items
    if pairwise:
        keys = [i if o is None else (*i, o) for i, o in zip(items, orders, strict=True)]
    names = {x: normalise_label(x) for x in set(c["label"])}
    labels = list(map(names.__getitem__, c["label"]))
    prefs = c["preference"]
    if pairwise:
        prefs = list(map(read_preference, prefs, orders, c["label"]))
    raw, scores = c["raw_score"], c["score"]
    if raw.count(None) < len(raw):
        scores = [s if r is None else r for r, s in zip(raw, scores, strict=True)]
    ok = list(map(Status.OK.__eq__, c["status"]))
    votes = list(map(Vote, ok, labels, scores, prefs, c["label_probability"]))
    for judge, first, stop in _runs(judges):
        if judge not in data.votes:
            data.votes[judge], data.meta[judge] = {}, ProducerMeta()
        data.votes[judge].update(zip(keys[first:stop], votes[first:stop], strict=True))
        meta = data.meta[judge]
        for name in ("model", "prompt_id", "prompt_version"):  # the last non-null value wins
            value = next((v for v in reversed(c[name][first:stop]) if v is not None), None)
            if value is not None:
                setattr(meta, name, value)
        if c["jury"][first:stop].count(None) < stop - first:
            data.juries.add(judge)
    if set(items).difference(data.gold):
        for item, o in zip(items, orders, strict=True):
            if item not in data.gold:
                data.gold[item] = Gold(pairwise=o is not None)


def _runs(values: list[str]) -> list[tuple[str, int, int]]:
    """(value, first, stop) of each run of equal consecutive values."""
    if not values:
        return []
    column = np.asarray(values, dtype=object)
    starts = [0, *(np.flatnonzero(column[1:] != column[:-1]) + 1).tolist()]
    stops = [*starts[1:], len(values)]
    return [(values[a], a, b) for a, b in zip(starts, stops, strict=True)]


def read_preference(preference: str | None, order: str | None, label: str | None) -> str | None:
    """The recorded preference, else the slot label (`a`/`b`/`tie` as the judge saw
    the order; with B shown first, unswapped)."""
    if preference is not None or order is None or label not in ("a", "b", "tie"):
        return preference
    verdict = "tie" if label == "tie" else label.upper()
    return verdict if order == "ab" else unswap(verdict)
