"""The evidence gate (the evidence-gate paper): the public API. Definitions:
docs/reference/policies/evidence-gate.md.

A question-level answer/abstain gate on cross-encoder scores of retrieved passages. It
passes a question when the best passage of the initial pool reaches `tau`, reassesses an
admissible but short question (`tau_min <= s < tau`) on the expanded pool, abstains
otherwise, and refuses when the gate record is missing, failed or invalid. A pass names
its evidence set E(q) and citations; nothing here calls a model.

    policy = EvidenceGatePolicy({"name": "gate", "tau": "0.30", "tau_min": "0.10"})
    decisions = policy.decide(GateInputs(run_id=..., questions=[GateQuestion(...), ...]))
    metrics = policy.metrics(decisions)
"""

from __future__ import annotations

from assay.policies.evidence_gate._aurc import aurc, aurc_optimal, excess_aurc
from assay.policies.evidence_gate._compose import (
    GATE_ABSTAINED,
    GATE_REFUSED,
    OUTSIDE_GATE_EVIDENCE,
    GateChain,
    GateSummary,
    gate_chain,
    gate_chains,
)
from assay.policies.evidence_gate._config import (
    KIND,
    VERSION,
    CitationQuality,
    EvidenceGateConfig,
    EvidenceLabel,
    GateQuestion,
    GateRule,
    NativeDecision,
    RefusalReason,
    SupportLevel,
    parse_support,
    reranker_scores,
    support_from_claims,
)
from assay.policies.evidence_gate._decide import gate_record_sha256
from assay.policies.evidence_gate._metrics import (
    GateCounts,
    GateMetrics,
    GateRow,
    gate_metrics,
    metric_counts,
)
from assay.policies.evidence_gate._policy import EvidenceGatePolicy, GateInputs
from assay.policies.evidence_gate._records import GateCitation, GateDecisionRecord, RerankerRef
from assay.policies.evidence_gate._tuning import (
    CurvePoint,
    default_tuning_spec,
    risk_coverage_curve,
    sweep_gate,
    tune_gate,
    tuned_config,
)

__all__ = [
    "GATE_ABSTAINED",
    "GATE_REFUSED",
    "KIND",
    "OUTSIDE_GATE_EVIDENCE",
    "VERSION",
    "CitationQuality",
    "CurvePoint",
    "EvidenceGateConfig",
    "EvidenceGatePolicy",
    "EvidenceLabel",
    "GateChain",
    "GateCitation",
    "GateCounts",
    "GateDecisionRecord",
    "GateInputs",
    "GateMetrics",
    "GateQuestion",
    "GateRow",
    "GateRule",
    "GateSummary",
    "NativeDecision",
    "RefusalReason",
    "RerankerRef",
    "SupportLevel",
    "aurc",
    "aurc_optimal",
    "default_tuning_spec",
    "excess_aurc",
    "gate_chain",
    "gate_chains",
    "gate_metrics",
    "gate_record_sha256",
    "metric_counts",
    "parse_support",
    "reranker_scores",
    "risk_coverage_curve",
    "support_from_claims",
    "sweep_gate",
    "tune_gate",
    "tuned_config",
]
