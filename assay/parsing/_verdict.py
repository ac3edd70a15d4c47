"""Turn a raw model response into exactly one judgment status, label and score."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ValidationError

from assay.core.labels import normalise_label
from assay.core.outcomes import Status
from assay.errors import first_problem
from assay.parsing._json import extract_json_object
from assay.prompts._output import ScoreScale, score_scale_of

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
    nearest label. An output model with a score scale (a prompt's `score_field`) scores
    by its numeric field normalised to [0, 1]; the raw value stays in `parsed`.
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
    return _verdict_from_object(obj, output_model=output_model, labels=labels, scores=scores)


def _verdict_from_object(
    obj: dict[str, Any],
    *,
    output_model: type[BaseModel],
    labels: list[str],
    scores: dict[str, float],
) -> ParsedVerdict:
    """Validate the answer object, then check its label and score it."""
    scale = score_scale_of(output_model)
    out_of_range = _out_of_range(obj, scale)
    if out_of_range:
        return ParsedVerdict(status=Status.PARSE_ERROR, parsed=obj, error=out_of_range)
    try:
        model = output_model.model_validate(obj)
    except ValidationError as exc:
        first = first_problem(exc, typo_first=False)
        error = f"{first.field or ''}: {first.msg}"
        return ParsedVerdict(status=Status.PARSE_ERROR, parsed=obj, error=error)
    parsed = model.model_dump()
    raw_label = parsed.get("label")
    if scale is not None and "label" not in output_model.model_fields:
        raw_label = _score_label(parsed.get(scale.field))
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
    score = scale.normalise(parsed[scale.field]) if scale else scores.get(label)
    return ParsedVerdict(status=Status.OK, label=label, score=score, parsed=parsed)


def _out_of_range(obj: dict[str, Any], scale: ScoreScale | None) -> str | None:
    """A numeric score outside its declared range, named with field and range."""
    if scale is None:
        return None
    raw = obj.get(scale.field)
    if isinstance(raw, int | float) and not isinstance(raw, bool) and not scale.contains(raw):
        return f"{scale.describe()}, got {raw}"
    return None


def _score_label(raw: Any) -> str | None:
    """The label of a score-only answer on an integer scale: 4 -> '4'."""
    if isinstance(raw, int | float) and not isinstance(raw, bool) and raw == int(raw):
        return str(int(raw))
    return None
