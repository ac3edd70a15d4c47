"""claim_selective over a run directory: what `apply`, `tune`, `sweep`, `compare` and the
report's curve do with this kind (the `ClaimSelectivePolicy` hooks call these)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from assay.errors import SpecError
from assay.policies.claim_selective._compare import paired_deltas
from assay.policies.claim_selective._cues import priors_lexicon_digest
from assay.policies.claim_selective._load import cs_inputs
from assay.policies.claim_selective._metrics import METRIC_NAMES
from assay.policies.claim_selective._slices import SLICE_FIELDS, slice_metrics, source_missing
from assay.policies.claim_selective._tuning import SWEEP_METRICS, parse_tie, sweep, tune_policy
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
)
from assay.policies.engine._deltas import chosen_metrics
from assay.policies.engine._kind import Links
from assay.policies.engine._results import MetricDelta, Resolved, SweepResult, TuneRun
from assay.policies.engine._run_inputs import RunInputs
from assay.policies.engine._tune_record import tune_outcome, tune_record
from assay.policies.engine._tuning import TuningSpec

Dump = dict[str, Any]
DEFAULT_TIE = "condition_limited=support-0.10"
RANGES: dict[str, tuple[str, str, str]] = {
    "support": ("0.10", "0.90", "0.05"),
    "conflict": ("0.10", "0.90", "0.05"),
    "condition_limited": ("0.10", "0.90", "0.05"),
    "limitation": ("0.10", "0.90", "0.05"),
}


def _slices(policy: Any, decisions: Any, settings: Settings) -> list[dict[str, Any]]:
    """The metrics per value of `settings.by` (a response field)."""
    groups = slice_metrics(
        decisions,
        str(settings.by),
        standard=policy.config.certificate_standard,
        resamples=settings.resamples,
        random_state=settings.random_state,
    )
    return [g.model_dump(mode="json") for g in groups]


def _source_missing(policy: Any, inputs: list[Any], settings: Settings) -> dict[str, Any]:
    """The source-missing slice: the metrics of the same responses with every evidence pool
    emptied."""
    metrics = policy.metrics(
        policy.decide(source_missing(inputs)),
        resamples=settings.resamples,
        random_state=settings.random_state,
        confidence=settings.confidence,
    )
    dumped: dict[str, Any] = metrics.model_dump(mode="json")
    return dumped


def _with_verifier(certificates: list[Any], run: RunInputs, verifier: str) -> list[Any]:
    """Certificates naming the verifier's model and sha256, sealed again."""
    info = run.verifier(verifier).info
    return [c.model_copy(update={"verifier": info}).sealed() for c in certificates]


def apply(
    policy: Any, run: RunInputs, settings: Settings, chain: Chain | None, file: str
) -> Outputs:
    """Claim-selective decisions, certificates and metrics for every answer of the run."""
    if settings.by is not None and settings.by not in SLICE_FIELDS:  # before any work
        known = ", ".join(SLICE_FIELDS)
        raise SpecError(f"cannot slice by {settings.by!r}; use one of {known}", field="--by")
    verifier = run.resolve_verifier(policy.config.verifier, file=file)
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


def tune(
    policy: Any, run: RunInputs, chain: Chain | None, grid: TuningSpec | None, file: str
) -> TuneRun:
    """The default tuning of a claim_selective policy on the run's answers."""
    verifier = run.resolve_verifier(policy.config.verifier, file=file)
    inputs = cs_inputs(run, verifier, chain.links if chain else None)
    outcome = tune_policy(policy.config, inputs, grid, split=run.split)
    tuned = (outcome.selected_config or {}).get("tuned")
    identity = {"verifier_id": verifier, "inputs": _consumed(run, chain)}
    record = tune_record(policy, run, identity, outcome.result, tuned)
    return tune_outcome(record, outcome.result, outcome.selected_config)


def sweep_base(param: str) -> str:
    """An intent-aware policy also takes `<family>.support` (one family; `with_params`
    checks the family)."""
    return param.rpartition(".")[2]


def _check_ties(resolved: Resolved) -> None:
    for text in resolved.ties:
        target, source, _ = parse_tie(text)
        if source != resolved.param or sweep_base(target) not in RANGES:
            raise SpecError(
                f"{text!r}: a tie moves a threshold with --param {resolved.param}", field="--tie"
            )


def sweep_points(
    policy: Any, run: RunInputs, chain: Chain | None, resolved: Resolved, file: str
) -> SweepResult:
    """One point per value of the swept threshold (ties moving with it)."""
    _check_ties(resolved)
    verifier = run.resolve_verifier(policy.config.verifier, file=file)
    inputs = cs_inputs(run, verifier, chain.links if chain else None)
    points = sweep(
        policy.config,
        inputs,
        param=resolved.param,
        start=resolved.start,
        stop=resolved.stop,
        step=resolved.step,
        ties=resolved.ties,
    )
    dumped = [p.model_dump(mode="json") for p in points]
    shown = list(dumped[0]["metrics"]) if dumped else list(SWEEP_METRICS)
    return SweepResult(param=resolved.param, points=dumped, shown=shown)


def default_curve(policy: Any, run: RunInputs, inputs: Dump, links: Links | None) -> list[Dump]:
    """The default sweep on the verifier the manifest names, as curve points."""
    points = sweep(policy.config, cs_inputs(run, inputs["verifier_ids"][0], links))
    return [p.model_dump(mode="json") for p in points]


def deltas(
    a: Any,
    b: Any,
    run: RunInputs,
    sides: Sequence[tuple[Dump, Links | None]],
    metrics: Sequence[str] | None,
    bootstrap: dict[str, int],
) -> list[MetricDelta]:
    """`paired_deltas` of the two decisions (both under one certificate standard)."""
    standard = a.config.certificate_standard
    if b.config.certificate_standard != standard:
        raise SpecError(
            f"{a.name!r} and {b.name!r} use different certificate standards: uccr_cert differs"
        )
    decided = [
        policy.decide(cs_inputs(run, inputs["verifier_ids"][0], links))
        for policy, (inputs, links) in zip((a, b), sides, strict=True)
    ]
    chosen = chosen_metrics(metrics, METRIC_NAMES)
    return list(
        paired_deltas(decided[0], decided[1], metrics=chosen, standard=standard, **bootstrap)
    )


def report_thresholds(config: Dump) -> dict[str, str]:
    """The selector and every threshold, as a report compares policies by."""
    out = {"selector": str(config.get("selector"))}
    return out | {k: str(v) for k, v in (config.get("thresholds") or {}).items()}


__all__ = [
    "DEFAULT_TIE",
    "RANGES",
    "apply",
    "default_curve",
    "deltas",
    "report_thresholds",
    "sweep_base",
    "sweep_points",
    "tune",
]
