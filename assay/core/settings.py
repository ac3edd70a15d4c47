"""Model and endpoint settings, each declared once (type, default, bounds, description).

`ModelSettings` is the one declaration of the settings a spec may give a model. What a
spec needs is derived from it, so a new setting is one field here and is at once a
`[defaults]` key, a key of every model block and a value the merge carries:

- `ModelDefaults`, the spec's `[defaults]` table: the settings with their defaults;
- `EndpointOverrides`, a model block's keys: the endpoint keys (`EndpointKeys`) plus
  every setting, optional (unset falls back to `[defaults]`);
- `resolve(defaults, overrides)`, the settings one block ends with.

A spec's choice keys are strings checked by pattern, as they always were (the error
names the pattern); in Python the same choices are `Literal` types. `assay.models`
splits resolved settings into its `Decoding`, `RetryPolicy` and `ModelConfig`.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.fields import FieldInfo

__all__ = [
    "EndpointKeys",
    "EndpointOverrides",
    "InstructorMode",
    "ModelDefaults",
    "ModelSettings",
    "StructuredOutput",
    "TransportName",
    "declared",
    "resolve",
]

StructuredOutput = Literal["auto", "json_schema", "json_object", "off", "instructor"]
InstructorMode = Literal["tools", "json", "md_json"]
TransportName = Literal["auto", "litellm", "openai"]


def choice_pattern(choices: Any) -> str:
    """The spec's pattern for a `Literal` of strings: ``^(a|b|c)$``."""
    return "^(" + "|".join(get_args(choices)) + ")$"


class ModelSettings(BaseModel):
    """Decoding and client settings of one model, in the order a spec's errors follow."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    temperature: float = Field(
        default=0.0, ge=0.0, le=2.0, description="Sampling temperature; 0 for repeatable answers."
    )
    top_p: float | None = Field(
        default=None, gt=0.0, le=1.0, description="Nucleus sampling; unset: the provider's default."
    )
    max_tokens: int = Field(default=1024, ge=1, description="Output cap per call.")
    seed: int | None = Field(
        default=None, description="Sampling seed sent to providers that accept one."
    )
    stop: list[str] | None = Field(
        default=None, description="Strings that end the model's output when generated."
    )
    timeout_s: float = Field(default=60.0, gt=0.0, description="Per-attempt timeout.")
    max_concurrency: int = Field(
        default=16, ge=1, le=4096, description="Requests in flight at once to this model."
    )
    max_attempts: int = Field(default=6, ge=1, le=50, description="Attempts including the first.")
    initial_wait_s: float = Field(
        default=1.0, ge=0.0, description="Wait before the first retry; each later one doubles."
    )
    max_wait_s: float = Field(default=60.0, ge=0.0, description="Cap on any single wait.")
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
    logprobs: bool = Field(
        default=False,
        # absent from dumps when off: decoding dumps (cache keys, manifests) stay as before
        exclude_if=lambda v: not v,
        description="Ask for the output tokens' log probabilities (OpenAI `logprobs`): a "
        "judge's records then carry them and the probability of the label it gave "
        "(`label_probability`), for calibration. Part of the cache key.",
    )
    top_logprobs: int | None = Field(
        default=None,
        ge=0,
        le=20,
        exclude_if=lambda v: v is None,
        description="With logprobs: also the N most likely tokens at each position "
        "(OpenAI `top_logprobs`, 0-20).",
    )
    transport: TransportName = Field(
        default="auto",
        description="How hosted requests travel: 'openai', a lean pooled HTTP client for "
        "OpenAI-compatible endpoints (provider 'openai'); 'litellm' (any provider); 'auto' "
        "the lean client for openai/ ids whose settings it supports, litellm otherwise (the "
        "manifest records the choice and why). Not part of the cache key: both send the "
        "same request.",
    )
    rpm: int | None = Field(
        default=None,
        ge=1,
        description="Requests per minute allowed to this endpoint (api_base or provider, "
        "and model id), shared by every judge, decomposer and verifier that calls it. "
        "Unset: no request window. Not part of the cache key.",
    )
    tpm: int | None = Field(
        default=None,
        ge=1,
        description="Tokens per minute allowed to this endpoint, shared like rpm: each "
        "request holds its estimated prompt tokens plus max_tokens until its reported "
        "usage corrects the count. Not part of the cache key.",
    )
    adaptive_concurrency: bool = Field(
        default=True,
        description="Adapt requests in flight to the provider (AIMD): start at "
        "max_concurrency, halve on a 429 or when x-ratelimit-remaining-* nears zero, "
        "add one per window of successes; waits as long as Retry-After or "
        "x-ratelimit-reset-* ask. false: always max_concurrency.",
    )
    input_cost_per_token: float | None = Field(
        default=None,
        ge=0.0,
        description="USD per prompt token, for a model litellm's cost map does not price "
        "(or to override it): used by spending caps and recorded costs. Give both prices.",
    )
    output_cost_per_token: float | None = Field(
        default=None,
        ge=0.0,
        description="USD per output token (see input_cost_per_token).",
    )
    max_cost_usd: float | None = Field(
        default=None,
        ge=0.0,
        description="Spending cap of each judge (decomposer, verifier) of this block: it "
        "sends no request whose worst-case cost could take it over. See also the run's "
        "max_cost_usd.",
    )


class EndpointKeys(BaseModel):
    """Where a model block's model lives and what travels with each request: per block
    only (a `[defaults]` table has none of them)."""

    model_config = ConfigDict(extra="forbid")

    api_base: str | None = Field(default=None, description="OpenAI-compatible server URL.")
    api_key_env: str | None = Field(
        default=None,
        description="Name of the environment variable holding the API key "
        "(default: the provider's usual variable, e.g. OPENAI_API_KEY).",
    )
    extra_body: dict[str, Any] = Field(
        default_factory=dict, description="Extra provider parameters, part of the cache key."
    )


def declared(name: str) -> Any:
    """A copy of the declared field `name` (of `ModelSettings` or `EndpointKeys`), for a
    model that holds the setting under its own annotation (`assay.models`' configs)."""
    return copy.copy({**EndpointKeys.model_fields, **ModelSettings.model_fields}[name])


def _spec_field(info: FieldInfo, *, optional: bool) -> tuple[Any, Any]:
    """A setting as a spec key: a choice is a string matched by pattern; an optional
    key defaults to None (unset: the `[defaults]` value)."""
    annotation: Any = info.annotation
    metadata = list(info.metadata)
    if get_origin(annotation) is Literal:
        annotation = str
        metadata += Field(pattern=choice_pattern(info.annotation)).metadata
    if optional:
        annotation = annotation | None
    if metadata:
        annotation = Annotated[(annotation, *metadata)]
    default = None if optional else info.default
    return annotation, Field(default=default, description=info.description)


def _spec_model(
    name: str,
    base: type[BaseModel],
    doc: str,
    *,
    optional: bool,
    settings: type[BaseModel] = ModelSettings,
) -> Any:
    """A spec table with every field of `settings`, in order (a spec reports the first
    bad key in that order), on `base` (its config and own keys come first)."""
    fields: dict[str, Any] = {
        n: _spec_field(f, optional=optional) for n, f in settings.model_fields.items()
    }
    return create_model(name, __base__=base, __module__=__name__, __doc__=doc, **fields)


class _SpecTable(BaseModel):
    model_config = ConfigDict(extra="forbid")


if TYPE_CHECKING:  # the checker sees the declarations; the spec's classes derive from them

    class ModelDefaults(ModelSettings): ...

    class EndpointOverrides(EndpointKeys): ...

else:
    ModelDefaults = _spec_model(
        "ModelDefaults",
        _SpecTable,
        "The spec's `[defaults]`: every setting; each model block may override any of them.",
        optional=False,
    )
    EndpointOverrides = _spec_model(
        "EndpointOverrides",
        EndpointKeys,
        "A model block's endpoint keys and settings; unset settings fall back to `[defaults]`.",
        optional=True,
    )


def resolve(defaults: ModelDefaults, overrides: EndpointOverrides) -> ModelSettings:
    """Each declared setting from `overrides` where set (not None), else from `defaults`:
    one loop over the declaration, so a new setting needs no line here."""
    values: dict[str, Any] = {}
    for name in ModelSettings.model_fields:
        value = getattr(overrides, name, None)
        values[name] = getattr(defaults, name) if value is None else value
    return ModelSettings.model_validate(values)
