"""Claim-selective certification (the claim-selective certification paper): the public
API. Definitions: docs/reference/policies/claim-selective.md.

Each claim gets a status from its pooled relation scores (max over its scored passages
of support, conflict and limitation): certified (`assert`), condition_limited
(`qualify`), conflicting (`dispute`) or omitted (`withhold`); each response an action:
full, partial, conflict, abstain, or refuse when every verification failed. Claims with
failed or invalid verifications are always withheld (fail closed); nothing here calls a
model or reads a text.

    policy = ClaimSelectivePolicy({"name": "cert", "selector": "threshold"})
    decisions = policy.decide([ResponseInput(...), ...])
    metrics = policy.metrics(decisions)

The records are `ClaimSelectiveClaimRecord` and `ClaimSelectiveResponseRecord`
(`assay.core.decisions` contract); `ClaimRecord` and `ResponseRecord` are their old
names, kept as aliases for existing imports.
"""

from __future__ import annotations

from assay.policies.claim_selective._compare import MetricDelta, paired_deltas, point_delta
from assay.policies.claim_selective._config import (
    DEFAULT_FAMILIES,
    DEFAULT_INTENT_FAMILIES,
    FALLBACK_FAMILY,
    PRIORS_LEXICON,
    CertificateStandard,
    ClaimSelectiveConfig,
    DosageLabelRescue,
    Priors,
    ReviewDowngrade,
    SelectorThresholds,
    parse_config,
    with_params,
)
from assay.policies.claim_selective._controls import (
    CONTROL_KEYS,
    AuditAgreement,
    ControlResult,
    OverlapReport,
    audit_agreement,
    majority_control,
    normalise_text,
    normalise_url,
    novel,
    overlap,
    shuffle_intents,
    without_intents,
)
from assay.policies.claim_selective._cues import (
    dosage_instruction,
    passage_info,
    priors_lexicon_digest,
)
from assay.policies.claim_selective._decide import input_sha256
from assay.policies.claim_selective._inputs import (
    ClaimInput,
    ClaimVerification,
    GateLink,
    PassageInfo,
    RelationPair,
    ResponseInput,
    normalise_intent,
    response_from_row,
)
from assay.policies.claim_selective._metrics import (
    METRIC_NAMES,
    ClaimCounts,
    ClaimSelectiveMetrics,
    claim_metrics,
    counts_by_response,
    evaluate,
)
from assay.policies.claim_selective._policy import KIND, ClaimSelectivePolicy
from assay.policies.claim_selective._records import (
    CertificateRecord,
    ClaimCertificate,
    ClaimSelectiveClaimRecord,
    ClaimSelectiveResponseRecord,
    Decisions,
    EvidenceLink,
    IgnoredReference,
    PolicyStamp,
    PooledScores,
)
from assay.policies.claim_selective._reference import binary_support_gate, express_all
from assay.policies.claim_selective._slices import (
    SLICE_FIELDS,
    SliceGroup,
    slice_metrics,
    source_missing,
)
from assay.policies.claim_selective._tuning import (
    INFEASIBLE_EXIT_CODE,
    SWEEP_METRICS,
    SweepPoint,
    TuneOutcome,
    default_tuning_spec,
    parse_tie,
    sweep,
    sweep_point,
    tune_policy,
)

ClaimRecord = ClaimSelectiveClaimRecord
"""Old name of `ClaimSelectiveClaimRecord`, an alias kept for existing imports."""
ResponseRecord = ClaimSelectiveResponseRecord
"""Old name of `ClaimSelectiveResponseRecord`, an alias kept for existing imports."""

__all__ = [
    "CONTROL_KEYS",
    "DEFAULT_FAMILIES",
    "DEFAULT_INTENT_FAMILIES",
    "FALLBACK_FAMILY",
    "INFEASIBLE_EXIT_CODE",
    "KIND",
    "METRIC_NAMES",
    "PRIORS_LEXICON",
    "SLICE_FIELDS",
    "SWEEP_METRICS",
    "AuditAgreement",
    "CertificateRecord",
    "CertificateStandard",
    "ClaimCertificate",
    "ClaimCounts",
    "ClaimInput",
    "ClaimRecord",
    "ClaimSelectiveClaimRecord",
    "ClaimSelectiveConfig",
    "ClaimSelectiveMetrics",
    "ClaimSelectivePolicy",
    "ClaimSelectiveResponseRecord",
    "ClaimVerification",
    "ControlResult",
    "Decisions",
    "DosageLabelRescue",
    "EvidenceLink",
    "GateLink",
    "IgnoredReference",
    "MetricDelta",
    "OverlapReport",
    "PassageInfo",
    "PolicyStamp",
    "PooledScores",
    "Priors",
    "RelationPair",
    "ResponseInput",
    "ResponseRecord",
    "ReviewDowngrade",
    "SelectorThresholds",
    "SliceGroup",
    "SweepPoint",
    "TuneOutcome",
    "audit_agreement",
    "binary_support_gate",
    "claim_metrics",
    "counts_by_response",
    "default_tuning_spec",
    "dosage_instruction",
    "evaluate",
    "express_all",
    "input_sha256",
    "majority_control",
    "normalise_intent",
    "normalise_text",
    "normalise_url",
    "novel",
    "overlap",
    "paired_deltas",
    "parse_config",
    "parse_tie",
    "passage_info",
    "point_delta",
    "priors_lexicon_digest",
    "response_from_row",
    "shuffle_intents",
    "slice_metrics",
    "source_missing",
    "sweep",
    "sweep_point",
    "tune_policy",
    "with_params",
    "without_intents",
]
