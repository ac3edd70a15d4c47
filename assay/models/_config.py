"""Settings for calling a model: which one, how to decode, how to retry and throttle."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from assay.errors import ModelConfigError


class Decoding(BaseModel):
    """Decoding settings. All of them are part of the cache key."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float = Field(default=0.0, ge=0.0, le=2.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    max_tokens: int = Field(default=1024, ge=1, description="Output cap per call.")
    seed: int | None = None
    stop: list[str] | None = None


class RetryPolicy(BaseModel):
    """Finite retries with exponential backoff and jitter; Retry-After is honoured."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_attempts: int = Field(default=6, ge=1, le=50, description="Attempts including the first.")
    initial_wait_s: float = Field(default=1.0, ge=0.0)
    max_wait_s: float = Field(default=60.0, ge=0.0, description="Cap on any single wait.")
    jitter_s: float = Field(default=1.0, ge=0.0)


StructuredOutput = Literal["auto", "json_schema", "json_object", "off", "instructor"]
InstructorMode = Literal["tools", "json", "md_json"]
TransportName = Literal["litellm", "openai"]


class ModelConfig(BaseModel):
    """One model endpoint. Credentials are referenced by env-var name, never stored."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = Field(description="litellm model string, e.g. 'openai/gpt-4o-mini'.")
    api_base: str | None = Field(default=None, description="OpenAI-compatible server URL.")
    api_key_env: str | None = Field(
        default=None,
        description="Name of the environment variable holding the API key "
        "(default: the provider's usual variable, e.g. OPENAI_API_KEY).",
    )
    timeout_s: float = Field(default=60.0, gt=0.0, description="Per-attempt timeout.")
    max_concurrency: int = Field(default=16, ge=1, le=4096)
    retry: RetryPolicy = Field(default_factory=RetryPolicy)
    structured_output: StructuredOutput = Field(
        default="auto",
        description="Ask the provider for JSON: 'auto' uses a JSON schema where litellm "
        "knows the model supports it, else plain text parsed leniently; 'instructor' lets "
        "the instructor package ask (and re-ask) for an answer that validates.",
    )
    instructor_mode: InstructorMode = Field(
        default="tools",
        description="How instructor asks for the answer (structured_output = 'instructor'): "
        "a forced function call ('tools'), JSON mode ('json') or a ```json block ('md_json').",
    )
    max_reasks: int = Field(
        default=0,
        ge=0,
        le=50,
        description="Requests instructor may add after an answer that fails validation, "
        "each showing the model its error. 0: one request, a bad answer is a parse_error.",
    )
    extra_body: dict[str, object] = Field(
        default_factory=dict, description="Extra provider parameters, part of the cache key."
    )
    transport: TransportName = Field(
        default="litellm",
        description="How hosted requests travel: 'litellm' (any provider), or 'openai', a "
        "lean pooled HTTP client for OpenAI-compatible endpoints (provider 'openai'). "
        "Not part of the cache key: both send the same request.",
    )

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

    @property
    def provider(self) -> str:
        return self.model.split("/", 1)[0]
