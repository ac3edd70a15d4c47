"""`assay policies apply` for a user policy kind (`@policy`): the same inputs as
claim_selective reads (`claim_selective/_load.cs_inputs`), the user's `decide`, then the
framework's guard, records and common metrics; `jobs/_write` writes them like a built-in
kind's."""

from __future__ import annotations

from typing import Any

from assay.errors import SpecError
from assay.policies.claim_selective._inputs import ResponseInput
from assay.policies.claim_selective._load import cs_inputs
from assay.policies.custom._guard import guard, unknown_keys, within_evidence
from assay.policies.custom._metrics import common_metrics, sliced
from assay.policies.custom._records import records
from assay.policies.custom._types import ClaimPolicyDecisions, ClaimPolicyInputs
from assay.policies.engine._apply_common import (
    Chain,
    Outputs,
    Settings,
    _counts,
    _no_source_missing,
    claim_identity,
)
from assay.policies.engine._run_inputs import RunInputs


def run_decide(policy: Any, inputs: ClaimPolicyInputs, file: str) -> ClaimPolicyDecisions:
    """The user's `decide`; an exception or a wrong return is one line naming the policy."""
    where = f"policy {policy.name!r} (kind {policy.kind})"
    try:
        found = policy.decide(inputs)
    except Exception as exc:  # user code: report it as one line, never a traceback
        raise SpecError(f"{where}: decide failed: {type(exc).__name__}: {exc}", file=file) from exc
    if not isinstance(found, ClaimPolicyDecisions):
        got = type(found).__name__
        raise SpecError(f"{where}: decide returned {got}, not ClaimPolicyDecisions", file=file)
    bad = unknown_keys(inputs.responses, found)
    if bad:
        raise SpecError(
            f"{where}: decided keys the run does not have: {', '.join(bad[:3])}", file=file
        )
    return found


def _check_settings(policy: Any, settings: Settings) -> None:
    _no_source_missing(policy, settings)
    if settings.by is not None and settings.by not in ResponseInput.model_fields:
        known = ", ".join(sorted(ResponseInput.model_fields))
        raise SpecError(
            f"{settings.by!r} is not a response field (use one of {known})", field="--by"
        )


def apply_custom(
    policy: Any, run: RunInputs, settings: Settings, chain: Chain | None, file: str
) -> Outputs:
    """Decide every answer of the run under a user policy; guard, record, measure."""
    _check_settings(policy, settings)
    verifier = run.resolve_verifier(policy.config.verifier, file=file)
    found = cs_inputs(run, verifier, chain.links if chain else None)
    responses = tuple(within_evidence(r) for r in found)
    inputs = ClaimPolicyInputs(run_id=run.run_id, verifier_id=verifier, responses=responses)
    guarded = guard(responses, run_decide(policy, inputs, file))
    metrics = common_metrics(guarded, settings.confidence)
    if settings.by is not None:
        metrics["slices"] = {settings.by: sliced(guarded, settings.by, settings.confidence)}
    warnings = []
    if metrics["n_guarded"]:
        warnings.append(
            f"{metrics['n_guarded']} claims the policy asserted, qualified or disputed were "
            "withheld: their verification did not end ok, or the gate did not pass (fail closed)"
        )
    ratios: dict[str, dict[str, Any]] = metrics["metrics"]
    return Outputs(
        records=records(policy, guarded),
        metrics=metrics,
        ratios=ratios,
        **claim_identity(run, verifier, chain),
        counts=_counts(len(guarded), metrics["n_claims"], metrics["n_refused"], ratios),
        warnings=warnings,
    )


__all__ = ["apply_custom", "run_decide"]
