"""Outcome types shared by every layer: how a model call ended and what it cost.

Kept dependency-free so models, parsing and judges can all import it without cycles.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field


class Status(StrEnum):
    """How a judgment ended. Every judgment has exactly one."""

    OK = "ok"
    PARSE_ERROR = "parse_error"
    REFUSAL = "refusal"
    TRUNCATED = "truncated"
    API_ERROR = "api_error"


class Usage(BaseModel):
    prompt_tokens: int = Field(default=0, description="Tokens sent.")
    completion_tokens: int = Field(default=0, description="Tokens generated.")
    total_tokens: int = Field(default=0, description="Sent plus generated.")
    cost_usd: float | None = Field(
        default=None, description="Cost in US dollars, where the provider's price is known."
    )


class CallAccounting(BaseModel):
    """What producing one result cost: shared by every result and record model."""

    attempts: int = Field(
        default=0, description="Calls made, retries included (0: a cache hit or no model)."
    )
    latency_s: float = Field(default=0.0, description="Seconds spent producing it.")
    usage: Usage = Field(default_factory=Usage, description="Tokens and cost of the call.")
    cache_hit: bool = Field(
        default=False, description="Whether the answer came from the response cache."
    )
    request_key: str | None = Field(
        default=None,
        # absent rather than null when there is none: a baseline's records, and those of a
        # run written before request keys (rewritten by `reparse`), keep their shape
        exclude_if=lambda key: key is None,
        description="The response-cache key of the request sent (SHA-256 over the model, "
        "messages, decoding and output schema; computed with or without a cache). Absent "
        "for baselines, local NLI verdicts (many pairs) and records written before it.",
    )


class TokenLogprob(BaseModel):
    """One output token and its log probability, as the provider returned it (OpenAI's
    `choices[0].logprobs.content[i]`); `top` holds the most likely alternatives when
    `top_logprobs` was asked. Model output, nothing secret: recorded as returned."""

    token: str = Field(description="The token's text.")
    logprob: float = Field(description="Its natural-log probability.")
    top: list[tuple[str, float]] | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="The most likely tokens at this position with their log probabilities.",
    )


class PromptProvenance(BaseModel):
    """Which model and which exact prompt produced a record (null for baselines)."""

    model: str | None = Field(default=None, description="The model id that produced it.")
    prompt_id: str | None = Field(default=None, description="The prompt's id.")
    prompt_version: int | None = Field(default=None, description="The prompt's version.")
    prompt_sha256: str | None = Field(default=None, description="Hash of the prompt's text.")
