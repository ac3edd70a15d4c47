"""What `assay policies apply` shares between every kind's `apply` hook (the built-in
kinds' `_jobs` modules and user kinds' `custom/_apply`): the output file names, settings,
chain and outputs models, and the identity fields every claim-level kind records."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from assay._limits import MAX_BOOTSTRAP
from assay.core.rundir import (
    ANSWERS_FILE,
    CERTIFICATES_FILE,
    CLAIMS_FILE,
    GATE_DECISIONS_FILE,
    GATES_FILE,
    RESPONSES_FILE,
    VERIFICATIONS_FILE,
)
from assay.errors import SpecError
from assay.policies.engine._run_inputs import RunInputs

CLAIMS = CLAIMS_FILE


RESPONSES = RESPONSES_FILE


CERTIFICATES = CERTIFICATES_FILE


GATE_DECISIONS = GATE_DECISIONS_FILE


class Settings(BaseModel):
    """How metrics intervals are drawn (recorded in the manifest)."""

    model_config = ConfigDict(frozen=True)

    resamples: int = Field(default=1000, ge=0, le=MAX_BOOTSTRAP)
    random_state: int = 0
    confidence: float = Field(default=0.95, gt=0.0, lt=1.0)
    by: str | None = Field(default=None, description="Response field to slice metrics by.")
    source_missing: bool = Field(
        default=False, description="Also the source-missing counterfactual's metrics."
    )


class Chain(BaseModel):
    """A claim-level policy's gate: the gate policy's name, the gate_id it read,
    and each answer's gate decision as the claim kinds take it."""

    model_config = ConfigDict(frozen=True)

    gate_policy: str
    gate_id: str
    gate_config: dict[str, Any] = Field(description="The gate policy's describe().")
    links: dict[tuple[str, str], dict[str, Any]]


class Outputs(BaseModel):
    """What one application produced: output records per file, metrics, identity."""

    model_config = ConfigDict(frozen=True)

    records: dict[str, list[dict[str, Any]]]
    metrics: dict[str, Any]
    ratios: dict[str, dict[str, Any]] = Field(description="metric name -> Ratio (for the table)")
    verifier_id: str | None = None
    gate_id: str | None = None
    lexicons: dict[str, str] = Field(
        default_factory=dict, description="{name@version: sha256} of the lexicons behind it"
    )
    gate_policy: dict[str, Any] | None = Field(
        default=None, description="Name and resolved config of the gate a chain read."
    )
    consumed: dict[str, str] = Field(description="input file -> sha256 of its records read")
    provenance: dict[str, Any] = Field(
        default_factory=dict, description="What produced the scores read (`provenance()`)."
    )
    counts: dict[str, int]
    warnings: list[str] = Field(default_factory=list)


def _dump(models: list[Any]) -> list[dict[str, Any]]:
    return [m.model_dump(mode="json") for m in models]


def _null_count(ratios: dict[str, dict[str, Any]]) -> int:
    return sum(1 for r in ratios.values() if r.get("value") is None)


CLAIM_INPUTS = (ANSWERS_FILE, CLAIMS_FILE, VERIFICATIONS_FILE)


def _consumed(
    run: RunInputs, chain: Chain | None, files: tuple[str, ...] = CLAIM_INPUTS
) -> dict[str, str]:
    """sha256 of the canonical records read, per input file (gates.jsonl when chained)."""
    names = (*files, GATES_FILE) if chain is not None else files
    return {name: run.input_sha256[name] for name in names}


def _counts(
    n_responses: int, n_claims: int, n_refused: int, ratios: dict[str, Any]
) -> dict[str, int]:
    return {
        "responses": n_responses,
        "claims": n_claims,
        "refused": n_refused,
        "null_metrics": _null_count(ratios),
    }


def _no_source_missing(policy: Any, settings: Settings) -> None:
    if settings.source_missing:
        raise SpecError(
            f"--slice source-missing is claim_selective's; {policy.name!r} is a {policy.kind}",
            field="--slice",
        )


def no_slices(policy: Any, settings: Settings) -> None:
    """`--by` and `--slice` are claim_selective's: refused for another kind."""
    _no_source_missing(policy, settings)
    if settings.by is not None:
        raise SpecError(
            f"--by slices claim_selective metrics; {policy.name!r} is a {policy.kind}",
            field="--by",
        )


def provenance(run: RunInputs, verifier: str | None, gate_id: str | None) -> dict[str, Any]:
    """The manifest's record of what produced the scores read: each verifier's
    model and sha256, the gate's reranker and retriever, and where the retrieval
    configuration came from (with a note when nothing was retrieved)."""
    from assay.policies.engine._provenance import retrieval_provenance

    found = run.verifier(verifier) if verifier is not None else None
    gate = run.gate(gate_id) if gate_id is not None else None
    verifiers = {}
    if found is not None:
        info = found.info.model_dump(mode="json", exclude={"verifier_id"})
        extra = {"kind": found.kind, "retrieval_config_sha256": found.retrieval_config_sha256}
        verifiers[str(verifier)] = {**info, **extra}
    return {
        "verifiers": verifiers,
        "gate": gate.model_dump(mode="json") if gate is not None else None,
        "retrieval": retrieval_provenance(found, gate).model_dump(mode="json"),
    }


def _gate_policy(chain: Chain | None) -> dict[str, Any] | None:
    return None if chain is None else {"name": chain.gate_policy, "config": chain.gate_config}


def claim_identity(
    run: RunInputs, verifier: str, chain: Chain | None, lexicons: dict[str, str] | None = None
) -> dict[str, Any]:
    """The `Outputs` fields every claim-level kind fills alike: the verifier read and its
    lexicons, the gate it was chained after, the inputs consumed and their provenance."""
    gate_id = chain.gate_id if chain else None
    return {
        "verifier_id": verifier,
        "lexicons": dict(run.lexicons.get(verifier, {})) if lexicons is None else lexicons,
        "gate_id": gate_id,
        "gate_policy": _gate_policy(chain),
        "consumed": _consumed(run, chain),
        "provenance": provenance(run, verifier, gate_id),
    }
