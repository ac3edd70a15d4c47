"""Policies: deterministic, versioned functions from recorded verdicts to decisions
(claim-selective certification, an evidence gate, fail-closed rendering), with their
metrics, tuning and certificates. Nothing here calls a model.

Each kind is a sub-package (`claim_selective`, `evidence_gate`, `fail_closed`) whose
policy class derives `engine.PolicyKind` and registers in `POLICIES`; user kinds
(`custom`, `@policy`) take the same route. `engine` holds what kinds share (exact
numbers, canonical JSON, the decision vocabulary, grid search, the run's records as
policies read them; resampled intervals are the project's one bootstrap,
`metrics._ratio_bootstrap`); `jobs` (apply, tune, sweep, compare, export) and
`report` reach a kind only through the registry.
"""

# Each kind's sub-package registers its class in POLICIES when imported.
from assay.core.decisions import ClaimDecision, GateOutcome, ResponseOutcome
from assay.metrics._ratio_bootstrap import (
    Interval,
    RatioCounts,
    bootstrap_intervals,
    paired_delta_interval,
)
from assay.policies import claim_selective as claim_selective
from assay.policies import evidence_gate as evidence_gate
from assay.policies import fail_closed as fail_closed
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
