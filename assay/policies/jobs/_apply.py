"""`assay policies apply`: run one policy over a run directory's records and produce its
output records and metrics (policies spec §5.3). Pure apart from reading the run: the
files are written by `_apply_write`, only after every input has been read and checked,
so a bad input leaves nothing under `policies/<name>/`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assay.core.rundir import ANSWERS_FILE, GATES_FILE
from assay.errors import SpecError
from assay.policies.engine._apply_common import (
    CERTIFICATES,
    CLAIMS,
    GATE_DECISIONS,
    RESPONSES,
    Chain,
    Outputs,
    Settings,
    _consumed,
    _counts,
    _dump,
    _no_source_missing,
    claim_identity,
    provenance,
)
from assay.policies.engine._run_inputs import RunInputs
from assay.policies.jobs._spec import PolicySpec


def _slices(policy: Any, decisions: Any, settings: Settings) -> list[dict[str, Any]]:
    """§2.7.6 metrics per value of `settings.by` (a response field)."""
    from assay.policies.claim_selective._slices import slice_metrics

    groups = slice_metrics(
        decisions,
        str(settings.by),
        standard=policy.config.certificate_standard,
        resamples=settings.resamples,
        random_state=settings.random_state,
    )
    return [g.model_dump(mode="json") for g in groups]


def _source_missing(policy: Any, inputs: list[Any], settings: Settings) -> dict[str, Any]:
    """§2.7.5: the metrics of the same responses with every evidence pool emptied."""
    from assay.policies.claim_selective._slices import source_missing

    metrics = policy.metrics(
        policy.decide(source_missing(inputs)),
        resamples=settings.resamples,
        random_state=settings.random_state,
        confidence=settings.confidence,
    )
    dumped: dict[str, Any] = metrics.model_dump(mode="json")
    return dumped


def _no_slices(spec: PolicySpec, settings: Settings) -> None:
    _no_source_missing(spec, settings)
    if settings.by is not None:
        raise SpecError(
            f"--by slices claim_selective metrics; {spec.name!r} is a {spec.kind}", field="--by"
        )


def _with_verifier(certificates: list[Any], run: RunInputs, verifier: str) -> list[Any]:
    """claim_selective certificates naming the verifier's model and sha256, sealed again."""
    info = run.verifier(verifier).info
    return [c.model_copy(update={"verifier": info}).sealed() for c in certificates]


def apply_claim_selective(
    spec: PolicySpec, policy: Any, run: RunInputs, settings: Settings, chain: Chain | None
) -> Outputs:
    """§2 decisions, certificates and metrics for every answer of the run."""
    from assay.policies.claim_selective._load import cs_inputs
    from assay.policies.claim_selective._slices import SLICE_FIELDS

    if settings.by is not None and settings.by not in SLICE_FIELDS:  # before any work
        known = ", ".join(SLICE_FIELDS)
        raise SpecError(f"cannot slice by {settings.by!r}; use one of {known}", field="--by")
    verifier = run.resolve_verifier(policy.config.verifier, file=spec.file)
    inputs = cs_inputs(run, verifier, chain.links if chain else None)
    decisions = policy.decide(inputs)
    metrics = policy.metrics(
        decisions,
        resamples=settings.resamples,
        random_state=settings.random_state,
        confidence=settings.confidence,
    )
    ratios = {k: v.model_dump(mode="json") for k, v in metrics.ratios().items()}
    dumped = metrics.model_dump(mode="json")
    if settings.by is not None:
        dumped["slices"] = {settings.by: _slices(policy, decisions, settings)}
    if settings.source_missing:
        dumped["source_missing"] = _source_missing(policy, inputs, settings)
    lexicons = dict(run.lexicons.get(verifier, {}))
    if policy.config.priors.dosage_label_rescue is not None:
        from assay.policies.claim_selective._cues import priors_lexicon_digest

        lexicons.update(priors_lexicon_digest())
    return Outputs(
        records={
            CLAIMS: _dump(decisions.claims),
            RESPONSES: _dump(decisions.responses),
            CERTIFICATES: _dump(_with_verifier(decisions.certificates, run, verifier)),
        },
        metrics=dumped,
        ratios=ratios,
        **claim_identity(run, verifier, chain, lexicons),
        counts=_counts(metrics.n_responses, metrics.n_claims, metrics.n_refused, ratios),
    )


def fc_context(
    run: RunInputs, verifier: str, gate_id: str | None = None, key: tuple[str, str] | None = None
) -> Any:
    """What a fail_closed certificate or audit record names about the run (§4.7): the
    verifier's model and fingerprint from the run manifest, and the retrieval
    configuration behind the answer's evidence: its gate record's retriever when chained
    (`gate_id`, `key` = (dataset, answer_id)), else the verifier's own retriever, else
    None (the dataset gave the evidence)."""
    from assay.policies.fail_closed._certificate import RunContext

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


def _fc_certificates(
    policy: Any, run: RunInputs, verifier: str, gate_id: str | None, pairs: list[Any]
) -> list[Any]:
    from assay.policies.fail_closed._certificate import build_certificate

    contexts = [fc_context(run, verifier, gate_id, (r.dataset, r.answer_id)) for r, _ in pairs]
    return [
        build_certificate(policy.config, r, d, c) for (r, d), c in zip(pairs, contexts, strict=True)
    ]


def apply_fail_closed(
    spec: PolicySpec, policy: Any, run: RunInputs, settings: Settings, chain: Chain | None
) -> Outputs:
    """§4 claim states, renderings, sealed certificates and metrics for every answer."""
    from assay.policies.fail_closed._load import fc_inputs
    from assay.policies.fail_closed._metrics import fail_closed_metrics

    _no_slices(spec, settings)
    verifier = run.resolve_verifier(policy.config.verifier, file=spec.file)
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
    certificates = _fc_certificates(policy, run, verifier, gate_id, pairs)
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


def apply_evidence_gate(
    spec: PolicySpec, policy: Any, run: RunInputs, settings: Settings, chain: Chain | None
) -> Outputs:
    """§3 decisions (`gate_decisions.jsonl`) and metrics for every question of the run."""
    from assay.policies.evidence_gate._load import gate_inputs, resolve_gate, short_pools

    _no_slices(spec, settings)
    gate_id = resolve_gate(run, policy.config.gate, file=spec.file)
    decisions = policy.decide(gate_inputs(run, gate_id))
    metrics = policy.metrics(
        decisions,
        resamples=settings.resamples,
        random_state=settings.random_state,
        confidence=settings.confidence,
    )
    ratios = {k: v.model_dump(mode="json") for k, v in metrics.metrics.items()}
    short = short_pools(run, gate_id, policy.config.k1_expanded)
    warnings = (
        [
            f"{short} gate records scored fewer than k1_expanded = {policy.config.k1_expanded} "
            "ranks: those questions are refused (pool_too_small)"
        ]
        if short
        else []
    )
    return Outputs(
        records={GATE_DECISIONS: _dump(decisions)},
        metrics=metrics.model_dump(mode="json"),
        ratios=ratios,
        gate_id=gate_id,
        consumed=_consumed(run, None, (ANSWERS_FILE, GATES_FILE)),
        provenance=provenance(run, None, gate_id),
        counts=_counts(len(decisions), 0, metrics.n_refused, ratios),
        warnings=warnings,
    )


def chain_of(gate_spec: PolicySpec, run: RunInputs) -> Chain:
    """The gate decisions a chained policy reads, from the named gate policy (§5.9)."""
    from assay.policies.evidence_gate._load import chain_links, resolve_gate

    gate = gate_spec.build()
    gate_id = resolve_gate(run, gate.config.gate, file=gate_spec.file)
    links = chain_links(gate, run, gate_id)
    return Chain(gate_policy=gate.name, gate_id=gate_id, gate_config=gate.describe(), links=links)


Runner = Callable[[PolicySpec, Any, RunInputs, Settings, Chain | None], Outputs]
RUNNERS: dict[str, Runner] = {
    "claim_selective": apply_claim_selective,
    "evidence_gate": apply_evidence_gate,
    "fail_closed": apply_fail_closed,
}


def runner_of(kind: str) -> Runner:
    """The built-in kind's runner, else the one every user kind (`@policy`) shares."""
    if kind in RUNNERS:
        return RUNNERS[kind]
    from assay.policies.custom._apply import apply_custom

    return apply_custom


__all__ = [
    "_consumed",  # re-exported: _sweep_run, _tune_run read it from here
    "CERTIFICATES",
    "CLAIMS",
    "GATE_DECISIONS",
    "RESPONSES",
    "RUNNERS",
    "Chain",
    "Outputs",
    "Settings",
    "apply_claim_selective",
    "apply_evidence_gate",
    "chain_of",
    "claim_identity",
    "fc_context",
    "provenance",
    "apply_fail_closed",
    "runner_of",
]
