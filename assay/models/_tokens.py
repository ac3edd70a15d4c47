"""A request's token count estimated before it is sent: no network, no tokenizer.

Rate limits (tokens per minute) and spending caps (worst-case cost) must be checked
before a request goes out, when no provider has counted its tokens yet. Downloading a
tokenizer for that would cost more than the check is worth and is impossible offline,
so the estimate is a deliberate over-count: one token per 3 bytes of UTF-8 (BPE
tokenizers average about 4 bytes of English per token, fewer for other scripts and
code) plus 4 tokens per message for the role and separators (OpenAI's chat format adds
3-4). Over-counting makes a limiter wait a little early and a cap stop a little early,
never late.
"""

from __future__ import annotations

from collections.abc import Sequence

from assay.models._types import ChatRequest
from assay.prompts._prompt import Message

BYTES_PER_TOKEN = 3
TOKENS_PER_MESSAGE = 4


def estimate_prompt_tokens(messages: Sequence[Message]) -> int:
    """A conservative (over-)estimate of the prompt tokens `messages` are billed as."""
    total = 0
    for message in messages:
        size = len(message.content.encode("utf-8")) + len(message.role)
        total += -(-size // BYTES_PER_TOKEN) + TOKENS_PER_MESSAGE
    return total


def request_token_bound(request: ChatRequest) -> tuple[int, int]:
    """(estimated prompt tokens, the most output tokens it may be billed for)."""
    return estimate_prompt_tokens(request.messages), request.decoding.max_tokens


__all__ = ["estimate_prompt_tokens", "request_token_bound"]
