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
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cost_usd: float | None = None


class CallAccounting(BaseModel):
    """What producing one result cost: shared by every result and record model."""

    attempts: int = 0
    latency_s: float = 0.0
    usage: Usage = Field(default_factory=Usage)
    cache_hit: bool = False


class PromptProvenance(BaseModel):
    """Which model and which exact prompt produced a record (null for baselines)."""

    model: str | None = None
    prompt_id: str | None = None
    prompt_version: int | None = None
    prompt_sha256: str | None = None
