"""Judges compared metric by metric on the items both have, with shared resamples.

Input: for each metric, each judge's `PairedStatistic` over the metric's item universe,
the items where the judge has an outcome, and (for 0/1 outcomes) the per-item outcomes
McNemar's test reads. Output: `PairedComparison` rows (as `paired_compare` makes them:
`diff = value_a - value_b`, percentile CI of the resampled differences, exact McNemar
or bootstrap p, Holm within each family: the rows whose metrics share a universe, i.e.
are taken on the same items) and each judge's own estimate with its CI.

One draw of the metric's items serves every evaluation over them: each judge's own
estimate on the items it has, each pair on the items both have (in a resample: the
drawn items in that subset). So the CI of a difference and the judges' own CIs come from
the very same resampled items. Metrics are identified by position: two may share a name
(balanced accuracy of item judges and of claim verifiers) but never a judge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

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
from assay.metrics._paired_draws import Cell, resample_statistics
from assay.metrics._paired_stats import Floats, PairedStatistic
from assay.metrics._pooling import BootSettings
from assay.metrics._resampling import percentile_interval


@dataclass(frozen=True)
class MetricOutcomes:
    """One metric's inputs: per judge, its statistic over the universe and where it is
    defined; `binary` (per judge, 0/1 per item) makes the test McNemar's."""

    name: str
    statistics: Mapping[str, PairedStatistic]
    defined: Mapping[str, NDArray[np.bool_]]
    binary: Mapping[str, Floats] | None = None
    universe: str = "item"


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
    """Paired comparisons (Holm-adjusted per family), own estimates, what was skipped,
    and the families: universe -> number of comparisons Holm adjusted together."""

    model_config = ConfigDict(frozen=True)

    comparisons: list[PairedComparison]
    estimates: list[JudgeEstimate]
    notes: list[str]
    families: dict[str, int] = {}


_Evaluation = tuple[int, str, bytes]
"""(metric position, judge, mask): one statistic on one item subset."""


class _Plan:
    """Every evaluation needed, drawn together per item count (one draw for all)."""

    def __init__(self, metrics: Sequence[MetricOutcomes]) -> None:
        self.metrics = metrics
        self.masks: dict[bytes, NDArray[np.bool_]] = {}
        self.needed: dict[_Evaluation, None] = {}
        self.points: dict[_Evaluation, float] = {}
        self.values: dict[_Evaluation, Floats] = {}

    def need(self, metric: int, judges: Sequence[str], mask: NDArray[np.bool_]) -> bytes:
        key = mask.tobytes()
        self.masks.setdefault(key, mask)
        for judge in judges:
            self.needed[(metric, judge, key)] = None
        return key

    def run(self, boot: BootSettings) -> None:
        by_size: dict[int, dict[_Evaluation, Cell]] = {}
        for e in self.needed:
            mask = self.masks[e[2]]
            if mask.any():
                cell = (self.metrics[e[0]].statistics[e[1]], mask)
                by_size.setdefault(len(mask), {})[e] = cell
        for n, cells in by_size.items():
            points, values = resample_statistics(cells, n, boot)
            self.points.update(points)
            self.values.update(values)


def _finite(value: float) -> float | None:
    return value if np.isfinite(value) else None


def _estimate(plan: _Plan, e: _Evaluation, confidence: float) -> JudgeEstimate:
    m, judge, n = plan.metrics[e[0]], e[1], int(plan.masks[e[2]].sum())
    if n == 0:
        return JudgeEstimate(metric=m.name, judge=judge, n=0, value=None, ci_low=None, ci_high=None)
    interval = percentile_interval(plan.values[e], confidence)
    return JudgeEstimate(
        metric=m.name,
        judge=judge,
        n=n,
        value=_finite(plan.points[e]),
        ci_low=None if interval is None else interval[0],
        ci_high=None if interval is None else interval[1],
    )


def _comparison(
    plan: _Plan, metric: int, a: str, b: str, key: bytes, confidence: float
) -> PairedComparison | str:
    """The row for one pair of judges, or why there is none."""
    m, mask = plan.metrics[metric], plan.masks[key]
    what = f"{m.name}: {a} vs {b}"
    if not mask.any():
        return f"{what} not compared: no {m.universe} has an outcome for both"
    value_a, value_b = plan.points[(metric, a, key)], plan.points[(metric, b, key)]
    if not (np.isfinite(value_a) and np.isfinite(value_b)):
        return f"{what} not compared: the statistic is undefined on their common {m.universe}s"
    diffs = plan.values[(metric, a, key)] - plan.values[(metric, b, key)]
    diffs = diffs[np.isfinite(diffs)]
    interval = percentile_interval(diffs, confidence)
    if interval is None:
        return f"{what} not compared: undefined in every resample"
    test: PairedTest = "paired-bootstrap"
    p_value = bootstrap_p_value(diffs)
    if m.binary is not None:
        test = "mcnemar-exact"
        p_value = mcnemar_exact(m.binary[a][mask], m.binary[b][mask])
    return PairedComparison(
        metric=m.name, judge_a=a, judge_b=b, n=int(mask.sum()),
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
    both have, and every judge's own estimate; Holm within each family of comparisons
    on the same items (the metrics' `universe`): comparisons on unrelated items (pairs
    of one run, responses of another) answer separate questions."""
    boot = BootSettings(n_boot=n_boot, seed=seed, confidence=confidence)
    if boot.n_boot == 0:
        raise ValueError("paired comparisons need n_boot >= 1")
    plan, notes = _Plan(metrics), []
    own: list[_Evaluation] = []
    pairs: list[tuple[int, str, str, bytes]] = []
    for i, m in enumerate(metrics):
        for j in m.statistics:
            own.append((i, j, plan.need(i, [j], m.defined[j])))
        metric_pairs, note = _metric_pairs(m, reference)
        notes += [note] if note else []
        for a, b in metric_pairs:
            pairs.append((i, a, b, plan.need(i, [a, b], m.defined[a] & m.defined[b])))
    plan.run(boot)
    rows: list[tuple[str, PairedComparison]] = []
    for i, a, b, key in pairs:
        row = _comparison(plan, i, a, b, key, confidence)
        if isinstance(row, str):
            notes.append(row)
        else:
            rows.append((metrics[i].universe, row))
    estimates = [_estimate(plan, e, confidence) for e in own]
    comparisons, families = _holm_per_family(rows)
    return StatisticsComparison(
        comparisons=comparisons, estimates=estimates, notes=notes, families=families
    )


def _holm_per_family(
    rows: Sequence[tuple[str, PairedComparison]],
) -> tuple[list[PairedComparison], dict[str, int]]:
    """The rows (in order) with `p_holm` adjusted within their family, and each
    family's size."""
    families: dict[str, list[int]] = {}
    for position, (family, _) in enumerate(rows):
        families.setdefault(family, []).append(position)
    adjusted: dict[int, float] = {}
    for positions in families.values():
        p = holm([rows[k][1].p_value for k in positions])
        adjusted.update(zip(positions, p, strict=True))
    out = [r.model_copy(update={"p_holm": adjusted[k]}) for k, (_, r) in enumerate(rows)]
    return out, {family: len(positions) for family, positions in families.items()}


__all__ = ["JudgeEstimate", "MetricOutcomes", "StatisticsComparison", "compare_statistics"]
