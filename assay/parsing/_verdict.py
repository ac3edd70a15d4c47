"""Turn a raw model response into exactly one judgment status, label and score."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ValidationError

from assay.core.outcomes import Status
from assay.parsing._json import extract_json_object

PARSER_VERSION = "assay-verdict/1"

_REFUSAL_TEXT = re.compile(
    r"^\s*(i('| a)m sorry|i cannot|i can('|no)t|i won('|)t|i am unable|i'm unable|"
    r"as an ai\b|i must decline)",
    re.IGNORECASE,
)


class ParsedOutcome(BaseModel):
    """What any parser makes of one raw output; `label` is typed by each parser."""

    status: Status
    score: float | None = None
    parsed: dict[str, Any] | None = None
    error: str | None = None


class ParsedVerdict(ParsedOutcome):
    label: str | None = None


def normalise_label(label: str) -> str:
    """Case and separator normalisation only: 'Fully Supported' -> 'fully_supported'."""
    return re.sub(r"[\s-]+", "_", label.strip().lower())


def parse_verdict(
    content: str | None,
    *,
    finish_reason: str | None,
    refusal: str | None,
    output_model: type[BaseModel],
    labels: list[str],
    scores: dict[str, float],
) -> ParsedVerdict:
    """Classify a response. Order matters: refusal, truncation, then content checks.

    A label outside the prompt's label set is a parse error, never mapped to the
    nearest label.
    """
    if refusal or finish_reason == "content_filter":
        return ParsedVerdict(status=Status.REFUSAL, error=refusal or "content_filter")
    if finish_reason == "length":
        return ParsedVerdict(status=Status.TRUNCATED, error="output hit max_tokens")
    text = content or ""
    obj = extract_json_object(text)
    if obj is None:
        if _REFUSAL_TEXT.match(text.replace("\u2019", "'")):
            return ParsedVerdict(status=Status.REFUSAL, error="refusal text, no JSON")
        why = "empty output" if not text.strip() else "no JSON object found"
        return ParsedVerdict(status=Status.PARSE_ERROR, error=why)
    try:
        model = output_model.model_validate(obj)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        return ParsedVerdict(status=Status.PARSE_ERROR, parsed=obj, error=f"{loc}: {first['msg']}")
    parsed = model.model_dump()
    raw_label = parsed.get("label")
    if not isinstance(raw_label, str):
        return ParsedVerdict(status=Status.PARSE_ERROR, parsed=obj, error="label missing")
    label = normalise_label(raw_label)
    if label not in labels:
        return ParsedVerdict(
            status=Status.PARSE_ERROR,
            parsed=obj,
            error=f"label {raw_label!r} not in {labels}",
        )
    parsed["label"] = label
    return ParsedVerdict(status=Status.OK, label=label, score=scores.get(label), parsed=parsed)
