"""`assay policies apply` for a user policy kind (`@policy`): the same inputs as
claim_selective reads (`_load_cs.cs_inputs`), the user's `decide`, then the framework's
guard, records and common metrics; `_apply_write` writes them like a built-in kind's."""

from __future__ import annotations

from typing import Any

from assay.errors import SpecError
from assay.policies.claim_selective._inputs import ResponseInput
from assay.policies.custom._define import ClaimPolicy, ClaimPolicyDecisions, ClaimPolicyInputs
from assay.policies.custom._guard import GuardedResponse, guard, unknown_keys, within_evidence
from assay.policies.custom._metrics import common_metrics, sliced
from assay.policies.engine._apply_common import (
    CLAIMS,
    RESPONSES,
    Chain,
    Outputs,
    Settings,
    _counts,
    _no_source_missing,
    claim_identity,
)
from assay.policies.engine._run_inputs import RunInputs
from assay.policies.jobs._spec import PolicySpec


def _stamp(policy: ClaimPolicy[Any]) -> dict[str, Any]:
    return {
        "policy_id": policy.name,
        "kind": policy.kind,
        "policy_version": policy.version,
        "policy_sha256": policy.sha256,
    }


def records(
    policy: ClaimPolicy[Any], guarded: list[GuardedResponse]
) -> dict[str, list[dict[str, Any]]]:
    """claims.jsonl and responses.jsonl rows, in (dataset, answer_id, claim) order."""
    stamp = _stamp(policy)
    claims, responses = [], []
    for g in guarded:
        r = g.response
        for c in g.claims:
            v = c.claim.verification
            claims.append({
                **stamp,
                "dataset": r.dataset,
                "answer_id": r.answer_id,
                "claim_id": c.claim.claim_id,
                "decision": c.decision.value,
                "reason": c.reason,
                "overridden": c.overridden.value if c.overridden is not None else None,
                "verification_status": v.status.value if v is not None else None,
                "critical": c.claim.critical,
                "gold_status": c.claim.gold_status,
            })  # fmt: skip
        responses.append({
            **stamp,
            "dataset": r.dataset,
            "answer_id": r.answer_id,
            "outcome": g.outcome.value,
            "reason": g.reason,
            "gold_action": r.gold_action,
            "split": r.split,
            "n_claims": len(g.claims),
        })  # fmt: skip
    return {CLAIMS: claims, RESPONSES: responses}


def run_decide(
    policy: ClaimPolicy[Any], inputs: ClaimPolicyInputs, spec: PolicySpec
) -> ClaimPolicyDecisions:
    """The user's `decide`; an exception or a wrong return is one line naming the policy."""
    where = f"policy {spec.name!r} (kind {spec.kind})"
    try:
        found = policy.decide(inputs)
    except Exception as exc:  # user code: report it as one line, never a traceback
        raise SpecError(
            f"{where}: decide failed: {type(exc).__name__}: {exc}", file=spec.file
        ) from exc
    if not isinstance(found, ClaimPolicyDecisions):
        got = type(found).__name__
        raise SpecError(f"{where}: decide returned {got}, not ClaimPolicyDecisions", file=spec.file)
    bad = unknown_keys(inputs.responses, found)
    if bad:
        raise SpecError(
            f"{where}: decided keys the run does not have: {', '.join(bad[:3])}", file=spec.file
        )
    return found


def _check_settings(spec: PolicySpec, settings: Settings) -> None:
    _no_source_missing(spec, settings)
    if settings.by is not None and settings.by not in ResponseInput.model_fields:
        known = ", ".join(sorted(ResponseInput.model_fields))
        raise SpecError(
            f"{settings.by!r} is not a response field (use one of {known})", field="--by"
        )


def apply_custom(
    spec: PolicySpec, policy: Any, run: RunInputs, settings: Settings, chain: Chain | None
) -> Outputs:
    """Decide every answer of the run under a user policy; guard, record, measure."""
    from assay.policies.claim_selective._load import cs_inputs

    _check_settings(spec, settings)
    verifier = run.resolve_verifier(policy.config.verifier, file=spec.file)
    found = cs_inputs(run, verifier, chain.links if chain else None)
    responses = tuple(within_evidence(r) for r in found)
    inputs = ClaimPolicyInputs(run_id=run.run_id, verifier_id=verifier, responses=responses)
    guarded = guard(responses, run_decide(policy, inputs, spec))
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


__all__ = ["apply_custom", "records", "run_decide"]
