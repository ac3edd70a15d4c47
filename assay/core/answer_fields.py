"""Optional dataset fields policies read.

They live in `assay.core` so the answers models, the run records and the policies share
one definition. Every field is optional; a model that carries them dumps no key for an
absent one (`omit_absent`), so records and hashes of datasets without them stay
byte-identical.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from enum import StrEnum
from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationInfo, field_validator

GoldAction = Literal["full", "partial", "conflict", "abstain"]
GOLD_ACTIONS: tuple[GoldAction, ...] = ("full", "partial", "conflict", "abstain")
"""The gold response actions (`gold_action`), in tie-break order."""
Split = Literal["train", "dev", "test"]


# `defer_build=True`: a model's validator is built when first used, not on import, so a
# command that never uses these models (a ForceBench run uses none of factuality's, items'
# or the gate's) does not pay for building them (~30 ms of start-up over core's models).


class EvidenceLabel(StrEnum):
    """Gold label of a question: should an evidence gate pass it or abstain?"""

    HAS_EVIDENCE = "has_evidence"  # should pass
    NO_EVIDENCE = "no_evidence"  # should abstain (the gate metrics' positive class)


class CitationQuality(StrEnum):
    """Gold quality of an answer's citations."""

    GOOD = "GOOD"  # the cited evidence suffices without outside inference
    WEAK = "WEAK"  # indirect or incomplete
    BAD = "BAD"  # no verifiable support


GoldStatus = Literal["certified", "condition_limited", "conflicting", "omitted"]
GoldClaimLabel = Literal[
    "supported", "not_supported", "unsupported", "contradicted", "partially_supported"
]
"""Gold labels of a given claim. Read case- and separator-insensitively; anything else is
refused at load: a `yes` would otherwise count silently as not supported."""
USABLE_GOLD: frozenset[str] = frozenset({"certified", "condition_limited"})

_NOT_WORD = re.compile(r"[^0-9a-z]+")


def normalise_intent(value: str | None) -> str | None:
    """Lower snake case ("Dosage Adjustment", "dosage-adjustment" -> "dosage_adjustment");
    blank -> None."""
    if value is None:
        return None
    text = _NOT_WORD.sub("_", value.strip().lower()).strip("_")
    return text or None


def _snake(value: object) -> object:
    """Labels read case- and separator-insensitively: "No Evidence" -> "no_evidence"."""
    return normalise_intent(value) if isinstance(value, str) else value


def _upper(value: object) -> object:
    return value.strip().upper() if isinstance(value, str) else value


def _choice(kind: Any, normalise: Callable[[object], object] = _snake) -> BeforeValidator:
    """Normalise, then check against `kind` (a Literal or a StrEnum); the error quotes
    the bad value (`must be full|partial|conflict|abstain, got 'maybe'`)."""
    is_enum = isinstance(kind, type) and issubclass(kind, StrEnum)
    allowed: tuple[str, ...] = tuple(kind) if is_enum else get_args(kind)

    def check(value: object) -> object:
        read = normalise(value)
        if read is None or read in allowed:
            return read
        raise ValueError(f"must be {'|'.join(allowed)}, got {value!r}")

    return BeforeValidator(check)


def _number(value: object) -> object:
    """A bool is not a support level (pydantic would read `true` as 1.0)."""
    if isinstance(value, bool):
        raise ValueError(f"must be a number in [0, 1], got {str(value).lower()}")
    return value


SupportValue = Annotated[float, BeforeValidator(_number), Field(ge=0.0, le=1.0)]


def omit_absent(data: Any, keys: Iterable[str]) -> Any:
    """Drop `keys` whose value is None from a dumped dict (for wrap serializers) and move
    the present ones last, so the keys a record always had keep their order."""
    if isinstance(data, dict):
        for key in keys:
            if key in data:
                value = data.pop(key)
                if value is not None:
                    data[key] = value
    return data


class ResponseFields(BaseModel):
    """Per-response (question item) fields: slices, tuning splits and gold labels."""

    model_config = ConfigDict(defer_build=True)

    intent: Annotated[str | None, BeforeValidator(_snake)] = Field(
        default=None, description="Question intent, lower snake case."
    )
    source_url: str | None = Field(
        default=None, description="The item's source URL, carried through."
    )
    evidence_text: str | None = Field(default=None, description="Carried, never read.")
    claim_type: Annotated[str | None, BeforeValidator(_snake)] = Field(
        default=None, description="The item's type (a slice), lower snake case."
    )
    split: Annotated[Split | None, _choice(Split)] = Field(
        default=None, description="The tuning split the item belongs to."
    )
    gold_action: Annotated[GoldAction | None, _choice(GoldAction)] = Field(
        default=None, description="Gold: what a policy should do with the response."
    )
    evidence_label: Annotated[EvidenceLabel | None, _choice(EvidenceLabel)] = Field(
        default=None, description="Gold: whether the evidence supports an answer."
    )
    gold_support: SupportValue | None = Field(
        default=None, description="1 (fully traceable), alpha (partly) or 0 (not)."
    )
    gold_citation_quality: Annotated[CitationQuality | None, _choice(CitationQuality, _upper)] = (
        Field(default=None, description="Gold: the grade of the response's citations.")
    )


RESPONSE_FIELDS: tuple[str, ...] = tuple(ResponseFields.model_fields)


class ClaimFields(BaseModel):
    """Per-claim fields: gold labels, and how a policy must treat the claim; None means
    absent (policies apply their defaults: `critical` true, `required` = `critical`,
    `unsupported_by_design` false)."""

    model_config = ConfigDict(defer_build=True)

    claim_type: Annotated[str | None, BeforeValidator(_snake)] = Field(
        default=None, description="The claim's type (a slice), lower snake case."
    )
    critical: bool | None = Field(
        default=None, description="Whether the claim is critical (absent: true)."
    )
    required: bool | None = Field(
        default=None, description="Whether the answer needs the claim (absent: = critical)."
    )
    gold_status: Annotated[GoldStatus | None, _choice(GoldStatus)] = Field(
        default=None, description="Gold: the claim's status."
    )
    gold_usable: bool | None = Field(
        default=None, validate_default=True, description="Derived from `gold_status` when absent."
    )
    unsupported_by_design: bool | None = Field(
        default=None,
        description="The claim is not meant to be supported: fail_closed never verifies it "
        "(absent: false).",
    )

    @field_validator("gold_usable")
    @classmethod
    def _usable_agrees_with_status(cls, value: bool | None, info: ValidationInfo) -> bool | None:
        """`gold_usable` = gold_status in {certified, condition_limited}; a given value
        that disagrees is an input error (named on `gold_usable`), not a silent override."""
        status = info.data.get("gold_status")
        if status is None:
            return value
        derived = status in USABLE_GOLD
        if value is not None and value != derived:
            raise ValueError(
                f"gold_usable = {str(value).lower()} disagrees with gold_status = {status!r}"
            )
        return derived


CLAIM_FIELDS: tuple[str, ...] = tuple(ClaimFields.model_fields)


def claim_fields_of(model: BaseModel) -> dict[str, Any]:
    """The claim fields a model holds, absent ones left out (to copy into a record)."""
    return {k: getattr(model, k) for k in CLAIM_FIELDS if getattr(model, k, None) is not None}


def response_fields_of(model: BaseModel) -> dict[str, Any]:
    """The response fields a model holds, absent ones left out."""
    return {k: getattr(model, k) for k in RESPONSE_FIELDS if getattr(model, k, None) is not None}
