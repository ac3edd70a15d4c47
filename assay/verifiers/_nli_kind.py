"""The `nli-local` verifier kind: a local transformers NLI classifier, no API.

Registered lazily (see `assay.verifiers`): this module is imported only when a spec
names the kind, and torch/transformers only when the model first runs.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from assay.core.building import BuildContext
from assay.core.verification import Verifier


class LocalNLIParams(BaseModel):
    """The nli-local block's keys."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(description="hf-nli/<directory or hub id>")
    threshold: float = Field(
        default=0.8,
        ge=0.0,
        le=1.0,
        description="Entailment probability above which a claim is supported.",
    )
    batch_size: int = Field(
        default=32, ge=1, le=4096, description="Premise-claim pairs scored at once."
    )
    label_map: dict[str, int] | None = Field(
        default=None,
        description="Label -> output index, when the model's config does not name its labels.",
    )
    premise: Literal["chunk", "sentence"] = Field(
        default="chunk",
        description="What the model reads: token windows of a passage, or its sentences.",
    )
    max_premises: int | None = Field(
        default=None,
        ge=1,
        description="Cost cap: premises scored per claim (the rest: pairs_dropped_by_cap).",
    )
    quantize: Literal["int8"] | None = Field(
        default=None,
        description="Opt-in: run the model's Linear layers in int8 (CPU only; own cache keys).",
    )
    name: str | None = Field(
        default=None, description="The id its records carry instead of the default one."
    )


def nli_local(params: LocalNLIParams, ctx: BuildContext) -> Verifier:
    """A `LocalNLIVerifier` from its block."""
    from assay.verifiers._nli_local import LocalNLIVerifier

    return LocalNLIVerifier(
        params.model,
        threshold=params.threshold,
        batch_size=params.batch_size,
        label_map=params.label_map,
        premise=params.premise,
        max_premises=params.max_premises,
        quantize=params.quantize,
        name=params.name,
        cache=ctx.cache,
        use_cache=ctx.use_cache,
        refresh_cache=ctx.refresh_cache,
    )
