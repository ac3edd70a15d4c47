"""Threshold selection and sweeps of the evidence gate, on the shared
tuning engine.

Default selection (the paper's grid and objective): `tau_min` in {0.05 … 0.20} × `tau`
in {0.20 … 0.40} with `tau > tau_min` (19 pairs), maximising abstention accuracy;
ties go to fewer false negatives (answers given to `no_evidence` questions: fail
closed), then larger `tau`, then larger `tau_min` [assay default]. Each gate record is
read once; every grid point only re-applies the decision rule to the recorded scores.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from pydantic import BaseModel, ConfigDict

from assay.errors import SpecError
from assay.policies.engine._numbers import Ratio, decimal_grid, decimal_text, threshold
from assay.policies.engine._tuning import Objective, TieBreak, TuneResult, TuningSpec, tune
from assay.policies.evidence_gate._config import EvidenceGateConfig, GateQuestion, ordered_questions
from assay.policies.evidence_gate._decide import PoolScores, apply_rule, pool_scores
from assay.policies.evidence_gate._metrics import GateRow, metric_values
from assay.policies.evidence_gate._records import gate_confidence

TUNABLE = ("tau", "tau_min")
TAU_MIN_GRID = ["0.05", "0.10", "0.15", "0.20"]
TAU_GRID = decimal_grid("0.20", "0.40", "0.05")
CURVE_GRID = decimal_grid("0.00", "1.00", "0.01")


def default_tuning_spec() -> TuningSpec:
    """docs/reference/policies/evidence-gate.md#tuning: 19 (tau, tau_min) pairs, max accuracy, then
    min false negatives, then the larger tau, then the larger tau_min."""
    return TuningSpec(
        grid={"tau": list(TAU_GRID), "tau_min": list(TAU_MIN_GRID)},
        where=["tau > tau_min"],
        objectives=[
            Objective(metric="abstention_accuracy", direction="max"),
            Objective(metric="false_negative_rate", direction="min"),
        ],
        tie_break=[TieBreak(param="tau", order="desc"), TieBreak(param="tau_min", order="desc")],
    )


class Prepared:
    """Questions in canonical order with their pool scores, read once for many points."""

    def __init__(self, questions: Sequence[GateQuestion], config: EvidenceGateConfig) -> None:
        self.config = config
        self.questions = ordered_questions(questions)
        self.scores: list[PoolScores] = [pool_scores(q.record, config) for q in self.questions]

    def rows(self, tau: str, tau_min: str) -> list[GateRow]:
        """What the metrics read at these thresholds (the decision rule, nothing else)."""
        high, low = float(tau), float(tau_min)
        rows = []
        for question, scores in zip(self.questions, self.scores, strict=True):
            result = apply_rule(scores, high, low)
            confidence = gate_confidence(scores.s_initial, scores.s_expanded)
            rows.append(
                GateRow(
                    result.outcome,
                    question.label,
                    question.support,
                    question.citation_quality,
                    confidence,
                )
            )
        return rows

    def metrics(self, tau: str, tau_min: str) -> dict[str, Ratio]:
        return metric_values(self.rows(tau, tau_min), self.config.alpha_fraction)


def _check_grid(spec: TuningSpec) -> None:
    for param, values in spec.grid.items():
        if param not in TUNABLE:
            raise SpecError(
                f"cannot tune {param!r}; the evidence gate tunes {', '.join(TUNABLE)}",
                field=f"grid.{param}",
            )
        for value in values:
            threshold(value, field=f"grid.{param}")


def tune_gate(
    questions: Sequence[GateQuestion],
    config: EvidenceGateConfig,
    spec: TuningSpec | None = None,
) -> TuneResult:
    """Evaluate every grid candidate on these questions (a validation split, never the
    test split) and select one; parameters the grid omits keep `config`'s values."""
    spec = spec or default_tuning_spec()
    _check_grid(spec)
    prepared = Prepared(questions, config)

    def evaluate(params: dict[str, str]) -> dict[str, Ratio]:
        return prepared.metrics(
            params.get("tau", config.tau), params.get("tau_min", config.tau_min)
        )

    return tune(spec, evaluate)


def tuned_config(config: EvidenceGateConfig, result: TuneResult) -> EvidenceGateConfig | None:
    """`config` at the selected thresholds; None when nothing was feasible."""
    if result.selected is None:
        return None
    return config.with_thresholds(
        result.selected.get("tau", config.tau), result.selected.get("tau_min", config.tau_min)
    )


class CurvePoint(BaseModel):
    """One point of a sweep: the thresholds and what the gate does there."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tau: str
    tau_min: str
    n_passed: int
    coverage: Ratio
    selective_risk_label: Ratio
    selective_risk_support: Ratio


def sweep_gate(
    questions: Sequence[GateQuestion],
    config: EvidenceGateConfig,
    *,
    param: str = "tau",
    values: Sequence[str] | None = None,
) -> list[CurvePoint]:
    """Vary `tau` (or `tau_min`) over `values` (default 0.00 to 1.00 step 0.01), the other
    threshold fixed at `config`'s; points violating `tau > tau_min` are skipped."""
    if param not in TUNABLE:
        raise SpecError(f"cannot sweep {param!r}; sweep tau or tau_min", field="param")
    prepared = Prepared(questions, config)
    points = []
    for value in values if values is not None else CURVE_GRID:
        threshold(value, field=param)
        tau = value if param == "tau" else config.tau
        tau_min = value if param == "tau_min" else config.tau_min
        if not Fraction(tau) > Fraction(tau_min):
            continue
        rows = prepared.rows(tau, tau_min)
        metrics = metric_values(rows, config.alpha_fraction)
        points.append(
            CurvePoint(
                tau=decimal_text(tau),
                tau_min=decimal_text(tau_min),
                n_passed=metrics["coverage"].numerator,
                coverage=metrics["coverage"],
                selective_risk_label=metrics["selective_risk_label"],
                selective_risk_support=metrics["selective_risk_support"],
            )
        )
    return points


def risk_coverage_curve(
    questions: Sequence[GateQuestion], config: EvidenceGateConfig
) -> list[CurvePoint]:
    """The risk-coverage sweep: tau from 0.00 to 1.00 step 0.01 (values above `tau_min`), `tau_min`
    fixed."""
    return sweep_gate(questions, config, param="tau")


__all__ = [
    "CURVE_GRID",
    "TAU_GRID",
    "TAU_MIN_GRID",
    "CurvePoint",
    "Prepared",
    "default_tuning_spec",
    "risk_coverage_curve",
    "sweep_gate",
    "tune_gate",
    "tuned_config",
]
