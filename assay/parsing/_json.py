"""Lenient JSON extraction from model text.

Models wrap JSON in prose, code fences and trailing commas. We accept those, but we
never invent content: if no JSON object survives, the caller records `parse_error`.
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def _candidates(text: str) -> list[str]:
    """Balanced top-level `{...}` spans, in order of appearance (strings respected)."""
    spans: list[str] = []
    depth = 0
    start = -1
    in_str = False
    escape = False
    for i, ch in enumerate(text):
        if in_str:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"' and depth > 0:
            in_str = True
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start : i + 1])
    return spans


def _loads(candidate: str) -> dict[str, Any] | None:
    for attempt in (candidate, _TRAILING_COMMA.sub(r"\1", candidate)):
        try:
            value = json.loads(attempt)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


def extract_json_object(text: str) -> dict[str, Any] | None:
    """Return the last well-formed JSON object in `text`, or None.

    The last one wins because reasoning models often restate a draft before the
    final answer.
    """
    sources = [m.group(1) for m in _FENCE.finditer(text)] + [text]
    for source in sources:
        for candidate in reversed(_candidates(source)):
            parsed = _loads(candidate)
            if parsed is not None:
                return parsed
    return None
