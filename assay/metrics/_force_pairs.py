"""ForceBench judgments read into one row per (judge, pair): the pair table.

A pair with a member that is missing, has no score, or ended in any status but `ok` is
*failed*: it counts as a violation with margin 0. The pair universe is every
`(dataset, pair_id)` seen in any record, so every judge is measured on the same pairs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, TypeAlias

import numpy as np
import pandas as pd

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

Records: TypeAlias = Iterable[JudgmentRecord | Mapping[str, Any]] | pd.DataFrame
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


@dataclass(slots=True)
class JudgedPairs:
    """Latest record per (dataset, pair, member, judge); labels per pair; meta per judge."""

    latest: dict[tuple[str, str, str, str], JudgmentEntry]
    pairs: dict[PairKey, PairLabels]
    judges: dict[str, ProducerMeta]


def judged_pairs(records: Records) -> JudgedPairs:
    """Every record read once, last record per key winning."""
    out = JudgedPairs(latest={}, pairs={}, judges={})
    for rec in _entries(records):
        out.latest[(rec.dataset, rec.pair_id, rec.member, rec.judge_id)] = rec
        pkey = (rec.dataset, rec.pair_id)
        axis, severity = out.pairs.get(pkey, (None, None))
        out.pairs[pkey] = (
            rec.axis if axis is None else axis,
            rec.severity if severity is None else severity,
        )
        meta = out.judges.setdefault(rec.judge_id, ProducerMeta())
        meta.absorb(rec.model, rec.prompt_id, rec.prompt_version)
    return out


def _outcome(cal: JudgmentEntry | None, raised: JudgmentEntry | None) -> tuple[bool, int, float]:
    """(failed, violation, margin) of one pair: a failed pair is a violation with margin 0."""
    if cal is None or raised is None or cal.score is None or raised.score is None:
        return True, 1, 0.0
    if cal.status != _OK or raised.status != _OK:
        return True, 1, 0.0
    return False, int(raised.score >= cal.score), cal.score - raised.score


def _pair_row(judged: JudgedPairs, judge_id: str, pkey: PairKey) -> tuple[Any, ...]:
    """One pair table row, values in `PAIR_COLUMNS` order."""
    dataset, pair_id = pkey
    cal = judged.latest.get((dataset, pair_id, _CAL, judge_id))
    raised = judged.latest.get((dataset, pair_id, _RAISED, judge_id))
    return (
        judge_id,
        dataset,
        pair_id,
        *judged.pairs[pkey],
        np.nan if cal is None or cal.score is None else cal.score,
        np.nan if raised is None or raised.score is None else raised.score,
        None if cal is None else cal.status,
        None if raised is None else raised.status,
        *_outcome(cal, raised),
    )


def pair_frame(judged: JudgedPairs) -> pd.DataFrame:
    """Every judge's row for every pair seen in any record."""
    pair_keys = sorted(judged.pairs)
    rows = [_pair_row(judged, j, pkey) for j in sorted(judged.judges) for pkey in pair_keys]
    values = list(zip(*rows, strict=True)) if rows else [() for _ in PAIR_COLUMNS]
    return pd.DataFrame(
        {
            name: pd.Series(list(column), dtype=_PAIR_DTYPES[name])
            for name, column in zip(PAIR_COLUMNS, values, strict=True)
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
