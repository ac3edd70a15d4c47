"""The evidence gate's vocabulary, configuration and score normalisation.

The gate decides per question from reranker scores of retrieved passages. Its
configuration is validated before anything is computed: thresholds are decimal
strings in [0, 1] with `tau > tau_min`, pool sizes are ordered, unknown keys are a
one-line error. Reranker logits become scores with the sigmoid (raw logits are what the
gate stage records; library activations differ between model configs).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from decimal import Decimal
from enum import StrEnum
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from assay.core.answer_fields import CitationQuality, EvidenceLabel
from assay.core.records import GateRecord
from assay.errors import SpecError, first_problem
from assay.policies.engine._numbers import decimal_text, threshold
from assay.policies.engine._tuned import Tuned
from assay.retrieval import normalise_scores

KIND = "evidence_gate"
VERSION = 1


class SupportLevel(StrEnum):
    """How much of a passed question's answer the cited evidence supports."""

    FULL = "full"  # 1: every claim directly verifiable
    PARTIAL = "partial"  # alpha: some claims need minor inference
    NONE = "none"  # 0: nothing traceable


class GateRule(StrEnum):
    """Which branch of the decision rule decided a question."""

    ERROR = "error"
    NO_CANDIDATES = "1_no_candidates"
    BELOW_MIN = "2_below_min"
    INSUFFICIENT_AFTER_REASSESS = "3_insufficient_after_reassess"
    SUFFICIENT = "4a_sufficient"
    SUFFICIENT_AFTER_REASSESS = "4b_sufficient_after_reassess"


class NativeDecision(StrEnum):
    """The evidence-gate paper's own names (plus assay's REFUSE)."""

    ANSWER = "ANSWER"
    NO_ANSWER = "NO_ANSWER"
    REFUSE = "REFUSE"


class RefusalReason(StrEnum):
    """Why a question was refused at the gate (fail closed: never a pass)."""

    MISSING_GATE_RECORD = "missing_gate_record"
    GATE_NOT_OK = "gate_not_ok"
    INVALID_SCORE = "invalid_score"  # a score absent, NaN, infinite or outside [0, 1]
    INCONSISTENT_SCORES = "inconsistent_scores"  # recorded s_initial/s_expanded disagree
    POOL_TOO_SMALL = "pool_too_small"  # the record scored fewer than k1_expanded ranks


Normalization = Literal["sigmoid", "identity"]


def reranker_scores(values: Sequence[float], normalization: Normalization) -> list[float]:
    """Reranker outputs as gate scores in [0, 1]: `sigmoid` of raw logits, or
    `identity` for models that already output probabilities (every value in [0, 1]).
    The mapping is retrieval's (one home); a value that cannot be a score is a one-line
    error naming `normalization`."""
    try:
        return normalise_scores(values, normalization)
    except ValueError as exc:
        hint = '; use normalization = "sigmoid" for logits' if normalization == "identity" else ""
        raise SpecError(f"{exc}{hint}", field="normalization") from None


def support_value(level: SupportLevel, alpha: Fraction) -> Fraction:
    """The support credit of one answered question: 1, alpha or 0."""
    return {SupportLevel.FULL: Fraction(1), SupportLevel.PARTIAL: alpha}.get(level, Fraction(0))


def support_from_claims(supported: Sequence[bool]) -> SupportLevel | None:
    """Support derived from verifications of the generated answer's claims (True = ok and
    `supported`; non-ok counts as not supported): full if all, none if no claim, partial
    otherwise; an answer with no claim has no support annotation (None)."""
    if not supported:
        return None
    if all(supported):
        return SupportLevel.FULL
    return SupportLevel.PARTIAL if any(supported) else SupportLevel.NONE


def parse_support(value: Any) -> SupportLevel | None:
    """A support annotation: 1 / "full", any number strictly between 0 and 1 / "partial"
    (credited alpha whatever the number), 0 / "none"; None stays None."""
    if value is None or isinstance(value, SupportLevel):
        return value
    if isinstance(value, str) and value.strip().lower() in {s.value for s in SupportLevel}:
        return SupportLevel(value.strip().lower())
    if isinstance(value, bool):
        raise ValueError(f"support must be 0, 1, a value between them or a level, got {value}")
    try:
        number = float(Decimal(str(value).strip()))
    except ArithmeticError:
        number = math.nan
    if not 0.0 <= number <= 1.0:  # also rejects NaN
        raise ValueError(
            f"support must be 0, 1, a value between them (partial) or full|partial|none, "
            f"got {value!r}"
        )
    if number == 1.0:
        return SupportLevel.FULL
    return SupportLevel.NONE if number == 0.0 else SupportLevel.PARTIAL


class GateQuestion(BaseModel):
    """One question as the gate reads it: its key, its gate record (None when missing),
    and the gold fields the metrics read. No text: decisions read ids and numbers."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    dataset: str
    question_id: str
    record: GateRecord | None = None
    label: EvidenceLabel | None = None
    support: SupportLevel | None = None
    citation_quality: CitationQuality | None = None

    @field_validator("support", mode="before")
    @classmethod
    def _support(cls, value: Any) -> SupportLevel | None:
        return parse_support(value)

    @field_validator("citation_quality", mode="before")
    @classmethod
    def _quality(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value

    @model_validator(mode="after")
    def _record_is_this_question(self) -> GateQuestion:
        if self.record is not None and (self.record.dataset, self.record.question_id) != self.key:
            raise ValueError(
                f"gate record of {self.record.dataset}/{self.record.question_id} given for "
                f"{self.dataset}/{self.question_id}"
            )
        return self

    @property
    def key(self) -> tuple[str, str]:
        return (self.dataset, self.question_id)


class EvidenceGateConfig(Tuned):
    """The resolved configuration of one `evidence_gate` policy (every default written
    out; what the manifest records and `policy_sha256` hashes). Thresholds are kept as
    canonical decimal strings ("0.3" for "0.30"), so equal settings hash equally."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)

    name: str = Field(min_length=1)
    kind: Literal["evidence_gate"] = "evidence_gate"
    gate: str | None = Field(default=None, description="The gate_id of the records read.")
    tau: str = "0.30"
    tau_min: str = "0.10"
    k1_initial: int = Field(default=50, ge=1)
    k1_expanded: int = Field(default=100, ge=1)
    top_k: int = Field(default=12, ge=1)
    alpha: str = Field(default="0.5", description="Support credit of a partial answer.")

    @field_validator("tau", "tau_min", "alpha", mode="before")
    @classmethod
    def _decimal(cls, value: Any, info: Any) -> str:
        threshold(value, field=info.field_name)  # a one-line error outside [0, 1]
        return decimal_text(str(value).strip())

    @model_validator(mode="after")
    def _ordered(self) -> EvidenceGateConfig:
        if not float(self.tau) > float(self.tau_min):
            raise SpecError(
                f"tau ({self.tau}) must be greater than tau_min ({self.tau_min})", field="tau"
            )
        if self.k1_initial > self.k1_expanded:
            raise SpecError(
                f"k1_initial ({self.k1_initial}) must not exceed k1_expanded ({self.k1_expanded})",
                field="k1_initial",
            )
        return self

    @classmethod
    def parse(
        cls, data: Mapping[str, Any], *, file: str | Path | None = None
    ) -> EvidenceGateConfig:
        """`data` (a `[[policies]]` block) as a config, or a one-line SpecError naming the
        file and the first bad field."""
        try:
            return cls.model_validate(dict(data))
        except SpecError as exc:
            raise SpecError(exc.message, file=file, field=exc.field) from None
        except ValidationError as exc:
            problem = first_problem(exc)
            message = "unknown key" if problem.type == "extra_forbidden" else problem.msg
            raise SpecError(message, file=file, field=problem.field) from None

    @property
    def tau_value(self) -> float:
        return float(self.tau)

    @property
    def tau_min_value(self) -> float:
        return float(self.tau_min)

    @property
    def alpha_fraction(self) -> Fraction:
        return Fraction(Decimal(self.alpha))

    def with_thresholds(self, tau: str, tau_min: str) -> EvidenceGateConfig:
        """The same policy at other thresholds (validated again)."""
        return EvidenceGateConfig.model_validate(
            {**self.model_dump(), "tau": tau, "tau_min": tau_min}
        )


class GateInputs(BaseModel):
    """What the gate reads for one run: each question with its gate record and gold."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str | None = None
    questions: list[GateQuestion] = Field(default_factory=list)


def ordered_questions(questions: Sequence[GateQuestion]) -> list[GateQuestion]:
    """Questions by (dataset, question_id); a repeated key is a caller's bug (the run
    reader resolves duplicates, last line wins, before this)."""
    by_key: dict[tuple[str, str], GateQuestion] = {}
    for question in questions:
        if question.key in by_key:
            raise ValueError(f"question {question.key} given twice")
        by_key[question.key] = question
    return [by_key[key] for key in sorted(by_key)]


__all__ = [
    "KIND",
    "VERSION",
    "CitationQuality",
    "EvidenceGateConfig",
    "EvidenceLabel",
    "GateInputs",
    "GateQuestion",
    "GateRule",
    "NativeDecision",
    "Normalization",
    "RefusalReason",
    "SupportLevel",
    "ordered_questions",
    "reranker_scores",
    "parse_support",
    "support_from_claims",
    "support_value",
]
