"""ForceBench judgments read into one row per (judge, pair): the pair table.

A pair with a member that is missing, has no score, or ended in any status but `ok` is
*failed*: it counts as a violation with margin 0. The pair universe is every
`(dataset, pair_id)` seen in any record, so every judge is measured on the same pairs.
"""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
from numpy.typing import NDArray

from assay.core.outcomes import Status
from assay.core.pairs import Axis, Member
from assay.core.records import JudgmentRecord
from assay.metrics._record_fields import (
    ProducerMeta,
    opt_float,
    opt_int,
    opt_str,
    producer_fields,
    record_rows,
    req_str,
)

if TYPE_CHECKING:
    import pandas as pd

Records: TypeAlias = "Iterable[JudgmentRecord | Mapping[str, Any]] | pd.DataFrame"
PairKey: TypeAlias = tuple[str, str]
"""(dataset, pair_id)"""
PairLabels: TypeAlias = tuple[str | None, int | None]
"""(axis, severity) of a pair: the first non-null value any record gives."""

_PAIR_DTYPES: dict[str, Any] = {
    "judge_id": object,
    "dataset": object,
    "pair_id": object,
    "axis": object,
    "severity": "Int64",
    "s_cal": "float64",
    "s_raised": "float64",
    "status_cal": object,
    "status_raised": object,
    "failed": bool,
    "violation": "int64",
    "margin": "float64",
}
PAIR_COLUMNS = list(_PAIR_DTYPES)

_REQUIRED = ("dataset", "pair_id", "member", "judge_id", "status")
_OPTIONAL = ("axis", "severity", "model", "prompt_id", "prompt_version", "score")
_OK = Status.OK.value
_CAL, _RAISED = Member.CALIBRATED.value, Member.RAISED.value


@dataclass(frozen=True, slots=True)
class JudgmentEntry:
    """The fields of one judgment record the ForceBench metrics use."""

    dataset: str
    pair_id: str
    member: str
    judge_id: str
    axis: str | None
    severity: int | None
    model: str | None
    prompt_id: str | None
    prompt_version: int | None
    status: str
    score: float | None


def _from_mapping(row: Mapping[str, Any]) -> JudgmentEntry:
    member = req_str(row, "member")
    if member not in (_CAL, _RAISED):
        raise ValueError(f"unknown pair member {member!r}")
    return JudgmentEntry(
        **producer_fields(row, "judge_id"),
        pair_id=req_str(row, "pair_id"),
        member=member,
        axis=opt_str(row.get("axis")),
        severity=opt_int(row.get("severity")),
        status=req_str(row, "status"),
        score=opt_float(row.get("score")),
    )


# Enum -> value by lookup: much cheaper than `.value` across many records.
_VALUE: dict[Enum, str] = {e: e.value for enum in (Member, Status, Axis) for e in enum}


def _from_record(r: JudgmentRecord) -> JudgmentEntry:
    return JudgmentEntry(
        dataset=r.dataset,
        pair_id=r.pair_id,
        member=_VALUE[r.member],
        judge_id=r.judge_id,
        axis=None if r.axis is None else _VALUE[r.axis],
        severity=r.severity,
        model=r.model,
        prompt_id=r.prompt_id,
        prompt_version=r.prompt_version,
        status=_VALUE[r.status],
        score=r.score,
    )


def _entries(records: Records) -> Iterable[JudgmentEntry]:
    for r in record_rows(records, _REQUIRED, _OPTIONAL):
        yield _from_record(r) if isinstance(r, JudgmentRecord) else _from_mapping(r)


class _Outcomes:
    """One judge's latest record of each member of each pair, in columns indexed by
    `2 * pair_index + member`: score (NaN when none), whether it had a score, and the
    status as a code (0: no record). ~10 bytes a judgment, where keeping each record's
    entry cost hundreds: a run of 100,000 judgments has its metrics in flat memory."""

    __slots__ = ("score", "scored", "status")

    def __init__(self, n_pairs: int) -> None:
        self.score = array("d", [math.nan]) * (2 * n_pairs)
        self.scored = bytearray(2 * n_pairs)
        self.status = bytearray(2 * n_pairs)

    def add_pair(self) -> None:
        self.score.extend((math.nan, math.nan))
        self.scored.extend(b"\0\0")
        self.status.extend(b"\0\0")

    def put(self, slot: int, status: int, score: float | None) -> None:
        self.status[slot] = status
        self.scored[slot] = score is not None
        self.score[slot] = math.nan if score is None else score


@dataclass(slots=True)
class JudgedPairs:
    """Every pair seen (index in first-seen order, first non-null axis and severity),
    every judge's meta, and each judge's latest record per pair member (`_Outcomes`)."""

    index: dict[str, dict[str, int]] = field(default_factory=dict)  # dataset -> pair id -> i
    axes: list[str | None] = field(default_factory=list)
    severities: list[int | None] = field(default_factory=list)
    judges: dict[str, ProducerMeta] = field(default_factory=dict)
    outcomes: dict[str, _Outcomes] = field(default_factory=dict)
    statuses: list[str | None] = field(default_factory=lambda: [None])  # code -> status

    def status_code(self, status: str) -> int:
        """A small code per distinct status (0 is "no record")."""
        try:
            return self.statuses.index(status, 1)
        except ValueError:
            self.statuses.append(sys.intern(status))
            return len(self.statuses) - 1

    def pair(self, rec: JudgmentEntry) -> int:
        """The pair's index (a new pair gets a slot in every judge's columns); its axis
        and severity are the first non-null ones any record gives."""
        ids = self.index.get(rec.dataset)
        if ids is None:
            ids = self.index[sys.intern(rec.dataset)] = {}
        i = ids.get(rec.pair_id)
        if i is None:
            i = ids[rec.pair_id] = len(self.axes)
            self.axes.append(rec.axis)
            self.severities.append(rec.severity)
            for outcomes in self.outcomes.values():
                outcomes.add_pair()
            return i
        if self.axes[i] is None:
            self.axes[i] = rec.axis
        if self.severities[i] is None:
            self.severities[i] = rec.severity
        return i

    def add(self, rec: JudgmentEntry) -> None:
        """A record, later records of the same (pair, member, judge) winning."""
        i = self.pair(rec)
        outcomes = self.outcomes.get(rec.judge_id)
        if outcomes is None:
            outcomes = self.outcomes[sys.intern(rec.judge_id)] = _Outcomes(len(self.axes))
        slot = 2 * i + (0 if rec.member == _CAL else 1)
        outcomes.put(slot, self.status_code(rec.status), rec.score)
        meta = self.judges.setdefault(rec.judge_id, ProducerMeta())
        meta.absorb(rec.model, rec.prompt_id, rec.prompt_version)


def judged_pairs(records: Records) -> JudgedPairs:
    """Every record read once, last record per key winning."""
    out = JudgedPairs()
    for rec in _entries(records):
        out.add(rec)
    return out


def judge_columns(
    judged: JudgedPairs, outcomes: _Outcomes, order: NDArray[np.intp]
) -> dict[str, Any]:
    """One judge's s_cal .. margin columns over the pairs in `order`.

    A pair with a member that is missing, unscored or not `ok` is failed: a violation
    with margin 0; otherwise violation = raised >= calibrated, margin = cal - raised."""
    score = np.frombuffer(outcomes.score, dtype=np.float64).reshape(-1, 2)[order]
    scored = np.frombuffer(outcomes.scored, dtype=np.uint8).reshape(-1, 2)[order].astype(bool)
    code = np.frombuffer(outcomes.status, dtype=np.uint8).reshape(-1, 2)[order]
    names = np.array(judged.statuses, dtype=object)
    ok_code = judged.statuses.index(_OK) if _OK in judged.statuses else -1
    ok = scored & (code.astype(np.int64) == ok_code)
    failed = ~(ok[:, 0] & ok[:, 1])
    s_cal, s_raised = score[:, 0], score[:, 1]
    with np.errstate(invalid="ignore"):
        violation = np.where(failed, 1, (s_raised >= s_cal).astype(np.int64))
        margin = np.where(failed, 0.0, s_cal - s_raised)
    return {
        "s_cal": s_cal,
        "s_raised": s_raised,
        "status_cal": names[code[:, 0]],
        "status_raised": names[code[:, 1]],
        "failed": failed,
        "violation": violation,
        "margin": margin,
    }


def sorted_pairs(judged: JudgedPairs) -> tuple[list[PairKey], NDArray[np.intp]]:
    """The pair keys sorted, and each one's index in the judges' columns."""
    keys = [(d, pair_id) for d in sorted(judged.index) for pair_id in sorted(judged.index[d])]
    order = (judged.index[d][pair_id] for d, pair_id in keys)
    return keys, np.fromiter(order, dtype=np.intp, count=len(keys))


def sorted_order(judged: JudgedPairs) -> tuple[NDArray[np.object_], NDArray[np.intp]]:
    """`sorted_pairs` without the keys: each pair's dataset and column index, sorted by
    (dataset, pair id), with no tuple made a pair."""
    datasets: list[NDArray[np.object_]] = []
    order: list[NDArray[np.intp]] = []
    for name in sorted(judged.index):
        ids = judged.index[name]
        indices = np.fromiter((ids[p] for p in sorted(ids)), dtype=np.intp, count=len(ids))
        order.append(indices)
        datasets.append(np.full(len(ids), name, dtype=object))
    if not order:
        return np.empty(0, dtype=object), np.empty(0, dtype=np.intp)
    return np.concatenate(datasets), np.concatenate(order)


def pair_frame(judged: JudgedPairs) -> pd.DataFrame:
    """Every judge's row for every pair seen in any record (judges, then pairs, sorted)."""
    import pandas as pd  # only for the table: force_metrics works on the arrays

    keys, order = sorted_pairs(judged)
    judges = sorted(judged.judges)
    parts: dict[str, list[Any]] = {name: [] for name in PAIR_COLUMNS}
    for judge_id in judges:
        parts["judge_id"].append(np.full(len(keys), judge_id, dtype=object))
        parts["dataset"].append(np.array([k[0] for k in keys], dtype=object))
        parts["pair_id"].append(np.array([k[1] for k in keys], dtype=object))
        parts["axis"].append(np.array([judged.axes[i] for i in order], dtype=object))
        parts["severity"].append(np.array([judged.severities[i] for i in order], dtype=object))
        for name, column in judge_columns(judged, judged.outcomes[judge_id], order).items():
            parts[name].append(column)
    return pd.DataFrame(
        {
            name: pd.Series(np.concatenate(chunks) if chunks else [], dtype=_PAIR_DTYPES[name])
            for name, chunks in parts.items()
        },
        columns=PAIR_COLUMNS,
    )


def pair_table(records: Records) -> pd.DataFrame:
    """One row per `(judge_id, dataset, pair_id)`, sorted by those keys.

    `records` is an iterable of `JudgmentRecord` (or record dicts) or a DataFrame of
    record dicts. For a duplicated key the last record wins. Every judge gets a row for
    every pair seen in any record; a member never judged has NaN score and None status.
    Columns: judge_id, dataset, pair_id, axis, severity (nullable Int64), s_cal, s_raised,
    status_cal, status_raised, failed, violation (0/1), margin (s_cal - s_raised, 0 when
    failed).
    """
    return pair_frame(judged_pairs(records))
