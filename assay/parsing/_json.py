"""Lenient JSON extraction from model text.

Models wrap JSON in prose, code fences and trailing commas. We accept those, but we
never invent content: if no JSON object survives, the caller records `parse_error`.
"""

from __future__ import annotations

import json
import re
from typing import Any

_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_DECODER = json.JSONDecoder()


def _objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object in `text`, in order; stray braces in prose are skipped."""
    found: list[dict[str, Any]] = []
    pos = text.find("{")
    while pos >= 0:
        try:
            value, end = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError:
            pos = text.find("{", pos + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        pos = text.find("{", end)
    return found


def extract_json_object(text: str) -> dict[str, Any] | None:
    """Return the last well-formed JSON object in `text`, or None.

    The last one wins because reasoning models often restate a draft before the final
    answer. Code fences need no special case: the object inside is found like any other.
    Trailing commas are repaired only when nothing parses as is.
    """
    for source in (text, _TRAILING_COMMA.sub(r"\1", text)):
        objects = _objects(source)
        if objects:
            return objects[-1]
    return None
