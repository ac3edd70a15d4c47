"""Tuning and sweeps of the fail-closed thresholds on the shared engine.

Default tuning (the design: maximise verified-claim precision while keeping coverage
above a floor): `tau_entail` 0.50–0.95 step 0.05 x `tau_contradict` 0.50–0.90 step 0.10
(50 candidates); constraint `vc >= 0.50`; objectives max `vcp`, then max `vc`; ties to
the higher `tau_entail`, then the lower `tau_contradict` (the stricter policy first).
The sweep varies `tau_entail` from 0.50 to 0.99 step 0.01 for the (VC, VCP) curve.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from assay.policies.engine._numbers import Ratio, decimal_grid
from assay.policies.engine._tuning import (
    Constraint,
    Objective,
    TieBreak,
    TuneResult,
    TuningSpec,
    tune,
)
from assay.policies.fail_closed._config import FailClosedConfig
from assay.policies.fail_closed._decide import decide_response
from assay.policies.fail_closed._inputs import FCResponse
from assay.policies.fail_closed._metrics import fail_closed_metrics

SWEEP_METRICS = ("vc", "vcp", "verified_rate", "uer@strict", "catch_rate")


def default_tuning_spec() -> TuningSpec:
    return TuningSpec(
        grid={
            "tau_entail": decimal_grid("0.50", "0.95", "0.05"),
            "tau_contradict": decimal_grid("0.50", "0.90", "0.10"),
        },
        constraints=[Constraint(metric="vc", op=">=", value="0.50")],
        objectives=[Objective(metric="vcp", direction="max"), Objective(metric="vc")],
        tie_break=[
            TieBreak(param="tau_entail", order="desc"),
            TieBreak(param="tau_contradict", order="asc"),
        ],
    )


def evaluate(
    config: FailClosedConfig, responses: Sequence[FCResponse], params: dict[str, str]
) -> dict[str, Ratio]:
    """Every metric of the policy with `params` in place of its thresholds."""
    candidate = config.with_thresholds(**params)
    decisions = [decide_response(candidate, r) for r in responses]
    return fail_closed_metrics(decisions).metrics


def tune_fail_closed(
    config: FailClosedConfig,
    responses: Sequence[FCResponse],
    spec: TuningSpec | None = None,
) -> TuneResult:
    """The candidate table and the selected thresholds (None: nothing feasible)."""
    return tune(spec or default_tuning_spec(), lambda p: evaluate(config, responses, p))


class SweepPoint(BaseModel):
    tau_entail: str
    tau_contradict: str
    metrics: dict[str, Ratio]


def sweep_tau_entail(
    config: FailClosedConfig,
    responses: Sequence[FCResponse],
    *,
    start: str = "0.50",
    stop: str = "0.99",
    step: str = "0.01",
) -> list[SweepPoint]:
    """The (VC, VCP) curve over `tau_entail`, `tau_contradict` fixed."""
    points = []
    for value in decimal_grid(start, stop, step):
        metrics = evaluate(config, responses, {"tau_entail": value})
        points.append(
            SweepPoint(
                tau_entail=value,
                tau_contradict=config.tau_contradict,
                metrics={name: metrics[name] for name in SWEEP_METRICS},
            )
        )
    return points


__all__ = [
    "SWEEP_METRICS",
    "SweepPoint",
    "default_tuning_spec",
    "evaluate",
    "sweep_tau_entail",
    "tune_fail_closed",
]
