"""Fail-closed rendering (the CertiRAG design): the public API. Definitions:
docs/reference/policies/fail-closed.md.

A claim is shown as VERIFIED only when the verifier's entailment on its minimal
sufficient evidence reaches `tau_entail` with entailment as the top label, and no scored
span contradicts it at `tau_contradict` or above. Anything that failed, was capped or
is unscored is UNVERIFIED; contradicted claims are BLOCKED. Every answer gets a sealed
certificate. The policy reads ids and numbers only and never calls a model.

    policy = FailClosedPolicy.from_spec({"tau_entail": "0.85", "tau_contradict": "0.70"})
    decision = policy.decide(FCResponse(...))
    certificate = build_certificate(policy.config, response, decision)

The records are `FailClosedClaimRecord` and `FailClosedResponseRecord`
(`assay.core.decisions` contract); `ClaimRecord` and `ResponseRecord` are their old
names, kept as aliases for existing imports.
"""

from __future__ import annotations

import json
from pathlib import Path

from assay.policies.fail_closed._audit import AuditRecord, audit_record, explain
from assay.policies.fail_closed._calibration import (
    IsotonicCalibration,
    Reliability,
    TemperatureCalibration,
    fit_isotonic,
    fit_temperature,
    reliability,
)
from assay.policies.fail_closed._caps import round_robin
from assay.policies.fail_closed._certificate import (
    Certificate,
    RunContext,
    VerifierInfo,
    build_certificate,
    certificate_json_schema,
    certificate_verifies,
)
from assay.policies.fail_closed._config import (
    KIND,
    VERSION,
    Caps,
    FailClosedConfig,
    Mode,
    load_config,
)
from assay.policies.fail_closed._inputs import (
    FCChunk,
    FCClaim,
    FCGate,
    FCPair,
    FCResponse,
    FCSetScore,
    FCSpan,
    sentence_spans,
    text_sha256,
)
from assay.policies.fail_closed._lint import atomicity_flags
from assay.policies.fail_closed._metrics import (
    METRIC_NAMES,
    FailClosedMetrics,
    SystemMetrics,
    fail_closed_metrics,
    metric_counts,
    system_metrics,
)
from assay.policies.fail_closed._mse import top_label
from assay.policies.fail_closed._policy import FailClosedPolicy
from assay.policies.fail_closed._records import (
    Decision,
    EvidenceSpan,
    FailClosedClaimRecord,
    FailClosedResponseRecord,
    Reason,
    ReferenceNote,
    Rendered,
    RenderState,
)
from assay.policies.fail_closed._render import displayed, render
from assay.policies.fail_closed._tuning import (
    SweepPoint,
    default_tuning_spec,
    sweep_tau_entail,
    tune_fail_closed,
)

ClaimRecord = FailClosedClaimRecord
"""Old name of `FailClosedClaimRecord`, an alias kept for existing imports."""
ResponseRecord = FailClosedResponseRecord
"""Old name of `FailClosedResponseRecord`, an alias kept for existing imports."""

CERTIFICATE_SCHEMA_PATH = (
    Path(__file__).parents[1] / "schemas" / "fail_closed_certificate.schema.json"
)


def schema_text() -> str:
    """The published certificate schema as written to `CERTIFICATE_SCHEMA_PATH`."""
    return json.dumps(certificate_json_schema(), indent=2, sort_keys=True) + "\n"


__all__ = [
    "CERTIFICATE_SCHEMA_PATH",
    "KIND",
    "METRIC_NAMES",
    "VERSION",
    "AuditRecord",
    "Caps",
    "Certificate",
    "ClaimRecord",
    "Decision",
    "EvidenceSpan",
    "FCChunk",
    "FCClaim",
    "FCGate",
    "FCPair",
    "FCResponse",
    "FCSetScore",
    "FCSpan",
    "FailClosedClaimRecord",
    "FailClosedConfig",
    "FailClosedMetrics",
    "FailClosedPolicy",
    "FailClosedResponseRecord",
    "IsotonicCalibration",
    "Mode",
    "Reason",
    "ReferenceNote",
    "Reliability",
    "RenderState",
    "Rendered",
    "ResponseRecord",
    "RunContext",
    "SweepPoint",
    "SystemMetrics",
    "TemperatureCalibration",
    "VerifierInfo",
    "atomicity_flags",
    "audit_record",
    "build_certificate",
    "certificate_json_schema",
    "certificate_verifies",
    "default_tuning_spec",
    "displayed",
    "explain",
    "fail_closed_metrics",
    "fit_isotonic",
    "fit_temperature",
    "load_config",
    "metric_counts",
    "reliability",
    "render",
    "round_robin",
    "schema_text",
    "sentence_spans",
    "sweep_tau_entail",
    "system_metrics",
    "text_sha256",
    "top_label",
    "tune_fail_closed",
]
