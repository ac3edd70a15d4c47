"""Tuning and sweeps of the claim-selective policy on the shared engine.

Responses are prepared once (FC checks, filters, pooling do not depend on thresholds);
each candidate only re-runs the status rule and the action. Every candidate's
configuration is validated before anything is computed, and the certificate
standard stays fixed while thresholds move.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from assay.errors import SpecError
from assay.policies.claim_selective._config import ClaimSelectiveConfig, with_params
from assay.policies.claim_selective._decide import (
    PreparedResponse,
    ResponseVerdict,
    judge_response,
    prepare_response,
    unique_sorted,
)
from assay.policies.claim_selective._inputs import ResponseInput
from assay.policies.claim_selective._metrics import (
    ClaimCounts,
    claim_metrics,
    response_counts,
    total,
)
from assay.policies.claim_selective._records import EXPRESSED_STATUSES
from assay.policies.engine._numbers import Ratio, decimal_grid
from assay.policies.engine._tune_record import tuning_provenance
from assay.policies.engine._tuning import (
    Constraint,
    Objective,
    TieBreak,
    TuneResult,
    TuningSpec,
    enumerate_grid,
    tune,
)

INFEASIBLE_EXIT_CODE = 3
SWEEP_METRICS = (
    "critical_coverage",
    "critical_risk",
    "pau",
    "pau_precision",
    "uccr_gold",
    "uccr_cert",
)


def default_tuning_spec() -> TuningSpec:
    """docs/reference/policies/claim-selective.md#tuning: 9 x 7 x 9 grid with condition_limited <=
    support, limitation 0.50 (420 candidates); uccr_cert == 0; max PAU, then action accuracy, then
    F1; ties to the most conservative thresholds."""
    return TuningSpec(
        grid={
            "support": decimal_grid("0.20", "0.60", "0.05"),
            "conflict": decimal_grid("0.40", "0.70", "0.05"),
            "condition_limited": decimal_grid("0.10", "0.50", "0.05"),
            "limitation": ["0.50"],
        },
        where=["condition_limited <= support"],
        constraints=[Constraint(metric="uccr_cert", op="==", value="0")],
        objectives=[
            Objective(metric="pau", direction="max"),
            Objective(metric="action_accuracy", direction="max"),
            Objective(metric="f1", direction="max"),
        ],
        tie_break=[
            TieBreak(param="support", order="desc"),
            TieBreak(param="condition_limited", order="desc"),
            TieBreak(param="conflict", order="asc"),
            TieBreak(param="limitation", order="asc"),
        ],
    )


def verdict_counts(verdict: ResponseVerdict) -> ClaimCounts:
    """A verdict's counts (certificate validity under the config's standard)."""
    facts = [
        (
            c.status in EXPRESSED_STATUSES,
            c.prepared.claim.critical,
            c.prepared.claim.gold_usable,
            c.valid,
        )
        for c in verdict.claims
    ]
    return response_counts(facts, verdict.action, verdict.response.gold_action)


def metrics_under(
    config: ClaimSelectiveConfig, prepared: Sequence[PreparedResponse]
) -> dict[str, Ratio]:
    """Every metric of prepared responses decided under `config`."""
    return claim_metrics(total(verdict_counts(judge_response(p, config)) for p in prepared))


class TuneOutcome(BaseModel):
    """The engine's result, the chosen configuration (with a `tuned` provenance block),
    and what the command line does with it: exit 0, or exit 3 with one line."""

    model_config = ConfigDict(frozen=True)

    result: TuneResult
    selected_config: dict[str, Any] | None
    exit_code: Literal[0, 3]
    message: str | None


def tune_policy(
    config: ClaimSelectiveConfig,
    responses: Iterable[ResponseInput],
    spec: TuningSpec | None = None,
    *,
    split: str | None = None,
) -> TuneOutcome:
    """Select thresholds for `config` on `responses` (those of `split` when given)."""
    spec = spec or default_tuning_spec()
    rows = [r for r in unique_sorted(responses) if split is None or r.split == split]
    configs = {tuple(sorted(p.items())): with_params(config, p) for p in enumerate_grid(spec)}
    prepared = [prepare_response(r) for r in rows]
    result = tune(spec, lambda p: metrics_under(configs[tuple(sorted(p.items()))], prepared))
    if result.selected is None:
        line = f"tuning infeasible: {result.best_infeasible or 'no candidate'}"
        return TuneOutcome(result=result, selected_config=None, exit_code=3, message=line)
    chosen = with_params(config, result.selected)
    selected = chosen.model_copy(update={"tuned": tuning_provenance(spec, result, split)})
    return TuneOutcome(
        result=result, selected_config=selected.model_dump(mode="json"), exit_code=0, message=None
    )


class SweepPoint(BaseModel):
    model_config = ConfigDict(frozen=True)

    params: dict[str, str]
    metrics: dict[str, Ratio]


def parse_tie(text: str) -> tuple[str, str, Decimal]:
    """`Q=P-0.10` -> (Q, P, -0.10): parameter Q follows P at a fixed offset."""
    target, _, rule = text.partition("=")
    for sign in ("-", "+"):
        source, found, offset = rule.partition(sign)
        if found and source.strip() and offset.strip():
            try:
                delta = Decimal(offset.strip())
            except ArithmeticError:
                break
            if not delta.is_finite() or abs(delta) > 1:  # thresholds are probabilities
                raise SpecError(f"{text!r}: the offset must lie in [-1, 1]", field="tie")
            return target.strip(), source.strip(), delta if sign == "+" else -delta
    raise SpecError(f"cannot read {text!r}; write e.g. condition_limited=support-0.10", field="tie")


def _tied(value: str, offset: Decimal) -> str:
    result = Decimal(value) + offset
    return str(min(max(result, Decimal(0)), Decimal(1)))


def sweep(
    config: ClaimSelectiveConfig,
    responses: Iterable[ResponseInput],
    *,
    param: str = "support",
    start: str = "0.10",
    stop: str = "0.90",
    step: str = "0.05",
    ties: Sequence[str] = ("condition_limited=support-0.10",),
) -> list[SweepPoint]:
    """The risk–coverage curve: `param` over a decimal grid, tied parameters
    following it (floored at 0), every other threshold fixed."""
    rules = [parse_tie(t) for t in ties]
    points = []
    for value in decimal_grid(start, stop, step):
        params = {param: value}
        params |= {target: _tied(params[source], d) for target, source, d in rules}
        points.append(params)
    configs = [with_params(config, p) for p in points]
    prepared = [prepare_response(r) for r in unique_sorted(responses)]
    return [
        SweepPoint(
            params=p,
            metrics={k: v for k, v in metrics_under(c, prepared).items() if k in SWEEP_METRICS},
        )
        for p, c in zip(points, configs, strict=True)
    ]


def sweep_point(config: ClaimSelectiveConfig, responses: Iterable[ResponseInput]) -> SweepPoint:
    """A fixed policy as a single point of the curve."""
    prepared = [prepare_response(r) for r in unique_sorted(responses)]
    metrics = metrics_under(config, prepared)
    return SweepPoint(params={}, metrics={k: metrics[k] for k in SWEEP_METRICS})


__all__ = [
    "INFEASIBLE_EXIT_CODE",
    "SWEEP_METRICS",
    "SweepPoint",
    "TuneOutcome",
    "default_tuning_spec",
    "metrics_under",
    "parse_tie",
    "sweep",
    "sweep_point",
    "tune_policy",
    "verdict_counts",
]
