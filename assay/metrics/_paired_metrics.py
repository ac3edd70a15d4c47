"""Judges compared metric by metric on the items both have, with shared resamples.

Input: for each metric, each judge's `PairedStatistic` over the metric's item universe,
the items where the judge has an outcome, and (for 0/1 outcomes) the per-item outcomes
McNemar's test reads. Output: `PairedComparison` rows (as `paired_compare` makes them:
`diff = value_a - value_b`, percentile CI of the resampled differences, exact McNemar
or bootstrap p, Holm across every row) and each judge's own estimate with its CI.

Evaluations on the same item set share one resampling: all metrics and judges whose
items coincide (the usual case: every judge on every item) are drawn together, so the CI
of a difference and the judges' own CIs come from the very same resampled items.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict

from assay.metrics._paired import (
    PairedComparison,
    PairedTest,
    _pairs,
    bootstrap_p_value,
    holm,
    mcnemar_exact,
)
from assay.metrics._paired_stats import Floats, PairedStatistic, resample_statistics
from assay.metrics._pooling import BootSettings
from assay.metrics._resampling import percentile_interval

_Cell = tuple[int, str]
"""(position of the metric in the input, judge): two metrics may share a name (balanced
accuracy of item judges and of claim verifiers) but never a judge."""


@dataclass(frozen=True)
class MetricOutcomes:
    """One metric's inputs: per judge, its statistic over the universe and where it is
    defined; `binary` (per judge, 0/1 per item) makes the test McNemar's."""

    name: str
    statistics: Mapping[str, PairedStatistic]
    defined: Mapping[str, NDArray[np.bool_]]
    binary: Mapping[str, Floats] | None = None
    universe: str = "items"


class JudgeEstimate(BaseModel):
    """One judge's value of one metric over its own items, with a percentile CI."""

    model_config = ConfigDict(frozen=True)

    metric: str
    judge: str
    n: int
    value: float | None
    ci_low: float | None
    ci_high: float | None


class StatisticsComparison(BaseModel):
    """Paired comparisons (Holm-adjusted together), own estimates, and what was skipped."""

    model_config = ConfigDict(frozen=True)

    comparisons: list[PairedComparison]
    estimates: list[JudgeEstimate]
    notes: list[str]


@dataclass
class _Group:
    """Evaluations that share one item set, hence one resampling."""

    mask: NDArray[np.bool_]
    cells: set[_Cell] = field(default_factory=set)
    points: dict[_Cell, float] = field(default_factory=dict)
    values: dict[_Cell, Floats] = field(default_factory=dict)


def _finite(value: float) -> float | None:
    return value if np.isfinite(value) else None


class _Plan:
    """Which (metric, judge) cells each item set needs."""

    def __init__(self) -> None:
        self.groups: dict[bytes, _Group] = {}

    def need(self, mask: NDArray[np.bool_], cells: Sequence[_Cell]) -> bytes:
        key = mask.tobytes()
        self.groups.setdefault(key, _Group(mask)).cells.update(cells)
        return key

    def run(self, metrics: Sequence[MetricOutcomes], boot: BootSettings) -> None:
        for group in self.groups.values():
            if not group.mask.any():
                continue
            stats = {(i, j): metrics[i].statistics[j].restrict(group.mask) for i, j in group.cells}
            group.points, group.values = resample_statistics(stats, int(group.mask.sum()), boot)


def _estimate(m: MetricOutcomes, cell: _Cell, group: _Group, confidence: float) -> JudgeEstimate:
    n, judge = int(group.mask.sum()), cell[1]
    if n == 0:
        return JudgeEstimate(metric=m.name, judge=judge, n=0, value=None, ci_low=None, ci_high=None)
    interval = percentile_interval(group.values[cell], confidence)
    return JudgeEstimate(
        metric=m.name,
        judge=judge,
        n=n,
        value=_finite(group.points[cell]),
        ci_low=None if interval is None else interval[0],
        ci_high=None if interval is None else interval[1],
    )


def _comparison(
    m: MetricOutcomes, cells: tuple[_Cell, _Cell], group: _Group, confidence: float
) -> PairedComparison | str:
    """The row for one pair of judges, or why there is none."""
    (_, a), (_, b) = cells
    what = f"{m.name}: {a} vs {b}"
    if not group.mask.any():
        return f"{what} not compared: no {m.universe} has an outcome for both"
    value_a, value_b = group.points[cells[0]], group.points[cells[1]]
    if not (np.isfinite(value_a) and np.isfinite(value_b)):
        return f"{what} not compared: the statistic is undefined on their common {m.universe}"
    diffs = group.values[cells[0]] - group.values[cells[1]]
    diffs = diffs[np.isfinite(diffs)]
    interval = percentile_interval(diffs, confidence)
    if interval is None:
        return f"{what} not compared: undefined in every resample"
    test: PairedTest = "paired-bootstrap"
    p_value = bootstrap_p_value(diffs)
    if m.binary is not None:
        test = "mcnemar-exact"
        p_value = mcnemar_exact(m.binary[a][group.mask], m.binary[b][group.mask])
    return PairedComparison(
        metric=m.name, judge_a=a, judge_b=b, n=int(group.mask.sum()),
        value_a=value_a, value_b=value_b, diff=value_a - value_b,
        ci_low=interval[0], ci_high=interval[1], test=test, p_value=p_value, p_holm=p_value,
    )  # fmt: skip


def _metric_pairs(
    m: MetricOutcomes, reference: str | None
) -> tuple[list[tuple[str, str]], str | None]:
    judges = list(m.statistics)
    if reference is not None and reference not in judges:
        if len(judges) < 2:
            return [], None
        return [], f"{m.name}: not compared against {reference}, which has no {m.name}"
    return _pairs(judges, reference), None


def compare_statistics(
    metrics: Sequence[MetricOutcomes],
    *,
    reference: str | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> StatisticsComparison:
    """Each metric's judges compared pairwise (or each against `reference`) on the items
    both have, and every judge's own estimate; Holm across all comparisons."""
    boot = BootSettings(n_boot=n_boot, seed=seed, confidence=confidence)
    if boot.n_boot == 0:
        raise ValueError("paired comparisons need n_boot >= 1")
    plan, notes = _Plan(), []
    own: dict[_Cell, bytes] = {}
    pairs: list[tuple[int, tuple[_Cell, _Cell], bytes]] = []
    for i, m in enumerate(metrics):
        for j in m.statistics:
            own[(i, j)] = plan.need(m.defined[j], [(i, j)])
        metric_pairs, note = _metric_pairs(m, reference)
        notes += [note] if note else []
        for a, b in metric_pairs:
            cells = ((i, a), (i, b))
            pairs.append((i, cells, plan.need(m.defined[a] & m.defined[b], cells)))
    plan.run(metrics, boot)
    rows: list[PairedComparison] = []
    for position, compared, key in pairs:
        row = _comparison(metrics[position], compared, plan.groups[key], confidence)
        if isinstance(row, str):
            notes.append(row)
        else:
            rows.append(row)
    adjusted = iter(holm([r.p_value for r in rows]))
    estimates = [
        _estimate(metrics[cell[0]], cell, plan.groups[key], confidence) for cell, key in own.items()
    ]
    return StatisticsComparison(
        comparisons=[r.model_copy(update={"p_holm": next(adjusted)}) for r in rows],
        estimates=estimates,
        notes=notes,
    )


__all__ = ["JudgeEstimate", "MetricOutcomes", "StatisticsComparison", "compare_statistics"]
