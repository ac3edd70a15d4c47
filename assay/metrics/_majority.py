"""The majority-vote judgment of a judge sampled several times (`samples > 1`).

Repeated samples of one judge have ids `<base>#0`, `<base>#1`, ...; their majority vote is
the judgment `<base>#majority`, one per item (per pair member, per presentation order):

- status `ok` when at least one sample is ok; otherwise the first sample's status (a
  majority of failures is a failure, counted as the metrics count failures);
- `label`: the most frequent label among the ok samples. A tie goes to the label that
  sorts first as a string, so the vote never depends on the order samples arrived in
  (the same rule as `self_consistency` without an `order`);
- `preference` (pairwise): the most frequent preference among the ok samples; a tie
  between different preferences is `tie`;
- `score`: the median of the ok samples' scores (the vote of an ordinal scale).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from typing import Any, NamedTuple, TypeVar

import numpy as np

from assay.core.outcomes import Status
from assay.core.records import ItemJudgmentRecord, JudgmentRecord

MAJORITY = "majority"
_SAMPLE_ID = re.compile(r"^(?P<base>.+)#(?P<k>\d+)$")

_Label = TypeVar("_Label", bound=Hashable)
_Record = TypeVar("_Record", JudgmentRecord, ItemJudgmentRecord)


def sample_base(judge_id: str) -> str | None:
    """`gpt::judge@1` for the sample id `gpt::judge@1#3`; None for any other id."""
    match = _SAMPLE_ID.match(judge_id)
    return None if match is None else match.group("base")


def majority_id(base: str) -> str:
    return f"{base}#{MAJORITY}"


def majority_vote(labels: Iterable[_Label | None], *, tie: _Label | None = None) -> _Label | None:
    """The modal non-missing label; a tie goes to `tie` when given, else to the label
    that sorts first as a string. None when no label is given."""
    counts = Counter(label for label in labels if label is not None)
    if not counts:
        return None
    top = max(counts.values())
    winners = sorted((label for label, n in counts.items() if n == top), key=str)
    if len(winners) > 1 and tie is not None:
        return tie
    return winners[0]


def median_score(scores: Iterable[float | None]) -> float | None:
    values = [s for s in scores if s is not None]
    return float(np.median(values)) if values else None


class Vote(NamedTuple):
    """What the vote reads of one sample's judgment (a tuple: cheap to make by the
    hundred thousand when a run is read)."""

    ok: bool
    label: str | None = None
    score: float | None = None
    preference: str | None = None
    probability: float | None = None  # the judge's probability of its label (calibration)


def majority_of(votes: Sequence[Vote]) -> Vote:
    """The majority judgment of one item's samples (rules in the module docstring)."""
    ok = [v for v in votes if v.ok]
    return Vote(
        ok=bool(ok),
        label=majority_vote(v.label for v in ok),
        score=median_score(v.score for v in ok),
        preference=majority_vote((v.preference for v in ok), tie="tie"),
    )


def _vote(record: JudgmentRecord | ItemJudgmentRecord) -> Vote:
    return Vote(
        ok=record.status == Status.OK,
        label=record.label,
        score=record.score,
        preference=getattr(record, "preference", None),
    )


def majority_records(records: Iterable[_Record]) -> list[_Record]:
    """One `<base>#majority` record per item for every judge sampled more than once.

    `records` are one run's latest records (JudgmentRecord or ItemJudgmentRecord); the
    result holds only the new majority records, each a copy of the item's first sample
    with the voted status, label, score (and preference) and no raw output.
    """
    groups: dict[tuple[Any, ...], list[tuple[str, _Record]]] = {}
    samples: dict[str, set[str]] = {}
    for record in records:
        judge_id: str = record.judge_id
        base = sample_base(judge_id)
        if base is None:
            continue
        item: tuple[str, ...] = record.key[:-1]
        groups.setdefault((*item, base), []).append((judge_id, record))
        samples.setdefault(base, set()).add(judge_id)
    out: list[_Record] = []
    for key, members in groups.items():
        if len(samples[key[-1]]) < 2:
            continue
        members.sort(key=lambda m: m[0])
        out.append(_majority_record(key[-1], [r for _, r in members]))
    return out


def _majority_record(base: str, members: Sequence[_Record]) -> _Record:
    vote = majority_of([_vote(r) for r in members])
    first = members[0]
    update: dict[str, Any] = {
        "judge_id": majority_id(base),
        "status": Status.OK if vote.ok else first.status,
        "label": vote.label,
        "score": vote.score,
        "raw_output": None,
        "parsed": None,
        "error": None,
    }
    if isinstance(first, ItemJudgmentRecord):
        update["preference"] = vote.preference
    return first.model_copy(update=update)
