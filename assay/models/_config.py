"""Settings for calling a model: which one, how to decode, how to retry and throttle.

Each setting is declared once, in `assay.core.settings`; these models hold them as the
layers use them (decoding, retry policy, endpoint) and take their fields from there.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from assay.core.settings import (
    EndpointKeys,
    InstructorMode,
    ModelSettings,
    StructuredOutput,
    TransportName,
    declared,
)
from assay.errors import ModelConfigError


class Decoding(BaseModel):
    """Decoding settings. All of them are part of the cache key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float = declared("temperature")
    top_p: float | None = declared("top_p")
    max_tokens: int = declared("max_tokens")
    seed: int | None = declared("seed")
    stop: list[str] | None = declared("stop")
    logprobs: bool = declared("logprobs")
    top_logprobs: int | None = declared("top_logprobs")

    @model_validator(mode="after")
    def _top_logprobs_need_logprobs(self) -> Decoding:
        if self.top_logprobs is not None and not self.logprobs:
            raise ModelConfigError(
                f"top_logprobs = {self.top_logprobs} needs logprobs = true (it is false)"
            )
        return self

    def logprob_options(self) -> dict[str, Any]:
        """The request's `logprobs`/`top_logprobs` as both transports send them (none
        when not asked: the request is then exactly what it was before)."""
        if not self.logprobs:
            return {}
        options: dict[str, Any] = {"logprobs": True}
        if self.top_logprobs is not None:
            options["top_logprobs"] = self.top_logprobs
        return options


class RetryPolicy(BaseModel):
    """Finite retries with exponential backoff and jitter; Retry-After is honoured."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_attempts: int = declared("max_attempts")
    initial_wait_s: float = declared("initial_wait_s")
    max_wait_s: float = declared("max_wait_s")
    jitter_s: float = Field(default=1.0, ge=0.0)


class ModelConfig(BaseModel):
    """One model endpoint. Credentials are referenced by env-var name, never stored."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(description="litellm model string, e.g. 'openai/gpt-4o-mini'.")
    api_base: str | None = declared("api_base")
    api_key_env: str | None = declared("api_key_env")
    timeout_s: float = declared("timeout_s")
    max_concurrency: int = declared("max_concurrency")
    retry: RetryPolicy = Field(default_factory=RetryPolicy)
    structured_output: StructuredOutput = declared("structured_output")
    instructor_mode: InstructorMode = declared("instructor_mode")
    max_reasks: int = declared("max_reasks")
    extra_body: dict[str, Any] = declared("extra_body")
    transport: TransportName = declared("transport")
    rpm: int | None = declared("rpm")
    tpm: int | None = declared("tpm")
    adaptive_concurrency: bool = declared("adaptive_concurrency")
    input_cost_per_token: float | None = declared("input_cost_per_token")
    output_cost_per_token: float | None = declared("output_cost_per_token")
    max_cost_usd: float | None = declared("max_cost_usd")

    @field_validator("model")
    @classmethod
    def _has_provider(cls, v: str) -> str:
        if "/" not in v or v.startswith("/") or v.endswith("/"):
            raise ModelConfigError(
                f"model id {v!r} needs a provider prefix, e.g. 'openai/gpt-4o-mini' "
                "or 'openai/<name>' with api_base for an OpenAI-compatible server"
            )
        return v

    @model_validator(mode="after")
    def _instructor_settings_need_instructor(self) -> ModelConfig:
        """Re-asks and instructor modes would be silently ignored by the other modes."""
        if self.structured_output == "instructor":
            return self
        for name, default in (("max_reasks", 0), ("instructor_mode", "tools")):
            if getattr(self, name) != default:
                raise ModelConfigError(
                    f"{name} = {getattr(self, name)!r} needs structured_output = "
                    f'"instructor" (it is {self.structured_output!r})'
                )
        return self

    @model_validator(mode="after")
    def _lean_transport_serves_openai_only(self) -> ModelConfig:
        """The lean path speaks only the OpenAI chat-completions wire format."""
        if self.transport != "openai":
            return self
        if self.provider != "openai":
            raise ModelConfigError(
                f'transport = "openai" serves openai/<model> ids (OpenAI, or an '
                f"OpenAI-compatible server at api_base); {self.model!r} needs "
                'transport = "litellm"'
            )
        if self.structured_output == "instructor":
            raise ModelConfigError(
                'structured_output = "instructor" asks through litellm: it needs '
                'transport = "litellm"'
            )
        return self

    @model_validator(mode="after")
    def _prices_come_in_pairs(self) -> ModelConfig:
        """One price alone would price the other side of every request at zero."""
        given = (self.input_cost_per_token, self.output_cost_per_token)
        if (given[0] is None) != (given[1] is None):
            missing = "output" if given[1] is None else "input"
            raise ModelConfigError(
                f"{missing}_cost_per_token is missing: give both input_cost_per_token "
                "and output_cost_per_token (USD per token)"
            )
        return self

    @property
    def provider(self) -> str:
        return self.model.split("/", 1)[0]


def _fields_of(model: type[BaseModel], values: Mapping[str, Any]) -> dict[str, Any]:
    return {name: values[name] for name in model.model_fields if name in values}


def decoding_of(settings: ModelSettings) -> Decoding:
    """The decoding part of resolved settings (`assay.core.settings.resolve`)."""
    return Decoding(**_fields_of(Decoding, dict(settings)))


def config_of(model: str, settings: ModelSettings, endpoint: EndpointKeys) -> ModelConfig:
    """The endpoint config of `model`: resolved settings and a block's endpoint keys,
    each to the config (or its retry policy) field of the same name."""
    values = {
        **dict(settings),
        **{name: getattr(endpoint, name) for name in EndpointKeys.model_fields},
    }
    retry = RetryPolicy(**_fields_of(RetryPolicy, values))
    return ModelConfig(model=model, retry=retry, **_fields_of(ModelConfig, values))
