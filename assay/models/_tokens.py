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

import re
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


_ASCII_WORDS = re.compile(r"[A-Za-z ]+")


def prompt_token_bound(messages: Sequence[Message]) -> int:
    """Prompt tokens `messages` are billed at most, for spending caps: a cap must not
    be passed, while a rate limiter only needs a close estimate.

    Byte-level BPE tokenizers merge bytes within their pre-tokenizer's pieces, so
    counting each kind of piece at its worst bounds the count: runs of ASCII letters and
    spaces at 1 token per 3 bytes, every other ASCII character (digits, punctuation,
    newlines) as one token, every other character as its UTF-8 bytes less one (CJK 2,
    emoji 3), plus 5 per message. English prose comes out ~1.5-2x the tokenizer's count,
    code and JSON ~1.2-1.8x (tests/test_budget_unit checks it against tiktoken on
    prose, code, JSON, numbers and several scripts). Random strings (keys, hashes,
    base64) are the exception: they can take a token per 1.3 bytes."""
    total = 0
    for message in messages:
        text = message.content
        letters = sum(len(run) for run in _ASCII_WORDS.findall(text))
        other_ascii = sum(1 for ch in text if ch < "\x80") - letters
        wide = len(text.encode("utf-8")) - letters - other_ascii
        non_ascii = len(text) - letters - other_ascii
        total += -(-letters // BYTES_PER_TOKEN) + other_ascii + (wide - non_ascii)
        total += TOKENS_PER_MESSAGE + 1
    return total


def request_token_bound(request: ChatRequest) -> tuple[int, int]:
    """(estimated prompt tokens, the most output tokens it may be billed for)."""
    return estimate_prompt_tokens(request.messages), request.decoding.max_tokens


__all__ = ["estimate_prompt_tokens", "prompt_token_bound", "request_token_bound"]
