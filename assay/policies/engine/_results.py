"""What a policy kind hands back to the jobs that drive it (`assay policies tune`, `sweep`,
`compare`, report curves): plain, kind-agnostic models, so the jobs never need to know
which kind produced them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from assay.policies.engine._numbers import Ratio


class TuneRun(BaseModel):
    """One tuning over a run: what is written to `tune/` and what the CLI does."""

    model_config = ConfigDict(frozen=True)

    candidates: list[dict[str, Any]]
    result: dict[str, Any]
    selected: dict[str, str] | None
    selected_config: dict[str, Any] | None
    exit_code: int
    message: str | None


class SweepSettings(BaseModel):
    """What the user asked for; None means the kind's default (see `resolve`)."""

    model_config = ConfigDict(frozen=True)

    param: str | None = None
    start: str | None = None
    stop: str | None = None
    step: str | None = None
    ties: tuple[str, ...] | None = None


class Resolved(BaseModel):
    """The sweep actually run: every setting written out."""

    model_config = ConfigDict(frozen=True)

    param: str
    start: str
    stop: str
    step: str
    values: list[str]
    ties: tuple[str, ...]


class SweepResult(BaseModel):
    """sweep.jsonl's points, and sweep_summary.json's content (evidence_gate only)."""

    model_config = ConfigDict(frozen=True)

    param: str
    points: list[dict[str, Any]]
    shown: list[str] = Field(description="The metrics the CLI's table shows.")
    summary: dict[str, Any] | None = None


class Axes(BaseModel):
    """Which metric of a curve point is coverage (x) and which is risk (y)."""

    model_config = ConfigDict(frozen=True)

    x: str
    y: str
    x_label: str
    y_label: str
    y_complement: bool = False  # y = 1 − metric (fail_closed: 1 − VCP)


class MetricDelta(BaseModel):
    """`a - b` for one metric; `delta` is None when either side is null."""

    model_config = ConfigDict(frozen=True)

    metric: str
    a: Ratio
    b: Ratio
    delta: float | None
    ci: tuple[float, float] | None = None
    ci_method: str | None = None
    n_resamples_valid: int | None = None


def point_delta(a: Ratio, b: Ratio) -> float | None:
    """The exact difference of two ratios (fractions), as a float."""
    fa, fb = a.fraction, b.fraction
    if fa is None or fb is None:
        return None
    return float(fa - fb)


class SampleClaim(BaseModel):
    """One claim of a sample answer a report shows: its text, state and place in each
    rendering mode (fail_closed's strict and mixed)."""

    model_config = ConfigDict(frozen=True)

    claim_id: str
    text: str
    state: str  # VERIFIED | UNVERIFIED | BLOCKED
    reason: str
    strict: str  # shown | hidden
    mixed: str  # shown | collapsed | hidden


class Sample(BaseModel):
    """A decided answer as a report shows it, claim by claim."""

    model_config = ConfigDict(frozen=True)

    dataset: str
    answer_id: str
    claims: list[SampleClaim]


__all__ = [
    "Axes",
    "MetricDelta",
    "Resolved",
    "Sample",
    "SampleClaim",
    "SweepResult",
    "SweepSettings",
    "TuneRun",
    "point_delta",
]
