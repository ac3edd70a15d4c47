"""What goes into and comes out of a model call."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from assay.core.outcomes import TokenLogprob, Usage
from assay.models._config import Decoding
from assay.prompts._prompt import Message


class ChatRequest(BaseModel):
    model_config = ConfigDict(frozen=True)

    messages: list[Message]
    decoding: Decoding = Field(default_factory=Decoding)
    response_schema: dict[str, Any] | None = Field(
        default=None, description="JSON schema of the expected output, if any."
    )
    schema_name: str = "verdict"
    output_model: type[BaseModel] | None = Field(
        default=None,
        exclude=True,
        description="The pydantic model an answer must validate against, for a transport "
        "that validates (instructor re-asks with its errors). Never sent or hashed: its "
        "JSON schema, `response_schema`, is what the cache key covers.",
    )
    sample_index: int = Field(default=0, ge=0, description="Distinguishes repeated samples.")


class RawResponse(BaseModel):
    """The provider's answer, reduced to what we need; this is what the cache stores."""

    content: str | None
    refusal: str | None = None
    finish_reason: str | None = None
    model_returned: str | None = None
    response_id: str | None = None
    usage: Usage = Field(default_factory=Usage)
    logprobs: list[TokenLogprob] | None = Field(
        default=None,
        # absent when not asked: cached answers to other requests keep their shape
        exclude_if=lambda v: v is None,
        description="The output tokens' log probabilities, when the request asked for them.",
    )

    def parse_inputs(self) -> dict[str, Any]:
        """What a parser reads from a response (`*_from_raw` methods take these keywords)."""
        return {
            "content": self.content,
            "finish_reason": self.finish_reason,
            "refusal": self.refusal,
            "usage": self.usage,
        }

    @property
    def cacheable(self) -> bool:
        """Refusals and truncated outputs are not cached: a retry may do better."""
        return self.refusal is None and self.finish_reason not in ("length", "content_filter")


ResponseT = TypeVar("ResponseT", bound=BaseModel)


class ModelResult(BaseModel, Generic[ResponseT]):
    """A finished call: a response or an error, plus how it was obtained.

    `attempts` counts requests sent (0 for a cache hit); `latency_s` is wall time,
    waiting for a concurrency slot and retries included. `request_key` is the request's
    response-cache key, set whether or not a cache was used, so a record names the exact
    request it came from (an auditor recomputes it from the prompt and the data).
    """

    response: ResponseT | None = None
    error: str | None = None
    error_type: str | None = None
    attempts: int = 0
    cache_hit: bool = False
    latency_s: float = 0.0
    request_key: str | None = None


CallResult = ModelResult[RawResponse]
"""The result of a chat request (hosted or local causal model)."""
