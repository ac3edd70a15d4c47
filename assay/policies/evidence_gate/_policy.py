"""The `evidence_gate` policy kind: a question-level answer/abstain gate on reranker scores (the
evidence-gate paper), registered in `POLICIES`; definitions:
docs/reference/policies/evidence-gate.md.

`EvidenceGatePolicy(config).decide(GateInputs(...))` returns one decision-log record per
question, ordered by (dataset, question_id); `metrics(decisions)` computes its metrics. The
object holds only its configuration: deciding twice, or in another input order, gives
the same records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Self

from assay.core.registry import POLICIES
from assay.policies.engine._apply_common import Chain, Outputs, Settings
from assay.policies.engine._canonical import canonical_sha256
from assay.policies.engine._kind import Links, PolicyKind
from assay.policies.engine._results import Axes, MetricDelta, Resolved, SweepResult, TuneRun
from assay.policies.engine._run_inputs import RunInputs
from assay.policies.engine._tuning import TuningSpec
from assay.policies.evidence_gate import _jobs
from assay.policies.evidence_gate._config import (
    KIND,
    VERSION,
    EvidenceGateConfig,
    GateInputs,
    ordered_questions,
)
from assay.policies.evidence_gate._decide import Identity, decide_question, pool_scores
from assay.policies.evidence_gate._load import chain_links
from assay.policies.evidence_gate._metrics import GateMetrics, gate_metrics
from assay.policies.evidence_gate._records import GateDecisionRecord


@POLICIES.register(KIND, description="question-level answer/abstain gate on reranker scores")
class EvidenceGatePolicy(PolicyKind):
    """Pass a question when its best reranked passage reaches `tau` (reassessing on the
    expanded pool when it is admissible but short), abstain otherwise, refuse when its
    gate record is missing, failed or invalid."""

    kind = KIND
    version = VERSION
    empty_note = "no questions to evaluate: every metric is null"
    chainable = True
    sweep_ranges = _jobs.RANGES
    tuned_keys = ("tau", "tau_min", "tuned")
    curve_axes = Axes(
        x="coverage", y="selective_risk_label", x_label="coverage",
        y_label="selective risk (label)",
    )  # fmt: skip
    compares = True
    config: EvidenceGateConfig
    REPORT_KEYS = ("tau", "tau_min", "alpha")

    def __init__(self, config: EvidenceGateConfig | Mapping[str, Any]) -> None:
        self.config = (
            config if isinstance(config, EvidenceGateConfig) else EvidenceGateConfig.parse(config)
        )

    @property
    def name(self) -> str:
        return self.config.name

    def describe(self) -> dict[str, Any]:
        """The resolved configuration with the kind's version (what `policy_sha256`
        hashes: changing any threshold or the version changes it)."""
        return {**self.config.model_dump(mode="json"), "version": self.version}

    @property
    def sha256(self) -> str:
        return canonical_sha256(self.describe())

    def identity(self, run_id: str | None = None) -> Identity:
        return Identity(self.name, self.version, self.sha256, run_id)

    def decide(self, inputs: GateInputs) -> list[GateDecisionRecord]:
        """One decision per question, in (dataset, question_id) order."""
        identity = self.identity(inputs.run_id)
        return [
            decide_question(q, pool_scores(q.record, self.config), self.config, identity)
            for q in ordered_questions(inputs.questions)
        ]

    def metrics(
        self,
        decisions: Sequence[GateDecisionRecord],
        *,
        resamples: int = 1000,
        random_state: int = 0,
        confidence: float = 0.95,
    ) -> GateMetrics:
        """The gate metrics (docs/reference/policies/evidence-gate.md#metrics) over these decisions,
        with this policy's `alpha`."""
        return gate_metrics(
            decisions,
            alpha=self.config.alpha,
            resamples=resamples,
            random_state=random_state,
            confidence=confidence,
        )

    # -- over a run directory (the `PolicyKind` hooks) ------------------------------------
    @classmethod
    def from_block(cls, block: Mapping[str, Any], file: str) -> Self:
        return cls(EvidenceGateConfig.parse(block, file=file))

    def apply(self, run: RunInputs, settings: Settings, chain: Chain | None, file: str) -> Outputs:
        return _jobs.apply(self, run, settings, chain, file)

    def records_read(self, run: RunInputs, chain: Chain | None) -> dict[str, str]:
        return _jobs.records_read(run)

    def tune(
        self, run: RunInputs, chain: Chain | None, grid: TuningSpec | None, file: str
    ) -> TuneRun:
        return _jobs.tune(self, run, chain, grid, file)

    def sweep(
        self, run: RunInputs, chain: Chain | None, resolved: Resolved, file: str
    ) -> SweepResult:
        return _jobs.sweep_points(self, run, resolved, file)

    def default_curve(
        self, run: RunInputs, inputs: dict[str, Any], links: Links | None
    ) -> list[dict[str, Any]]:
        return _jobs.default_curve(self, run, inputs)

    def paired_deltas(
        self,
        other: Self,
        run: RunInputs,
        sides: Sequence[tuple[dict[str, Any], Links | None]],
        metrics: Sequence[str] | None,
        bootstrap: dict[str, int],
    ) -> list[MetricDelta]:
        return _jobs.deltas(self, other, run, sides, metrics, bootstrap)

    def chain_links(self, run: RunInputs, gate_id: str) -> Links:
        return chain_links(self, run, gate_id)

    def chain(self, run: RunInputs, file: str) -> Chain:
        return _jobs.chain(self, run, file)

    @classmethod
    def report_thresholds(cls, config: Mapping[str, Any]) -> dict[str, str]:
        return {k: str(config[k]) for k in cls.REPORT_KEYS if config.get(k) is not None}


__all__ = ["EvidenceGatePolicy", "GateInputs", "ordered_questions"]
