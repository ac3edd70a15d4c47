"""ForceBench metrics: monotonicity violation rate (MVR) and force sensitivity (FS).

For one judge over N pairs, with `s_cal`/`s_raised` the scores of a pair's members::

    MVR = (1/N) * sum(1[s_raised >= s_cal])     # a tie is a violation
    FS  = (1/N) * sum(s_cal - s_raised)

A pair with a member that is missing, has no score, or ended in any status but `ok` is
*failed*: it counts as a violation with margin 0, and stays in N. The pair universe is
every `(dataset, pair_id)` seen in any record, so N is the same for every judge.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import Field

from assay.core.pairs import Axis
from assay.metrics._force_pairs import Records, judge_columns, judged_pairs, sorted_order
from assay.metrics._metric_rows import BootstrapFields, JudgeRow, RowsReport, estimate_fields
from assay.metrics._pooling import (
    BootSettings,
    mean_intervals,
    pooled_and_per_dataset,
    stream_seed,
)
from assay.metrics._record_fields import ProducerMeta, is_missing

if TYPE_CHECKING:
    import pandas as pd

GroupBy = Literal["overall", "axis", "severity"]

OVERALL_GROUP = "all"
UNRATED = "unrated"
"""Severity group of pairs whose severity is None."""
UNKNOWN_AXIS = "unknown"
"""Axis group of pairs whose axis is None in every record."""


class ForceRow(JudgeRow):
    """MVR and FS, with bootstrap CIs, for one judge on one group of pairs."""

    group_by: GroupBy = Field(description="What the group splits by.")
    group: str = Field(description="'all' for overall; axis value; '1'..'3' or 'unrated'.")
    n: int = Field(description="Pairs in the group, failed ones included.")
    n_failed: int = Field(description="Pairs with a member not ok (counted as violations).")
    mvr: float = Field(
        description="Monotonicity violation rate: share of pairs with s_raised >= s_cal."
    )
    mvr_lo: float | None = Field(description="None when no CI was asked for (n_boot=0).")
    mvr_hi: float | None = Field(description="Upper CI bound of mvr.")
    fs: float = Field(description="Force sensitivity: mean of s_cal - s_raised.")
    fs_lo: float | None = Field(description="Lower CI bound of fs.")
    fs_hi: float | None = Field(description="Upper CI bound of fs.")


class ForceReport(BootstrapFields, RowsReport[ForceRow]):
    """All ForceBench metric rows of a run, plus the bootstrap settings used."""


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
    boot = BootSettings(n_boot, seed, confidence)
    judged = judged_pairs(records)
    datasets, order = sorted_order(judged)
    labels = _Labels(
        datasets=datasets,
        axes=np.array([_axis_group(judged.axes[i]) for i in order], dtype=object),
        severities=np.array([_severity_group(judged.severities[i]) for i in order], dtype=object),
    )
    rows: list[ForceRow] = []
    for jid in sorted(judged.judges):
        columns = judge_columns(judged, judged.outcomes[jid], order)
        whole = _JudgePairs(
            values=np.column_stack(
                [columns["violation"].astype(np.float64), columns["margin"].astype(np.float64)]
            ),
            failed=columns["failed"],
            labels=labels,
        )
        for name, part in pooled_and_per_dataset(whole, labels.datasets.tolist(), _of_dataset):
            rows += _judge_rows(jid, judged.judges[jid], part, name, boot)
    return ForceReport(rows=rows, **asdict(boot))


@dataclass(frozen=True)
class _Labels:
    """Per pair, in sorted order: its dataset, axis group and severity group."""

    datasets: NDArray[np.object_]
    axes: NDArray[np.object_]
    severities: NDArray[np.object_]

    def __getitem__(self, mask: NDArray[np.bool_]) -> _Labels:
        return _Labels(self.datasets[mask], self.axes[mask], self.severities[mask])


@dataclass(frozen=True)
class _JudgePairs:
    """One judge's pairs, in sorted order: (violation, margin) rows, failed, labels."""

    values: NDArray[np.float64]
    failed: NDArray[np.bool_]
    labels: _Labels


def _of_dataset(pairs: _JudgePairs, dataset: str) -> _JudgePairs:
    mask = pairs.labels.datasets == dataset
    return _JudgePairs(pairs.values[mask], pairs.failed[mask], pairs.labels[mask])


def _axis_group(axis: object) -> str:
    return UNKNOWN_AXIS if is_missing(axis) else str(axis)


def _severity_group(severity: object) -> str:
    return UNRATED if is_missing(severity) else str(int(severity))  # type: ignore[call-overload]


def _groups(labels: _Labels) -> list[tuple[GroupBy, str, NDArray[np.bool_]]]:
    axes, sevs = labels.axes, labels.severities
    groups: list[tuple[GroupBy, str, NDArray[np.bool_]]] = [
        ("overall", OVERALL_GROUP, np.ones(len(axes), dtype=bool))
    ]
    groups += [("axis", a, axes == a) for a in _axis_order(axes.tolist())]
    groups += [("severity", s, sevs == s) for s in _severity_order(sevs.tolist())]
    return groups


def _judge_rows(
    jid: str, meta: ProducerMeta, pairs: _JudgePairs, dataset: str, boot: BootSettings
) -> list[ForceRow]:
    """Every group's row for one judge on one dataset (or all of them pooled)."""
    values, failed = pairs.values, pairs.failed
    rows: list[ForceRow] = []
    for group_by, group, mask in _groups(pairs.labels):
        v = values[mask]
        if v.shape[0] == 0:
            continue
        point = v.mean(axis=0)
        stream = stream_seed(boot.seed, jid, group_by, group, dataset)
        mvr_ci, fs_ci = mean_intervals(v, boot, stream)
        rows.append(
            ForceRow(
                judge_id=jid,
                **meta.row_fields(),
                dataset=dataset,
                group_by=group_by,
                group=group,
                n=int(v.shape[0]),
                n_failed=int(failed[mask].sum()),
                **estimate_fields("mvr", float(point[0]), mvr_ci),
                **estimate_fields("fs", float(point[1]), fs_ci),
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
