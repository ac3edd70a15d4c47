"""Policies: deterministic, versioned functions from recorded verdicts to decisions
(claim-selective certification, an evidence gate, fail-closed rendering), with their
metrics, tuning and certificates. Nothing here calls a model.

Shared pieces: `_numbers` (thresholds as decimal strings, exact ratios, Wilson),
`_canonical` (canonical JSON and hashes), `_vocab` (the common decision vocabulary),
`_tuning` (the grid-search engine), `_bootstrap` (response-resampled intervals).
"""

from assay.policies.claim_selective._inputs import ClaimInput, ResponseInput
from assay.policies.custom._define import (
    ClaimPolicy,
    ClaimPolicyDecisions,
    ClaimPolicyInputs,
    ClaimVerdict,
    PolicyConfig,
    best_support,
    policy,
    verification_ok,
)
from assay.policies.engine._bootstrap import (
    Interval,
    RatioCounts,
    bootstrap_intervals,
    paired_delta_interval,
)
from assay.policies.engine._canonical import canonical_json, canonical_sha256
from assay.policies.engine._numbers import (
    Ratio,
    decimal_grid,
    decimal_text,
    no_gold,
    ratio,
    threshold,
    wilson,
)
from assay.policies.engine._protocol import Policy
from assay.policies.engine._tuning import (
    Constraint,
    Objective,
    TieBreak,
    TuneResult,
    TuningSpec,
    tune,
)
from assay.policies.engine._vocab import ClaimDecision, GateOutcome, ResponseOutcome
from assay.policies.jobs import _kinds as _kinds  # registers the built-in kinds
from assay.policies.jobs._session import AppliedPolicy, apply_policies

__all__ = [
    "AppliedPolicy",
    "apply_policies",
    "ClaimDecision",
    "ClaimInput",
    "ClaimPolicy",
    "ClaimPolicyDecisions",
    "ClaimPolicyInputs",
    "ClaimVerdict",
    "PolicyConfig",
    "ResponseInput",
    "best_support",
    "policy",
    "verification_ok",
    "Constraint",
    "GateOutcome",
    "Interval",
    "Objective",
    "Policy",
    "Ratio",
    "RatioCounts",
    "ResponseOutcome",
    "TieBreak",
    "TuneResult",
    "TuningSpec",
    "bootstrap_intervals",
    "canonical_json",
    "canonical_sha256",
    "decimal_grid",
    "decimal_text",
    "no_gold",
    "paired_delta_interval",
    "ratio",
    "threshold",
    "tune",
    "wilson",
]
