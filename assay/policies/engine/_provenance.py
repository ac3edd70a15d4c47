"""What produced the scores a policy reads: the
verifier's model and its weights fingerprint (or prompt, for a language-model verifier),
the gate's reranker and the retrieval configuration behind the evidence.

Read from the run, never from a model: a verifier's block in the run manifest (its
describe() at run time) and the `reranker` / `retriever` blocks every `gates.jsonl`
record carries. Certificates and policy manifests name these, so a decision can be
traced to the exact models and retrieval settings without opening the run.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from assay.core.records import GateRecord
from assay.retrieval._identity import config_sha256

_STRICT = ConfigDict(frozen=True, extra="forbid", json_schema_serialization_defaults_required=True)

#: why a certificate's `retrieval_config_sha256` is null (recorded in the policy manifest)
NO_RETRIEVAL = "the evidence passages were given in the dataset: nothing was retrieved"


class VerifierInfo(BaseModel):
    """The verifier whose records were read (ids and fingerprints; None where unknown)."""

    model_config = _STRICT

    verifier_id: str | None = None
    model: str | None = None
    model_sha256: str | None = Field(
        default=None, description="Weights fingerprint or provider model version."
    )
    prompt_id: str | None = None
    prompt_version: str | None = None
    prompt_sha256: str | None = None


class VerifierProvenance(BaseModel):
    """A verifier as the run manifest describes it, plus the hash of the retriever it
    searched with (None when its evidence came with the dataset)."""

    model_config = ConfigDict(frozen=True)

    info: VerifierInfo
    kind: str | None = None
    retrieval_config_sha256: str | None = None


class GateProvenance(BaseModel):
    """A gate's reranker and retriever as its records name them. Lists hold every
    distinct value among the records read (one, unless records were mixed)."""

    model_config = ConfigDict(frozen=True)

    gate_id: str
    reranker_model: list[str]
    reranker_sha256: list[str]
    retriever_kind: list[str]
    retriever_config_sha256: list[str]


class RetrievalProvenance(BaseModel):
    """Where the retrieval configuration hash of a policy's certificates comes from."""

    model_config = ConfigDict(frozen=True)

    source: Literal["gate", "verifier", "dataset"]
    config_sha256: list[str]
    note: str | None = None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def portable_model(name: str | None) -> str | None:
    """A model name without the machine's directories: `hf-nli//abs/dir/nli` names the
    model as `hf-nli/nli` (its sha256 identifies the weights), so a manifest holds no
    absolute path and a certificate reads the same on any machine."""
    if name is None:
        return None
    provider, sep, rest = name.partition("/")
    if sep and Path(rest).is_absolute():
        return f"{provider}/{Path(rest).name}"
    return Path(name).name if Path(name).is_absolute() else name


def _section(block: dict[str, Any], key: str) -> dict[str, Any]:
    found = block.get(key)
    return found if isinstance(found, dict) else {}


def verifier_provenance(block: dict[str, Any]) -> VerifierProvenance:
    """A run manifest's verifier block read for provenance: a local model's `fingerprint`
    (nli-local), or a language-model verifier's client model, local fingerprint and
    prompt identity; a lexical baseline has no model."""
    client, prompt = (_section(block, key) for key in ("client", "prompt"))
    retriever = block.get("retriever")
    info = VerifierInfo(
        verifier_id=_text(block.get("id")),
        model=portable_model(_text(block.get("model") or client.get("model"))),
        model_sha256=_text(block.get("fingerprint") or client.get("fingerprint")),
        prompt_id=_text(prompt.get("id")),
        prompt_version=_text(prompt.get("version")),
        prompt_sha256=_text(prompt.get("sha256")),
    )
    return VerifierProvenance(
        info=info,
        kind=_text(block.get("kind")),
        retrieval_config_sha256=config_sha256(retriever) if isinstance(retriever, dict) else None,
    )


def gate_provenance(gate_id: str, records: Iterable[GateRecord]) -> GateProvenance:
    """The reranker and retriever identities of one gate's records."""
    found = list(records)

    def distinct(values: Iterable[str | None]) -> list[str]:
        return sorted({v for v in values if v is not None})

    return GateProvenance(
        gate_id=gate_id,
        reranker_model=distinct(portable_model(r.reranker.model) for r in found),
        reranker_sha256=distinct(r.reranker.model_sha256 for r in found),
        retriever_kind=distinct(r.retriever.kind for r in found),
        retriever_config_sha256=distinct(r.retriever.config_sha256 for r in found),
    )


def retrieval_provenance(
    verifier: VerifierProvenance | None, gate: GateProvenance | None
) -> RetrievalProvenance:
    """A gate's retriever when the policy is chained behind one, else the verifier's
    own retriever, else none (the dataset gave the evidence)."""
    if gate is not None and gate.retriever_config_sha256:
        return RetrievalProvenance(source="gate", config_sha256=gate.retriever_config_sha256)
    if verifier is not None and verifier.retrieval_config_sha256 is not None:
        return RetrievalProvenance(
            source="verifier", config_sha256=[verifier.retrieval_config_sha256]
        )
    return RetrievalProvenance(source="dataset", config_sha256=[], note=NO_RETRIEVAL)


__all__ = [
    "NO_RETRIEVAL",
    "GateProvenance",
    "RetrievalProvenance",
    "VerifierInfo",
    "VerifierProvenance",
    "gate_provenance",
    "portable_model",
    "retrieval_provenance",
    "verifier_provenance",
]
