"""The atomicity lint of claims (docs/reference/policies/fail-closed.md#atomicity-lint): one fact
per claim is what makes a verdict meaningful, so claims joined by "and", "because" or "which", or
longer than `max_claim_tokens` whitespace tokens, are flagged.

This is the one text check of the policy. Its flags are always recorded but change a
decision only when a policy opts in with `reject_non_atomic = true` (then such claims
are UNVERIFIED `non_atomic`); with the default, no decision depends on any text.
"""

from __future__ import annotations

import re

JOINERS = ("and", "because", "which")
_JOINER = re.compile(r"\b(" + "|".join(JOINERS) + r")\b", re.IGNORECASE)


def atomicity_flags(text: str, max_claim_tokens: int) -> list[str]:
    """`contains:<word>` per joining word found (whole words, any case), and
    `too_long` beyond `max_claim_tokens` whitespace-separated tokens."""
    found = {m.group(1).lower() for m in _JOINER.finditer(text)}
    flags = [f"contains:{word}" for word in JOINERS if word in found]
    if len(text.split()) > max_claim_tokens:
        flags.append("too_long")
    return flags


__all__ = ["JOINERS", "atomicity_flags"]
