"""Token log probabilities read from a chat completion, whichever client received it.

OpenAI's wire format is `choices[0].logprobs.content`: one entry per output token with
`token`, `logprob` and `top_logprobs` (a list of `{token, logprob}`). The lean transport
reads it from the JSON body (dicts), litellm hands back its own objects with the same
field names (attributes); both become the same `TokenLogprob` list, so the cache and the
records hold one shape.
"""

from __future__ import annotations

import math
from typing import Any

from assay.core.outcomes import TokenLogprob

__all__ = ["token_logprobs"]


def _get(value: Any, name: str) -> Any:
    """A field of a JSON dict or of a litellm object."""
    if isinstance(value, dict):
        return value.get(name)
    return getattr(value, name, None)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if not math.isnan(number) else None


def _alternatives(entries: Any) -> list[tuple[str, float]] | None:
    if not isinstance(entries, list):
        return None
    out: list[tuple[str, float]] = []
    for entry in entries:
        token, logprob = _get(entry, "token"), _number(_get(entry, "logprob"))
        if isinstance(token, str) and logprob is not None:
            out.append((token, logprob))
    return out


def token_logprobs(choice_logprobs: Any) -> list[TokenLogprob] | None:
    """The tokens of a choice's `logprobs` object; None when the provider sent none (not
    asked, or not supported). A malformed entry ends the list there: the tokens kept
    are a prefix of the output, which is what a label's span is looked up in."""
    content = _get(choice_logprobs, "content") if choice_logprobs is not None else None
    if not isinstance(content, list):
        return None
    tokens: list[TokenLogprob] = []
    for entry in content:
        token, logprob = _get(entry, "token"), _number(_get(entry, "logprob"))
        if not isinstance(token, str) or logprob is None:
            break
        top = _alternatives(_get(entry, "top_logprobs"))
        tokens.append(TokenLogprob(token=token, logprob=logprob, top=top or None))
    return tokens
