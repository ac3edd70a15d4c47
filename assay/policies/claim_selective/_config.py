"""The claim-selective policy's configuration: the selector and its
thresholds θ = (conflict, support, condition_limited, limitation), the intent families,
the conflict scope, the certificate standard and the off-by-default source priors.

Thresholds are decimal strings, validated before anything is computed (one line
naming the field) and written in one canonical form ("0.30" -> "0.3"), so one policy has
one `policy_sha256`. The resolved configuration writes every default out.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from assay.errors import SpecError, first_problem
from assay.policies.claim_selective._inputs import normalise_intent
from assay.policies.engine._numbers import decimal_text, threshold

THRESHOLD_NAMES = ("conflict", "support", "condition_limited", "limitation")
FALLBACK_FAMILY = "mixed"
PRIORS_LEXICON = "cs-priors@1"


def _decimal(value: object) -> str:
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        raise ValueError(f'must be a decimal string such as "0.35", got {value!r}')
    try:
        threshold(value, field="")
    except SpecError as exc:
        raise ValueError(exc.message) from None
    return decimal_text(str(value).strip())


Decimal01 = Annotated[str, BeforeValidator(_decimal)]


class Theta(NamedTuple):
    """One family's thresholds as floats (what the rule compares)."""

    conflict: float
    support: float
    condition_limited: float
    limitation: float


class SelectorThresholds(BaseModel):
    """θ for the rule TR; `condition_limited <= support`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    conflict: Decimal01 = "0.55"
    support: Decimal01 = "0.35"
    condition_limited: Decimal01 = "0.3"
    limitation: Decimal01 = "0.5"

    @model_validator(mode="after")
    def _ordered(self) -> SelectorThresholds:
        if float(self.condition_limited) > float(self.support):
            raise ValueError(
                f"condition_limited ({self.condition_limited}) must be <= support ({self.support})"
            )
        return self

    def theta(self) -> Theta:
        return Theta(*(float(getattr(self, n)) for n in THRESHOLD_NAMES))


class CertificateStandard(BaseModel):
    """What makes a claim certificate valid for `uccr_cert`; fixed per evaluation,
    independent of the selector under test. Defaults: the paper's tuned point."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    support_min: Decimal01 = "0.35"
    limited_support_min: Decimal01 = "0.3"
    conflict_max: Decimal01 = "0.55"

    @model_validator(mode="after")
    def _ordered(self) -> CertificateStandard:
        if float(self.limited_support_min) > float(self.support_min):
            raise ValueError(
                f"limited_support_min ({self.limited_support_min}) must be <= support_min "
                f"({self.support_min})"
            )
        return self


class DosageLabelRescue(BaseModel):
    """`dosage_label_rescue`: in the instruction-specific family, for a response whose
    `source` is listed, a pool passage flagged `dosage_instruction` lifts S_sup to the
    family's `support`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sources: list[str] = Field(min_length=1)
    cues: str = Field(
        default=PRIORS_LEXICON, description="The cue lexicon that flagged the passages."
    )


class ReviewDowngrade(BaseModel):
    """`review_downgrade`: a `full` response whose `source` is listed becomes `partial`
    when a claim of a listed type has a pool passage at the listed evidence level."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sources: list[str] = Field(min_length=1)
    claim_types: list[str] = Field(min_length=1)
    evidence_level: str = "review"


class Priors(BaseModel):
    """The paper's scoped source-family priors, both off unless configured."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    dosage_label_rescue: DosageLabelRescue | None = None
    review_downgrade: ReviewDowngrade | None = None


def _family(conflict: str, support: str, limited: str, limitation: str) -> dict[str, str]:
    return {
        "conflict": conflict,
        "support": support,
        "condition_limited": limited,
        "limitation": limitation,
    }


DEFAULT_FAMILIES: dict[str, dict[str, str]] = {
    "full_certify": _family("0.55", "0.35", "0.30", "0.50"),
    "partial_oriented": _family("0.55", "0.35", "0.30", "0.25"),
    "conflict_oriented": _family("0.40", "0.50", "0.30", "0.50"),
    "instruction_specific": _family("0.55", "0.50", "0.30", "0.50"),
    FALLBACK_FAMILY: _family("0.55", "0.35", "0.30", "0.50"),
}
DEFAULT_INTENT_FAMILIES: dict[str, str] = {
    "indication": "full_certify",
    "effectiveness": "full_certify",
    "pregnancy": "partial_oriented",
    "lactation": "partial_oriented",
    "special_population": "partial_oriented",
    "contraindication": "conflict_oriented",
    "interaction": "conflict_oriented",
    "dosage": "instruction_specific",
    "dosage_adjustment": "instruction_specific",
    "missed_dose": "instruction_specific",
    "monitoring": "instruction_specific",
    "research_question": FALLBACK_FAMILY,
    "other": FALLBACK_FAMILY,
}


class ClaimSelectiveConfig(BaseModel):
    """A `[[policies]]` block of kind `claim_selective`, resolved.

    `thresholds` serves the threshold selector, `families` (partial overrides merged into
    the defaults) and `intent_families` the intent-aware one; the other's keys are an
    error, not silently ignored."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = "claim_selective"
    kind: Literal["claim_selective"] = "claim_selective"
    selector: Literal["threshold", "intent_aware"] = "threshold"
    verifier: str | None = None
    after: str | None = Field(default=None, description="The gate this policy is chained behind.")
    thresholds: SelectorThresholds | None = None
    families: dict[str, SelectorThresholds] | None = None
    intent_families: dict[str, str] | None = None
    conflict_scope: Literal["critical", "any"] = "critical"
    certificate_standard: CertificateStandard = Field(default_factory=CertificateStandard)
    priors: Priors = Field(default_factory=Priors)
    tuned: dict[str, Any] | None = Field(default=None, description="Tuning provenance.")

    @model_validator(mode="before")
    @classmethod
    def _fill_selector_defaults(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        data = dict(data)
        if data.get("selector", "threshold") == "intent_aware":
            if data.get("thresholds") is not None:
                raise SpecError(
                    "applies to selector 'threshold'; set families.<family>.<name> for "
                    "selector 'intent_aware'",
                    field="thresholds",
                )
            data["families"] = _merged_families(data.get("families"))
            data["intent_families"] = _merged_intents(data.get("intent_families"))
        else:
            for key in ("families", "intent_families"):
                if data.get(key) is not None:
                    raise SpecError("applies to selector 'intent_aware' only", field=key)
            if data.get("thresholds") is None:
                data["thresholds"] = {}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> ClaimSelectiveConfig:
        families = self.families or {}
        for intent, family in (self.intent_families or {}).items():
            if family not in families:
                raise SpecError(
                    f"names family {family!r}; known: {', '.join(sorted(families))}",
                    field=f"intent_families.{intent}",
                )
        if self.priors.dosage_label_rescue is not None and self.selector != "intent_aware":
            raise SpecError(
                "needs selector 'intent_aware' (it acts on the instruction_specific family)",
                field="priors.dosage_label_rescue",
            )
        return self

    def family_of(self, intent: str | None) -> str | None:
        """The policy family of a response's intent (None for the threshold selector)."""
        if self.selector == "threshold":
            return None
        mapping = self.intent_families or {}
        return mapping.get(normalise_intent(intent) or "", FALLBACK_FAMILY)

    def thresholds_of(self, family: str | None) -> SelectorThresholds:
        if family is None:
            return self.thresholds or SelectorThresholds()
        return (self.families or {})[family]


def _merged_families(given: Any) -> Any:
    if given is not None and not isinstance(given, Mapping):
        return given
    merged: dict[str, Any] = {name: dict(values) for name, values in DEFAULT_FAMILIES.items()}
    for name, values in (given or {}).items():
        if isinstance(values, Mapping):
            merged[name] = {**merged.get(name, {}), **values}
        else:
            merged[name] = values
    return merged


def _merged_intents(given: Any) -> Any:
    if given is not None and not isinstance(given, Mapping):
        return given
    merged = dict(DEFAULT_INTENT_FAMILIES)
    for intent, family in (given or {}).items():
        merged[normalise_intent(str(intent)) or str(intent)] = family
    return merged


def parse_config(
    block: Mapping[str, Any], *, file: str | Path | None = None
) -> ClaimSelectiveConfig:
    """A policy block as a `ClaimSelectiveConfig`, or a one-line `SpecError` naming the file
    and the first bad key (an unknown key, a threshold "1.5", condition_limited > support)."""
    try:
        return ClaimSelectiveConfig.model_validate(dict(block))
    except SpecError as exc:
        raise SpecError(exc.message, file=file, field=exc.field) from None
    except ValidationError as exc:
        problem = first_problem(exc)
        raise SpecError(problem.message, file=file, field=problem.field) from None


def with_params(config: ClaimSelectiveConfig, params: Mapping[str, str]) -> ClaimSelectiveConfig:
    """`config` with tuned thresholds: `support` (every family of an intent-aware policy)
    or `<family>.support` (that family only)."""
    data = config.model_dump(mode="json")
    for key, value in params.items():
        family, _, name = key.rpartition(".")
        if name not in THRESHOLD_NAMES:
            raise SpecError(f"unknown threshold {name!r}", field=key)
        if config.selector == "threshold":
            if family:
                raise SpecError("selector 'threshold' has no families", field=key)
            data["thresholds"][name] = value
            continue
        targets = [family] if family else list(data["families"])
        for target in targets:
            if target not in data["families"]:
                raise SpecError(f"unknown family {target!r}", field=key)
            data["families"][target][name] = value
    if config.selector == "intent_aware":
        data.pop("thresholds", None)
    else:
        data.pop("families", None)
        data.pop("intent_families", None)
    return parse_config(data)


__all__ = [
    "DEFAULT_FAMILIES",
    "DEFAULT_INTENT_FAMILIES",
    "FALLBACK_FAMILY",
    "PRIORS_LEXICON",
    "THRESHOLD_NAMES",
    "CertificateStandard",
    "ClaimSelectiveConfig",
    "DosageLabelRescue",
    "Priors",
    "ReviewDowngrade",
    "SelectorThresholds",
    "Theta",
    "parse_config",
    "with_params",
]
