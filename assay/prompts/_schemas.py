"""Output models that prompts name in their `output_schema` field.

The parser validates a model's JSON against one of these; the label set itself is
checked against the prompt's own `labels`, so one schema serves many prompts. They are
entries of the SCHEMAS registry (`assay.core.registry`), so a plugin can add its own with
``@SCHEMAS.register("MyVerdict")`` on a pydantic model.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from assay.core.registry import SCHEMAS


class _Verdict(BaseModel):
    model_config = ConfigDict(extra="allow")


@SCHEMAS.register("SupportVerdict")
class SupportVerdict(_Verdict):
    """Generic support judging: one label, a confidence and a rationale."""

    label: str
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)
    rationale: str | None = None


@SCHEMAS.register("ForceVerdict")
class ForceVerdict(_Verdict):
    """Force-aware judging: is the claim's force warranted, and if not, along which axis."""

    label: str
    primary_axis: str | None = Field(
        default=None, description="Axis (or, for ablations, dimension) of the main gap."
    )
    severity: int | None = Field(default=None, ge=0, le=3)
    warranted_claim: str | None = None
    rationale: str | None = None


@SCHEMAS.register("LabelVerdict")
class LabelVerdict(_Verdict):
    """The minimal contract: just a label (and optionally anything else)."""

    label: str


@SCHEMAS.register("NLIVerdict")
class NLIVerdict(_Verdict):
    """An entailment label with the model's probability that the premise entails the claim."""

    label: str
    entailment_probability: float = Field(ge=0.0, le=1.0)
    rationale: str | None = None


@SCHEMAS.register("ClaimList")
class ClaimList(_Verdict):
    """Decomposition: the verifiable claims in one sentence (an empty list is valid)."""

    claims: list[str]
