"""fail_closed over a run directory: what `apply`, `tune`, `sweep`, `compare`, `export
--what audit` and the report's curve do with this kind (the `FailClosedPolicy` hooks call
these)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.policies.engine._apply_common import (
    CERTIFICATES,
    CLAIMS,
    RESPONSES,
    Chain,
    Outputs,
    Settings,
    _consumed,
    _counts,
    _dump,
    claim_identity,
    no_slices,
)
from assay.policies.engine._deltas import Units, counted_deltas
from assay.policies.engine._kind import Links
from assay.policies.engine._results import MetricDelta, Resolved, SweepResult, TuneRun
from assay.policies.engine._run_inputs import RunInputs
from assay.policies.engine._tune_record import tune_outcome, tune_record, tuning_provenance
from assay.policies.engine._tuning import TuningSpec
from assay.policies.fail_closed._audit import audit_record
from assay.policies.fail_closed._certificate import RunContext, build_certificate
from assay.policies.fail_closed._load import fc_inputs
from assay.policies.fail_closed._metrics import fail_closed_metrics, metric_counts
from assay.policies.fail_closed._tuning import (
    SWEEP_METRICS,
    default_tuning_spec,
    evaluate,
    sweep_tau_entail,
    tune_fail_closed,
)

Dump = dict[str, Any]
RANGES: dict[str, tuple[str, str, str]] = {
    "tau_entail": ("0.50", "0.99", "0.01"),
    "tau_contradict": ("0.50", "0.99", "0.01"),
}


def fc_context(
    run: RunInputs, verifier: str, gate_id: str | None = None, key: tuple[str, str] | None = None
) -> RunContext:
    """What a fail_closed certificate or audit record names about the run: the
    verifier's model and fingerprint from the run manifest, and the retrieval
    configuration behind the answer's evidence: its gate record's retriever when chained
    (`gate_id`, `key` = (dataset, answer_id)), else the verifier's own retriever, else
    None (the dataset gave the evidence)."""
    found = run.verifier(verifier)
    retrieval = found.retrieval_config_sha256
    if gate_id is not None:
        record = run.gates.get(gate_id, {}).get(key) if key is not None else None
        shared = run.gate(gate_id).retriever_config_sha256
        if record is not None and record.retriever.config_sha256 is not None:
            retrieval = record.retriever.config_sha256
        elif len(shared) == 1:
            retrieval = shared[0]
    return RunContext(run_id=run.run_id, verifier=found.info, retrieval_config_sha256=retrieval)


def _certificates(
    policy: Any, run: RunInputs, verifier: str, gate_id: str | None, pairs: list[Any]
) -> list[Any]:
    contexts = [fc_context(run, verifier, gate_id, (r.dataset, r.answer_id)) for r, _ in pairs]
    return [
        build_certificate(policy.config, r, d, c) for (r, d), c in zip(pairs, contexts, strict=True)
    ]


def apply(
    policy: Any, run: RunInputs, settings: Settings, chain: Chain | None, file: str
) -> Outputs:
    """Fail-closed claim states, renderings, sealed certificates and metrics for every answer."""
    no_slices(policy, settings)
    verifier = run.resolve_verifier(policy.config.verifier, file=file)
    responses = fc_inputs(run, verifier, chain.links if chain else None)
    decisions = policy.decide_all(responses)  # both in (dataset, answer_id) order
    metrics = fail_closed_metrics(
        decisions,
        resamples=settings.resamples,
        random_state=settings.random_state,
        confidence=settings.confidence,
    )
    gate_id = chain.gate_id if chain else None
    pairs = list(zip(responses, decisions, strict=True))
    certificates = _certificates(policy, run, verifier, gate_id, pairs)
    ratios = {k: v.model_dump(mode="json") for k, v in metrics.metrics.items()}
    warnings = []
    unscored = sum(c.reason == "no_entailment_scores" for d in decisions for c in d.claims)
    if unscored:
        warnings.append(
            f"verifier {verifier!r} recorded no entailment probability for {unscored} claims: "
            "fail_closed withholds them (no_entailment_scores) and refuses answers made only "
            "of them; read a verifier that scores entailment (e.g. nli-local)"
        )
    return Outputs(
        records={
            CLAIMS: [c.model_dump(mode="json") for d in decisions for c in d.claims],
            RESPONSES: [d.response.model_dump(mode="json") for d in decisions],
            CERTIFICATES: _dump(certificates),
        },
        metrics=metrics.model_dump(mode="json"),
        ratios=ratios,
        **claim_identity(run, verifier, chain),
        counts=_counts(metrics.n_responses, metrics.n_claims, metrics.n_refused, ratios),
        warnings=warnings,
    )


def tune(
    policy: Any, run: RunInputs, chain: Chain | None, grid: TuningSpec | None, file: str
) -> TuneRun:
    """The default tuning of a fail_closed policy on the run's answers."""
    verifier = run.resolve_verifier(policy.config.verifier, file=file)
    responses = fc_inputs(run, verifier, chain.links if chain else None)
    grid = grid or default_tuning_spec()
    result = tune_fail_closed(policy.config, responses, grid)
    identity = {"verifier_id": verifier, "inputs": _consumed(run, chain)}
    tuned = tuning_provenance(grid, result, run.split)
    record = tune_record(policy, run, identity, result, tuned)
    config = None
    if result.selected is not None:
        chosen = policy.config.with_thresholds(**result.selected)
        config = chosen.model_copy(update={"tuned": tuned}).model_dump(mode="json")
    return tune_outcome(record, result, config)


def sweep_points(
    policy: Any, run: RunInputs, chain: Chain | None, resolved: Resolved, file: str
) -> SweepResult:
    """One point per value of the swept threshold, the other held at the policy's."""
    verifier = run.resolve_verifier(policy.config.verifier, file=file)
    responses = fc_inputs(run, verifier, chain.links if chain else None)
    config = policy.config
    points = []
    for value in resolved.values:
        moved = config.with_thresholds(**{resolved.param: value})
        metrics = evaluate(config, responses, {resolved.param: value})
        points.append(
            {
                "params": {"tau_entail": moved.tau_entail, "tau_contradict": moved.tau_contradict},
                "metrics": {m: r.model_dump(mode="json") for m, r in metrics.items()},
            }
        )
    return SweepResult(param=resolved.param, points=points, shown=list(SWEEP_METRICS))


def default_curve(policy: Any, run: RunInputs, inputs: Dump, links: Links | None) -> list[Dump]:
    """The default `tau_entail` sweep on the verifier the manifest names."""
    responses = fc_inputs(run, inputs["verifier_ids"][0], links)
    return [p.model_dump(mode="json") for p in sweep_tau_entail(policy.config, responses)]


def _units(policy: Any, run: RunInputs, inputs: Dump, links: Links | None) -> Units:
    decisions = policy.decide_all(fc_inputs(run, inputs["verifier_ids"][0], links))
    keys = [(d.response.dataset, d.response.answer_id) for d in decisions]
    return keys, fail_closed_metrics(decisions).metrics, metric_counts(decisions)


def deltas(
    a: Any,
    b: Any,
    run: RunInputs,
    sides: Sequence[tuple[Dump, Links | None]],
    metrics: Sequence[str] | None,
    bootstrap: dict[str, int],
) -> list[MetricDelta]:
    """Each metric's exact a - b with a paired interval over the same responses."""
    (inputs_a, links_a), (inputs_b, links_b) = sides
    units_a, units_b = _units(a, run, inputs_a, links_a), _units(b, run, inputs_b, links_b)
    return counted_deltas(units_a, units_b, metrics, bootstrap)


def audit_records(policy: Any, run: RunInputs, inputs: Dump, links: Links | None) -> list[Dump]:
    """One audit object per answer decided, in (dataset, answer_id) order."""
    verifier = inputs["verifier_ids"][0]
    responses = fc_inputs(run, verifier, links)
    decisions = policy.decide_all(responses)
    gate_id = inputs["gate_id"] if links is not None else None
    return [
        audit_record(
            policy.config, r, d, fc_context(run, verifier, gate_id, (r.dataset, r.answer_id))
        ).model_dump(mode="json")
        for r, d in zip(responses, decisions, strict=True)
    ]


__all__ = [
    "RANGES",
    "apply",
    "audit_records",
    "default_curve",
    "deltas",
    "fc_context",
    "sweep_points",
    "tune",
]
