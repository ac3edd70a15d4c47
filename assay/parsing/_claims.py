"""Turn a decomposition model's raw output into claims and exactly one status.

Accepted forms, tried in this order after a refusal / truncation check:

1. The sentinel ``No verifiable claim`` (any case, optional trailing period or ``s``,
   possibly in quotes, emphasis or a code fence): ``ok`` with zero claims.
2. JSON: an object ``{"claims": [...]}`` (anywhere in the text) or, when the whole
   output is a JSON array, a list of strings.
3. A list: one claim per line after a bullet (``- ``, ``* ``, ``+ ``, ``•``) or a number
   (``1. ``, ``1) ``). Header lines ending in ``:`` before the first item are allowed,
   and indented lines continue the item above them.

Anything else is a ``parse_error`` (never a silent empty list): prose without list
structure, a stray unstructured line among the items, an empty output. Bullets are
stripped, empty items and exact duplicates dropped.
"""

from __future__ import annotations

import json
import re

from pydantic import BaseModel, Field, ValidationError

from assay.core.outcomes import Status
from assay.errors import first_problem
from assay.parsing import extract_json_object
from assay.prompts._schemas import ClaimList

DECOMPOSE_PARSER_VERSION = "assay-claims/1"
NO_CLAIM = "No verifiable claim"

_WRAP = "\"'`*_\u201c\u201d\u2018\u2019"
_NO_CLAIM_RE = re.compile(
    rf"^[\s{_WRAP}]*no verifiable claims?[\s.!{_WRAP}]*$",
    re.IGNORECASE,
)
_FENCE = re.compile(r"\A\s*```[\w+-]*[ \t]*\r?\n(?P<body>.*?)\r?\n?```\s*\Z", re.DOTALL)
_BULLET = re.compile(r"^[ \t]*(?:[-*+\u2022\u2023\u25e6]|\d{1,3}[.)])(?:[ \t]+(?P<text>.*))?$")
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_REFUSAL_TEXT = re.compile(
    r"^\s*(i('| a)m sorry|i cannot|i can('|no)t|i won('|)t|i am unable|i'm unable|"
    r"as an ai\b|i must decline)",
    re.IGNORECASE,
)


class ParsedClaims(BaseModel):
    """The parser's result: a status, the claim texts (only when ok) and why not."""

    status: Status
    claims: list[str] = Field(default_factory=list)
    error: str | None = None


def _error(why: str) -> ParsedClaims:
    return ParsedClaims(status=Status.PARSE_ERROR, error=why)


def _clean(items: list[str]) -> list[str]:
    """Strip, drop empty items and exact duplicates (first occurrence wins)."""
    out: list[str] = []
    seen: set[str] = set()
    for item in items:
        text = item.strip()
        if text and text not in seen:
            seen.add(text)
            out.append(text)
    return out


def _finish(items: list[str], form: str) -> ParsedClaims:
    claims = _clean(items)
    sentinel = [c for c in claims if _NO_CLAIM_RE.match(c)]
    if sentinel:
        if len(claims) == 1:
            return ParsedClaims(status=Status.OK)
        return _error(f"{form} mixes claims with {NO_CLAIM!r}")
    if not claims and form != "JSON":
        return _error(f"{form} has only empty items")
    return ParsedClaims(status=Status.OK, claims=claims)


def _from_json(body: str) -> ParsedClaims | None:
    """Parse the JSON forms; None when the output is not JSON at all."""
    if body.startswith("[") and body.endswith("]"):
        for source in (body, _TRAILING_COMMA.sub(r"\1", body)):
            try:
                value = json.loads(source)
            except json.JSONDecodeError:
                continue
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                return _error("JSON array must hold only strings")
            return _finish(value, "JSON")
        return None
    if "{" not in body:
        return None
    obj = extract_json_object(body)
    if obj is None:
        return _error("malformed JSON object") if body.startswith("{") else None
    if "claims" not in obj:
        return _error("JSON object has no 'claims' list") if body.startswith("{") else None
    try:
        parsed = ClaimList.model_validate(obj)
    except ValidationError as exc:
        first = first_problem(exc, typo_first=False)
        return _error(f"{first.field or ''}: {first.msg}")
    return _finish(parsed.claims, "JSON")


def _from_lines(body: str) -> ParsedClaims | None:
    """Parse a bulleted or numbered list; None when no line is a list item."""
    items: list[str] = []
    for number, line in enumerate(body.splitlines(), start=1):
        if not line.strip():
            continue
        bullet = _BULLET.match(line)
        if bullet is not None:
            items.append(bullet.group("text") or "")
        elif not items and line.rstrip().endswith(":"):
            continue  # a header such as "Claims:" before the list
        elif items and line[:1] in (" ", "\t"):
            items[-1] = f"{items[-1].rstrip()} {line.strip()}"  # a wrapped item
        elif items:
            return _error(f"line {number} is not a list item: {line.strip()[:80]!r}")
        else:
            return None
    if not items:
        return None
    return _finish(items, "list")


def parse_claims(
    content: str | None, *, finish_reason: str | None = None, refusal: str | None = None
) -> ParsedClaims:
    """Classify a decomposition response. Refusal, then truncation, then the content."""
    if refusal or finish_reason == "content_filter":
        return ParsedClaims(status=Status.REFUSAL, error=refusal or "content_filter")
    if finish_reason == "length":
        return ParsedClaims(status=Status.TRUNCATED, error="output hit max_tokens")
    text = content or ""
    if not text.strip():
        return _error("empty output")
    fence = _FENCE.match(text)
    body = (fence.group("body") if fence else text).strip()
    if _NO_CLAIM_RE.match(body):
        return ParsedClaims(status=Status.OK)
    result = _from_json(body)
    if result is None:
        result = _from_lines(body)
    if result is not None:
        return result
    if _REFUSAL_TEXT.match(body.replace("\u2019", "'")):
        return ParsedClaims(status=Status.REFUSAL, error="refusal text, no claims")
    return _error("no claim list, JSON or 'No verifiable claim' found")
