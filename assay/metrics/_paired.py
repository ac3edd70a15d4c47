"""Paired comparison of judges scored on the same items.

Input is one per-item outcome per (item, judge): correct 0/1, violation 0/1, a score or
an FS margin. Every pair of judges is compared on the items both have (the intersection,
reported as `n`); `diff = value_a - value_b` (with a `reference`, the reference is
`judge_b`, so `diff` is the change against it).

- CI of `diff`: percentile bootstrap with items resampled *jointly*. The row draws are
  those of `bootstrap_mean_cis` for the seed and item count, and every judge of a group
  of pairs on the same items is evaluated on the very same draws, so the CI of a
  difference comes from the same resamples as each judge's own CI.
- Binary outcomes (all 0/1): exact McNemar test, the two-sided binomial test of the
  discordant pairs against 1/2 (`test="mcnemar-exact"`).
- Other outcomes: bootstrap p-value (`test="paired-bootstrap"`),
  `min(1, 2 * min(#{d* <= 0} + 1, #{d* >= 0} + 1) / (n_boot + 1))`: twice the share of
  resampled differences on the far side of 0, counted with the observed one so that it
  is never 0.
- `p_holm`: Holm's step-down adjustment across every comparison of the report.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field
from scipy.special import bdtr

from assay.metrics._metric_rows import BootstrapFields, RowsReport
from assay.metrics._pooling import BootSettings
from assay.metrics._resampling import percentile_interval, resampled_means

PairedTest = Literal["mcnemar-exact", "paired-bootstrap"]


class PairedComparison(BaseModel):
    """One metric compared between two judges on the items both were scored on."""

    model_config = ConfigDict(frozen=True)

    metric: str
    judge_a: str
    judge_b: str = Field(description="The reference, when comparing against one.")
    n: int = Field(description="Paired items: those with an outcome for both judges.")
    value_a: float
    value_b: float
    diff: float = Field(description="value_a - value_b.")
    ci_low: float
    ci_high: float
    test: PairedTest
    p_value: float
    p_holm: float = Field(description="Holm-adjusted across the report's comparisons.")


class PairedReport(BootstrapFields, RowsReport[PairedComparison]):
    """Every pairwise comparison asked for, plus the bootstrap settings used."""


def outcome_matrix(
    frame: pd.DataFrame, *, item: str = "item_id", judge: str = "judge", value: str = "value"
) -> pd.DataFrame:
    """Long `(item, judge, value)` rows -> an items x judges matrix (NaN where missing)."""
    missing = [c for c in (item, judge, value) if c not in frame.columns]
    if missing:
        raise ValueError(f"outcome frame lacks column(s) {missing}")
    dup = frame.duplicated([item, judge])
    if dup.any():
        first = frame.loc[dup, [item, judge]].iloc[0].tolist()
        raise ValueError(f"more than one outcome for (item, judge) = {tuple(first)}")
    wide = frame.pivot(index=item, columns=judge, values=value)
    wide.columns = [str(c) for c in wide.columns]
    return wide.astype(np.float64)


def _pairs(judges: Sequence[str], reference: str | None) -> list[tuple[str, str]]:
    if reference is None:
        return [(a, b) for i, a in enumerate(judges) for b in judges[i + 1 :]]
    if reference not in judges:
        raise ValueError(f"reference {reference!r} is not among the judges {list(judges)}")
    return [(j, reference) for j in judges if j != reference]


def mcnemar_exact(a: NDArray[np.float64], b: NDArray[np.float64]) -> float:
    """Exact McNemar p-value of paired 0/1 outcomes (1.0 with no discordant pair): twice
    the binomial tail of the rarer discordant count at p = 1/2, as statsmodels'
    `mcnemar(exact=True)` and scipy's `binomtest` give it (tests/test_paired_compare.py),
    with scipy.special's `bdtr` (importing scipy.stats costs a comparison ~0.8 s)."""
    only_a = int(np.sum((a == 1) & (b == 0)))
    only_b = int(np.sum((a == 0) & (b == 1)))
    if only_a + only_b == 0:
        return 1.0
    return min(1.0, 2.0 * float(bdtr(min(only_a, only_b), only_a + only_b, 0.5)))


def bootstrap_p_value(diffs: NDArray[np.float64]) -> float:
    """Two-sided bootstrap p-value of "diff = 0" from the resampled differences."""
    below = int(np.sum(diffs <= 0)) + 1
    above = int(np.sum(diffs >= 0)) + 1
    return min(1.0, 2.0 * min(below, above) / (diffs.size + 1))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values: the i-th smallest times (m - i), made monotone,
    capped at 1, as statsmodels' `multipletests(method="holm")` gives them
    (tests/test_paired_compare.py); importing statsmodels would cost ~1 s."""
    if not p_values:
        return []
    p = np.asarray(p_values, dtype=np.float64)
    order = np.argsort(p, kind="stable")
    scaled = p[order] * np.arange(p.size, 0, -1)
    adjusted = np.empty_like(p)
    adjusted[order] = np.minimum(np.maximum.accumulate(scaled), 1.0)
    return [float(v) for v in adjusted]


def _compare_group(
    metric: str,
    sample: pd.DataFrame,
    pairs: Sequence[tuple[str, str]],
    boot: BootSettings,
    is_binary: bool,
) -> list[PairedComparison]:
    """Comparisons of pairs that share one item set (`sample` has no NaN); `p_holm` is
    left unadjusted (the report adjusts across all of them)."""
    values = sample.to_numpy(dtype=np.float64)
    means = resampled_means(values, boot.n_boot, boot.seed)
    point = values.mean(axis=0)
    col = {name: j for j, name in enumerate(sample.columns)}
    rows: list[PairedComparison] = []
    for a, b in pairs:
        ia, ib = col[a], col[b]
        diffs = means[:, ia] - means[:, ib]
        interval = percentile_interval(diffs, boot.confidence)
        assert interval is not None  # every resampled mean of finite values is finite
        if is_binary:
            test: PairedTest = "mcnemar-exact"
            p_value = mcnemar_exact(values[:, ia], values[:, ib])
        else:
            test, p_value = "paired-bootstrap", bootstrap_p_value(diffs)
        rows.append(
            PairedComparison(
                metric=metric, judge_a=a, judge_b=b, n=values.shape[0],
                value_a=float(point[ia]), value_b=float(point[ib]),
                diff=float(point[ia] - point[ib]), ci_low=interval[0], ci_high=interval[1],
                test=test, p_value=p_value, p_holm=p_value,
            )
        )  # fmt: skip
    return rows


def _compare_metric(
    metric: str,
    matrix: pd.DataFrame,
    reference: str | None,
    boot: BootSettings,
    binary: bool | None,
) -> list[PairedComparison]:
    """Group the pairs by the items they share, then compare each group on one draw."""
    judges = [str(c) for c in matrix.columns]
    observed = matrix.to_numpy()[matrix.notna().to_numpy()]
    is_binary = bool(np.isin(observed, (0.0, 1.0)).all()) if binary is None else binary
    present = matrix.notna()
    groups: dict[bytes, list[tuple[str, str]]] = {}
    for a, b in _pairs(judges, reference):
        key = (present[a] & present[b]).to_numpy().tobytes()
        groups.setdefault(key, []).append((a, b))
    rows: list[PairedComparison] = []
    for key, pairs in groups.items():
        mask = np.frombuffer(key, dtype=np.bool_)
        if not mask.any():
            names = ", ".join(f"{a} vs {b}" for a, b in pairs)
            raise ValueError(f"{metric}: no item has an outcome for both of {names}")
        used = sorted({j for pair in pairs for j in pair}, key=judges.index)
        rows += _compare_group(metric, matrix.loc[mask, used], pairs, boot, is_binary)
    return rows


def paired_compare(
    outcomes: pd.DataFrame | Mapping[str, pd.DataFrame],
    *,
    metric: str = "value",
    reference: str | None = None,
    binary: bool | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> PairedReport:
    """Compare judges pairwise (or each against `reference`) on their shared items.

    `outcomes` is an items x judges matrix (one column a judge, NaN where a judge has no
    outcome), a long frame with `item_id`, `judge`, `value` columns, or a mapping
    metric name -> either of those (then `metric` is ignored). `binary=None` picks
    McNemar when a metric's outcomes are all 0/1. Holm runs across all comparisons.
    """
    boot = BootSettings(n_boot=n_boot, seed=seed, confidence=confidence)
    if boot.n_boot == 0:
        raise ValueError("paired comparisons need n_boot >= 1")
    per_metric = outcomes if isinstance(outcomes, Mapping) else {metric: outcomes}
    rows: list[PairedComparison] = []
    for name, frame in per_metric.items():
        rows += _compare_metric(name, _as_matrix(frame), reference, boot, binary)
    adjusted = holm([r.p_value for r in rows])
    return PairedReport(
        rows=[r.model_copy(update={"p_holm": p}) for r, p in zip(rows, adjusted, strict=True)],
        n_boot=n_boot,
        seed=seed,
        confidence=confidence,
    )


def _as_matrix(frame: pd.DataFrame) -> pd.DataFrame:
    """A wide matrix as given (numeric), or the pivot of a long `item_id/judge/value` frame."""
    if {"item_id", "judge", "value"} <= set(frame.columns):
        return outcome_matrix(frame)
    matrix = frame.astype(np.float64)
    matrix.columns = [str(c) for c in matrix.columns]
    if len(set(matrix.columns)) != len(matrix.columns):
        raise ValueError("judge names must be unique")
    if np.isinf(matrix.to_numpy()).any():
        raise ValueError("outcomes contain infinite values")
    return matrix
