"""The `[gate]` block of a run spec: a local cross-encoder reranker scoring each question
of the run's answers against the passages a retriever finds for it, or
the lexical `baseline:overlap` scorer, which needs no model (demos, tests, a floor).

Every key is checked when the spec loads, each error naming its `gate.<key>`; the
retriever may be the run's own (the corpus of its `retrieval` verifier).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import Field, ValidationInfo, field_validator, model_validator

from assay.errors import SpecError
from assay.inputs import PathText
from assay.runs.spec._blocks import Strict, VerifierSpec

RERANKER_PREFIX = "hf-ce/"
BASELINE_RERANKER = "baseline:overlap"
RetrieverKind = Literal["bm25", "dense", "hybrid"]


class GateSpec(Strict):
    """`[gate]`: which reranker, how deep to retrieve, and over which corpus."""

    model: str = Field(
        description="hf-ce/<directory or hub id>: a one-output cross-encoder; or "
        "baseline:overlap: the share of the question's content words in the passage."
    )
    name: str | None = Field(default=None, description="The gate_id; defaults to `model`.")
    k1_initial: int = Field(
        default=50, ge=1, le=100_000, description="The initial pool: s_initial reads its ranks."
    )
    k1_expanded: int = Field(
        default=100,
        ge=1,
        le=100_000,
        description="Passages retrieved and scored per question (>= k1_initial).",
    )
    top_k: int = Field(
        default=12,
        ge=1,
        le=100_000,
        description="Evidence passages to keep; recorded in each gate record.",
    )
    max_length: int = Field(default=512, ge=16, description="Reranker input cap, in tokens.")
    batch_size: int = Field(
        default=32, ge=1, le=4096, description="Question-passage pairs scored at once."
    )
    normalization: Literal["sigmoid", "identity"] = Field(
        default="sigmoid",
        description="Reranker output to score: sigmoid of a logit, or as it is.",
    )
    corpus: PathText | None = Field(
        default=None, description="Passages JSONL, relative to the spec."
    )
    dense_model: PathText | None = Field(default=None, description="Local embedding model dir.")
    retriever: RetrieverKind | None = Field(
        default=None,
        validate_default=True,
        description="Default: hybrid with `dense_model`, else bm25.",
    )

    @model_validator(mode="before")
    @classmethod
    def _baseline_scores_are_shares(cls, data: Any) -> Any:
        """The baseline's scores already lie in [0, 1]: its default is `identity`."""
        if isinstance(data, dict) and data.get("model") == BASELINE_RERANKER:
            return {"normalization": "identity", **data}
        return data

    @field_validator("model")
    @classmethod
    def _reranker_model(cls, model: str) -> str:
        if model == BASELINE_RERANKER:
            return model
        if not model.startswith(RERANKER_PREFIX) or not model[len(RERANKER_PREFIX) :].strip("/"):
            raise ValueError(
                f"expected {RERANKER_PREFIX}<directory or hub id> or {BASELINE_RERANKER!r}, "
                f"got {model!r}"
            )
        return model

    @field_validator("normalization")
    @classmethod
    def _baseline_is_not_a_logit(cls, value: str, info: ValidationInfo) -> str:
        if info.data.get("model") == BASELINE_RERANKER and value != "identity":
            raise ValueError(
                f'{BASELINE_RERANKER} scores are shares in [0, 1], not logits: use "identity"'
            )
        return value

    @field_validator("k1_expanded")
    @classmethod
    def _expanded_covers_initial(cls, value: int, info: ValidationInfo) -> int:
        initial = info.data.get("k1_initial")
        if initial is not None and value < initial:
            raise ValueError(f"k1_expanded ({value}) must be >= k1_initial ({initial})")
        return value

    @field_validator("top_k")
    @classmethod
    def _top_k_within_pool(cls, value: int, info: ValidationInfo) -> int:
        expanded = info.data.get("k1_expanded")
        if expanded is not None and value > expanded:
            raise ValueError(f"top_k ({value}) must be <= k1_expanded ({expanded})")
        return value

    @field_validator("retriever")
    @classmethod
    def _retriever_has_its_model(
        cls, value: RetrieverKind | None, info: ValidationInfo
    ) -> RetrieverKind | None:
        dense = info.data.get("dense_model")
        if value in ("dense", "hybrid") and not dense:
            raise ValueError(f'retriever "{value}" needs `dense_model` (an embedding model dir)')
        if value == "bm25" and dense:
            raise ValueError('`dense_model` is used by retriever "dense" or "hybrid", not "bm25"')
        return value

    @property
    def gate_id(self) -> str:
        return self.name or self.model

    @property
    def local_model(self) -> bool:
        """Whether the reranker is a transformers model (the `local` extra)."""
        return self.model != BASELINE_RERANKER


@dataclass(frozen=True)
class GateRetrieval:
    """The corpus and retriever a gate searches, resolved against the run's verifiers."""

    corpus: str
    corpus_field: str
    kind: RetrieverKind
    dense_model: str | None


class _Factuality(Protocol):
    @property
    def verifiers(self) -> Sequence[VerifierSpec]: ...


class GatedRun(Protocol):
    """What `gate_retrieval` reads of a `RunSpec` (a protocol, so this module need not
    import `assay.runs.spec._spec`, which imports it)."""

    @property
    def gate(self) -> GateSpec | None: ...

    @property
    def factuality(self) -> _Factuality | None: ...


def gate_retrieval(spec: GatedRun, where: str | None) -> GateRetrieval | None:
    """The gate's corpus and retriever: its own `corpus`, else the corpus (and dense
    model) of the run's first `retrieval` verifier. Errors name the spec field."""
    gate = spec.gate
    if gate is None:
        return None
    if spec.factuality is None:
        raise SpecError(
            "[gate] scores the questions of [factuality] answers; add a [factuality] section",
            file=where,
            field="gate",
        )
    corpus, field, dense = gate.corpus, "gate.corpus", gate.dense_model
    if corpus is None:
        for i, verifier in enumerate(spec.factuality.verifiers):
            params = verifier.params()
            if verifier.kind == "retrieval" and isinstance(params.get("corpus"), str):
                corpus, field = params["corpus"], f"factuality.verifiers[{i}].corpus"
                dense = dense or params.get("dense_model")
                break
    if corpus is None:
        raise SpecError(
            "needs a passages file to retrieve from (`corpus`), or a retrieval verifier "
            "whose corpus it can share",
            file=where,
            field="gate.corpus",
        )
    kind: RetrieverKind = gate.retriever or ("hybrid" if dense else "bm25")
    return GateRetrieval(corpus, field, kind, dense if kind != "bm25" else None)
