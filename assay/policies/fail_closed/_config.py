"""The fail-closed policy's configuration: thresholds as decimal
strings, cost caps, the MSE depth, the rendering mode, the atomicity lint and an optional
calibration. Every default is written out by `describe()` and hashed as `policy_sha256`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from assay.errors import SpecError, first_problem
from assay.policies.engine._canonical import canonical_sha256
from assay.policies.engine._numbers import decimal_text, threshold
from assay.policies.engine._tuned import Tuned
from assay.policies.fail_closed._calibration import Calibration

KIND = "fail_closed"
VERSION = 1


class Mode(StrEnum):
    """What a rendering shows; strict is the default everywhere."""

    STRICT = "strict"
    MIXED = "mixed"
    DEBUG = "debug"


class Caps(BaseModel):
    """Cost caps: work beyond them is dropped, never the rule weakened."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", json_schema_serialization_defaults_required=True
    )

    max_claims: int = Field(default=12, ge=1)
    max_spans_per_claim: int = Field(default=20, ge=1)
    max_pairs: int = Field(default=240, ge=1)
    max_chunks: int = Field(default=10, ge=1)
    max_spans_per_chunk: int = Field(default=8, ge=1)


class FailClosedConfig(Tuned):
    """A `[[policies]]` block of kind `fail_closed`, resolved. Thresholds are kept as
    canonical decimal strings ("0.7" for "0.70"), so equal policies hash equal."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)

    name: str = KIND
    kind: Literal["fail_closed"] = "fail_closed"
    verifier: str | None = None
    after: str | None = Field(default=None, description="A gate policy this one follows.")
    mode: Mode = Mode.STRICT
    tau_entail: str = "0.85"
    tau_contradict: str = "0.70"
    caps: Caps = Field(default_factory=Caps)
    mse_max_spans: int = Field(default=3, ge=1)
    max_claim_tokens: int = Field(default=40, ge=1)
    reject_non_atomic: bool = False
    calibration: Calibration | None = None

    @field_validator("tau_entail", "tau_contradict", mode="before")
    @classmethod
    def _decimal(cls, value: object, info: Any) -> str:
        try:
            threshold(value, field=info.field_name)  # type: ignore[arg-type]
        except SpecError as exc:
            raise ValueError(exc.message) from None
        return decimal_text(str(value).strip())

    @property
    def tau_entail_value(self) -> float:
        return float(self.tau_entail)

    @property
    def tau_contradict_value(self) -> float:
        return float(self.tau_contradict)

    def with_thresholds(self, **values: str) -> FailClosedConfig:
        """The same policy with other thresholds (tuning and sweeps), validated."""
        return FailClosedConfig.model_validate({**self.resolved(), **values})

    def resolved(self) -> dict[str, Any]:
        """Every setting written out (the manifest's configuration), JSON-ready."""
        return self.model_dump(mode="json")

    def describe(self) -> dict[str, Any]:
        """The resolved configuration with the kind's version (what is hashed)."""
        return {**self.resolved(), "version": VERSION}

    @property
    def sha256(self) -> str:
        """`policy_sha256`: the hash of `describe()`'s canonical JSON."""
        return canonical_sha256(self.describe())


def load_config(data: dict[str, Any], *, file: str | None = None) -> FailClosedConfig:
    """A configuration from a TOML block; a bad key or value is one line naming it."""
    try:
        return FailClosedConfig.model_validate(data)
    except ValidationError as exc:
        problem = first_problem(exc)
        message = problem.message
        if problem.type == "extra_forbidden":
            message = "unknown key for a fail_closed policy"
        raise SpecError(message, file=file, field=problem.field) from None


__all__ = ["KIND", "VERSION", "Caps", "FailClosedConfig", "Mode", "load_config"]
