"""ForceBench metrics: monotonicity violation rate (MVR) and force sensitivity (FS).

For one judge over N pairs, with `s_cal`/`s_raised` the scores of a pair's members::

    MVR = (1/N) * sum(1[s_raised >= s_cal])     # a tie is a violation
    FS  = (1/N) * sum(s_cal - s_raised)

A pair with a member that is missing, has no score, or ended in any status but `ok` is
*failed*: it counts as a violation with margin 0, and stays in N. The pair universe is
every `(dataset, pair_id)` seen in any record, so N is the same for every judge.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal, TypeAlias

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field

from assay.core.outcomes import Status
from assay.core.pairs import Axis, Member
from assay.core.records import JudgmentRecord
from assay.metrics._bootstrap import bootstrap_mean_cis

GroupBy = Literal["overall", "axis", "severity"]
Records: TypeAlias = Iterable[JudgmentRecord | Mapping[str, Any]] | pd.DataFrame

OVERALL_GROUP = "all"
POOLED = "all"
"""`dataset` of rows computed over every dataset of the run together."""
UNRATED = "unrated"
"""Severity group of pairs whose severity is None."""
UNKNOWN_AXIS = "unknown"
"""Axis group of pairs whose axis is None in every record."""

PAIR_COLUMNS = [
    "judge_id",
    "dataset",
    "pair_id",
    "axis",
    "severity",
    "s_cal",
    "s_raised",
    "status_cal",
    "status_raised",
    "failed",
    "violation",
    "margin",
]

_REQUIRED = ("dataset", "pair_id", "member", "judge_id", "status")
_OPTIONAL = ("axis", "severity", "model", "prompt_id", "prompt_version", "score")
_OK = Status.OK.value


class ForceRow(BaseModel):
    """MVR and FS, with bootstrap CIs, for one judge on one group of pairs."""

    model_config = ConfigDict(frozen=True)

    judge_id: str
    model: str | None = None
    prompt_id: str | None = None
    prompt_version: int | None = None
    dataset: str = Field(
        default=POOLED, description="Dataset name, or 'all' for every dataset pooled."
    )
    group_by: GroupBy
    group: str = Field(description="'all' for overall; axis value; '1'..'3' or 'unrated'.")
    n: int = Field(description="Pairs in the group, failed ones included.")
    n_failed: int
    mvr: float
    mvr_lo: float | None = Field(description="None when no CI was asked for (n_boot=0).")
    mvr_hi: float | None
    fs: float
    fs_lo: float | None
    fs_hi: float | None


class ForceReport(BaseModel):
    """All ForceBench metric rows of a run, plus the bootstrap settings used."""

    model_config = ConfigDict(frozen=True)

    rows: list[ForceRow] = Field(default_factory=list)
    n_boot: int
    seed: int
    confidence: float

    def to_frame(self) -> pd.DataFrame:
        """One row per `ForceRow`, columns in field order."""
        return pd.DataFrame(
            [r.model_dump() for r in self.rows], columns=list(ForceRow.model_fields)
        )


# --------------------------------------------------------------------------- input


@dataclass(frozen=True, slots=True)
class _Rec:
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


def _missing(v: object) -> bool:
    if v is None or v is pd.NA or v is pd.NaT:
        return True
    return isinstance(v, float) and math.isnan(v)


def _opt_str(v: object) -> str | None:
    if _missing(v):
        return None
    if isinstance(v, Enum):
        return str(v.value)
    return str(v)


_NUMBER = (int, float, str, np.integer, np.floating)


def _opt_int(v: object) -> int | None:
    if _missing(v):
        return None
    if isinstance(v, _NUMBER):
        return int(v)
    raise TypeError(f"expected an integer, got {v!r}")


def _opt_float(v: object) -> float | None:
    if _missing(v):
        return None
    if isinstance(v, _NUMBER):
        return float(v)
    raise TypeError(f"expected a number, got {v!r}")


def _req_str(row: Mapping[str, Any], name: str) -> str:
    v = _opt_str(row.get(name))
    if v is None:
        raise ValueError(f"record is missing required field {name!r}: {dict(row)!r}")
    return v


def _from_mapping(row: Mapping[str, Any]) -> _Rec:
    member = _req_str(row, "member")
    if member not in (Member.CALIBRATED.value, Member.RAISED.value):
        raise ValueError(f"unknown pair member {member!r}")
    return _Rec(
        dataset=_req_str(row, "dataset"),
        pair_id=_req_str(row, "pair_id"),
        member=member,
        judge_id=_req_str(row, "judge_id"),
        axis=_opt_str(row.get("axis")),
        severity=_opt_int(row.get("severity")),
        model=_opt_str(row.get("model")),
        prompt_id=_opt_str(row.get("prompt_id")),
        prompt_version=_opt_int(row.get("prompt_version")),
        status=_req_str(row, "status"),
        score=_opt_float(row.get("score")),
    )


# Enum -> value by lookup: much cheaper than `.value` across many records.
_VALUE: dict[Enum, str] = {e: e.value for enum in (Member, Status, Axis) for e in enum}


def _from_record(r: JudgmentRecord) -> _Rec:
    return _Rec(
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


def _iter_recs(records: Records) -> Iterable[_Rec]:
    if isinstance(records, pd.DataFrame):
        missing = [c for c in _REQUIRED if c not in records.columns]
        if missing:
            raise ValueError(f"records frame lacks required columns {missing}")
        cols = [c for c in (*_REQUIRED, *_OPTIONAL) if c in records.columns]
        for row in records[cols].to_dict("records"):
            yield _from_mapping(row)
        return
    for r in records:
        yield _from_record(r) if isinstance(r, JudgmentRecord) else _from_mapping(r)


@dataclass(slots=True)
class _JudgeMeta:
    model: str | None = None
    prompt_id: str | None = None
    prompt_version: int | None = None


def _collect(
    records: Records,
) -> tuple[
    dict[tuple[str, str, str, str], _Rec],
    dict[tuple[str, str], tuple[str | None, int | None]],
    dict[str, _JudgeMeta],
]:
    """Latest record per key; (axis, severity) per pair; metadata per judge."""
    latest: dict[tuple[str, str, str, str], _Rec] = {}
    pairs: dict[tuple[str, str], tuple[str | None, int | None]] = {}
    judges: dict[str, _JudgeMeta] = {}
    for rec in _iter_recs(records):
        latest[(rec.dataset, rec.pair_id, rec.member, rec.judge_id)] = rec
        pkey = (rec.dataset, rec.pair_id)
        axis, severity = pairs.get(pkey, (None, None))
        pairs[pkey] = (
            rec.axis if axis is None else axis,
            rec.severity if severity is None else severity,
        )
        meta = judges.setdefault(rec.judge_id, _JudgeMeta())
        # Last non-null value wins, like the records themselves.
        if rec.model is not None:
            meta.model = rec.model
        if rec.prompt_id is not None:
            meta.prompt_id = rec.prompt_id
        if rec.prompt_version is not None:
            meta.prompt_version = rec.prompt_version
    return latest, pairs, judges


def _pair_frame(
    latest: dict[tuple[str, str, str, str], _Rec],
    pairs: dict[tuple[str, str], tuple[str | None, int | None]],
    judges: Iterable[str],
) -> pd.DataFrame:
    cols: dict[str, list[Any]] = {c: [] for c in PAIR_COLUMNS}
    pair_keys = sorted(pairs)
    for judge_id in sorted(judges):
        for dataset, pair_id in pair_keys:
            cal = latest.get((dataset, pair_id, Member.CALIBRATED.value, judge_id))
            raised = latest.get((dataset, pair_id, Member.RAISED.value, judge_id))
            s_cal = None if cal is None else cal.score
            s_raised = None if raised is None else raised.score
            failed = (
                cal is None
                or raised is None
                or cal.status != _OK
                or raised.status != _OK
                or s_cal is None
                or s_raised is None
            )
            if failed or s_cal is None or s_raised is None:
                violation, margin = 1, 0.0
            else:
                violation, margin = int(s_raised >= s_cal), s_cal - s_raised
            axis, severity = pairs[(dataset, pair_id)]
            cols["judge_id"].append(judge_id)
            cols["dataset"].append(dataset)
            cols["pair_id"].append(pair_id)
            cols["axis"].append(axis)
            cols["severity"].append(severity)
            cols["s_cal"].append(np.nan if s_cal is None else s_cal)
            cols["s_raised"].append(np.nan if s_raised is None else s_raised)
            cols["status_cal"].append(None if cal is None else cal.status)
            cols["status_raised"].append(None if raised is None else raised.status)
            cols["failed"].append(failed)
            cols["violation"].append(violation)
            cols["margin"].append(margin)
    return pd.DataFrame(
        {
            "judge_id": pd.Series(cols["judge_id"], dtype=object),
            "dataset": pd.Series(cols["dataset"], dtype=object),
            "pair_id": pd.Series(cols["pair_id"], dtype=object),
            "axis": pd.Series(cols["axis"], dtype=object),
            "severity": pd.Series(cols["severity"], dtype="Int64"),
            "s_cal": pd.Series(cols["s_cal"], dtype="float64"),
            "s_raised": pd.Series(cols["s_raised"], dtype="float64"),
            "status_cal": pd.Series(cols["status_cal"], dtype=object),
            "status_raised": pd.Series(cols["status_raised"], dtype=object),
            "failed": pd.Series(cols["failed"], dtype=bool),
            "violation": pd.Series(cols["violation"], dtype="int64"),
            "margin": pd.Series(cols["margin"], dtype="float64"),
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
    latest, pairs, judges = _collect(records)
    return _pair_frame(latest, pairs, judges)


# ------------------------------------------------------------------------- metrics


def _stream_seed(
    seed: int, judge_id: str, group_by: str, group: str, dataset: str = POOLED
) -> list[int]:
    """Seed entropy for one (judge, dataset, group): stable across runs and independent of
    which other judges or groups are present. Pooled rows keep their historical seeds."""
    key = f"{judge_id}\x1f{group_by}\x1f{group}"
    if dataset != POOLED:
        key += f"\x1f{dataset}"
    digest = hashlib.sha256(key.encode()).digest()
    words = np.frombuffer(digest, dtype="<u4").tolist()
    return [seed, *words]


def _axis_order(values: Iterable[str]) -> list[str]:
    known = [a.value for a in Axis]
    present = set(values)
    head = [a for a in known if a in present]
    tail = sorted(present - set(known) - {UNKNOWN_AXIS})
    return head + tail + ([UNKNOWN_AXIS] if UNKNOWN_AXIS in present else [])


def _severity_order(values: Iterable[str]) -> list[str]:
    present = set(values)
    rated = sorted((v for v in present if v != UNRATED), key=lambda v: (len(v), v))
    return rated + ([UNRATED] if UNRATED in present else [])


def force_metrics(
    records: Records,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> ForceReport:
    """MVR and FS per judge: overall, per axis and per severity, with bootstrap CIs.

    CIs are percentile bootstrap intervals from `n_boot` resamples of the group's pairs
    (with replacement); MVR and FS share the same draws. `n_boot=0` computes no CI (the
    bounds are None). Each (judge, dataset, group) has its own random stream derived from
    `seed` and its names, so results are deterministic and do not depend on the other
    judges in the run. Rows with `dataset="all"` pool every dataset (pairs resampled over
    the union); when the records hold more than one dataset, each dataset also gets its
    own rows, resampled within that dataset. Judges are reported in sorted order, pooled
    rows first; groups as overall ('all'), axes (enum order, then 'unknown'), severities
    ('1'..'3', then 'unrated'). Groups with no pairs are omitted.
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or n_boot < 0:
        raise ValueError(f"n_boot must be a non-negative integer, got {n_boot!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")

    latest, pairs, judges = _collect(records)
    table = _pair_frame(latest, pairs, judges)
    rows: list[ForceRow] = []
    boot = _Boot(n_boot=n_boot, seed=seed, confidence=confidence)
    datasets = sorted({str(d) for d in table["dataset"].tolist()})
    for judge_id, sub in table.groupby("judge_id", sort=True):
        jid = str(judge_id)
        rows += _judge_rows(jid, judges[jid], sub, POOLED, boot)
        if len(datasets) > 1:
            for name in datasets:
                part = sub[sub["dataset"] == name]
                rows += _judge_rows(jid, judges[jid], part, name, boot)
    return ForceReport(rows=rows, n_boot=n_boot, seed=seed, confidence=confidence)


@dataclass(frozen=True, slots=True)
class _Boot:
    n_boot: int
    seed: int
    confidence: float


def _groups(sub: pd.DataFrame) -> list[tuple[GroupBy, str, NDArray[np.bool_]]]:
    axes = np.array(
        [UNKNOWN_AXIS if _missing(a) else str(a) for a in sub["axis"].tolist()], dtype=object
    )
    sevs = np.array(
        [UNRATED if _missing(s) else str(int(s)) for s in sub["severity"].tolist()],
        dtype=object,
    )
    groups: list[tuple[GroupBy, str, NDArray[np.bool_]]] = [
        ("overall", OVERALL_GROUP, np.ones(len(sub), dtype=bool))
    ]
    groups += [("axis", a, axes == a) for a in _axis_order(axes.tolist())]
    groups += [("severity", s, sevs == s) for s in _severity_order(sevs.tolist())]
    return groups


def _judge_rows(
    jid: str, meta: _JudgeMeta, sub: pd.DataFrame, dataset: str, boot: _Boot
) -> list[ForceRow]:
    """Every group's row for one judge on one dataset (or all of them pooled)."""
    values: NDArray[np.float64] = np.column_stack(
        [sub["violation"].to_numpy(dtype=np.float64), sub["margin"].to_numpy(dtype=np.float64)]
    )
    failed: NDArray[np.bool_] = sub["failed"].to_numpy(dtype=bool)
    rows: list[ForceRow] = []
    for group_by, group, mask in _groups(sub):
        v = values[mask]
        n = int(v.shape[0])
        if n == 0:
            continue
        point = v.mean(axis=0)
        lo: list[float | None] = [None, None]
        hi: list[float | None] = [None, None]
        if boot.n_boot > 0:
            lo_a, hi_a = bootstrap_mean_cis(
                v,
                n_boot=boot.n_boot,
                seed=_stream_seed(boot.seed, jid, group_by, group, dataset),
                confidence=boot.confidence,
            )
            lo, hi = [float(x) for x in lo_a], [float(x) for x in hi_a]
        rows.append(
            ForceRow(
                judge_id=jid,
                model=meta.model,
                prompt_id=meta.prompt_id,
                prompt_version=meta.prompt_version,
                dataset=dataset,
                group_by=group_by,
                group=group,
                n=n,
                n_failed=int(failed[mask].sum()),
                mvr=float(point[0]),
                mvr_lo=lo[0],
                mvr_hi=hi[0],
                fs=float(point[1]),
                fs_lo=lo[1],
                fs_hi=hi[1],
            )
        )
    return rows


def force_metrics_frame(
    records: Records,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """`force_metrics(...).to_frame()`."""
    return force_metrics(records, n_boot=n_boot, seed=seed, confidence=confidence).to_frame()
