"""The probability a judge gave its own label: from the label's token log probabilities,
or from a confidence field the prompt's answer declares.

Token route: the label's value is found in the raw output (`"label": "supported"`, or the
score field of a score-only prompt), the output tokens are laid end to end to find which
of them spell that value, and their log probabilities are summed: exp(sum) is the
model's probability of writing that label there, given what it wrote before. Tokens that
do not join back to the output (some providers split multi-byte characters) give None.

Field route: a number field of the answer (e.g. `confidence`) read as the probability,
mapped to [0, 1] by the field's declared `minimum`/`maximum` when it has both, else
taken as it is and kept only inside [0, 1].
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from assay.core.outcomes import Status, TokenLogprob
from assay.parsing._verdict import ParsedVerdict
from assay.prompts._output import score_scale_of

__all__ = [
    "confidence_from_field",
    "confidence_range",
    "label_probability",
    "label_span",
    "reparsed_probability",
    "span_probability",
]


def label_span(content: str, key: str) -> tuple[int, int] | None:
    """Character span of the first `"key": value` value in `content` (a string's text
    inside its quotes, or a number), None when the key is not there."""
    pattern = re.compile(
        r'"' + re.escape(key) + r'"\s*:\s*(?:"((?:[^"\\]|\\.)*)"|(-?\d+(?:\.\d+)?))'
    )
    found = pattern.search(content)
    if found is None:
        return None
    group = 1 if found.group(1) is not None else 2
    return found.start(group), found.end(group)


def span_probability(
    content: str, tokens: Sequence[TokenLogprob], span: tuple[int, int]
) -> float | None:
    """exp of the summed log probabilities of the tokens overlapping `span` of
    `content`; None when the tokens do not spell the content up to the span's end."""
    start, end = span
    if start >= end:
        return None
    position, total, seen = 0, 0.0, False
    for token in tokens:
        after = position + len(token.token)
        if content[position:after] != token.token:
            return None
        if after > start and position < end:
            total, seen = total + token.logprob, True
        position = after
        if position >= end:
            return math.exp(total) if seen else None
    return None


def confidence_range(output_model: type[BaseModel], field: str) -> tuple[float, float] | None:
    """The declared (minimum, maximum) of a number field, None when it has not both.
    Raises ValueError when the field is not a number field of the output."""
    props = output_model.model_json_schema().get("properties", {})
    prop = props.get(field)
    if prop is None:
        raise ValueError(f"confidence_field {field!r} is not a field of the prompt's output")
    types = {prop.get("type")} | {p.get("type") for p in prop.get("anyOf", [])}
    if not types & {"number", "integer"}:
        raise ValueError(f"confidence_field {field!r} is not a number field of the output")
    low, high = _bound(prop, "minimum"), _bound(prop, "maximum")
    return (low, high) if low is not None and high is not None and low < high else None


def _bound(prop: dict[str, Any], name: str) -> float | None:
    value = prop.get(name)
    if value is None:
        for option in prop.get("anyOf", []):
            value = option.get(name, value)
    return float(value) if isinstance(value, int | float) else None


def confidence_from_field(
    parsed: dict[str, Any] | None, field: str, scale: tuple[float, float] | None
) -> float | None:
    """The answer's confidence as a probability, None when absent or outside its range."""
    raw = None if parsed is None else parsed.get(field)
    if isinstance(raw, bool) or not isinstance(raw, int | float) or math.isnan(raw):
        return None
    value = float(raw)
    if scale is not None:
        low, high = scale
        value = (value - low) / (high - low)
    return value if 0.0 <= value <= 1.0 else None


def label_probability(
    verdict: ParsedVerdict,
    content: str | None,
    logprobs: Sequence[TokenLogprob] | None,
    output_model: type[BaseModel],
    *,
    confidence_field: str | None = None,
    confidence_scale: tuple[float, float] | None = None,
) -> float | None:
    """The probability of an ok verdict's label: the declared confidence field when one
    is named, else its tokens' (the label's value, or a score-only prompt's score)."""
    if verdict.status is not Status.OK:
        return None
    if confidence_field is not None:
        return confidence_from_field(verdict.parsed, confidence_field, confidence_scale)
    if not logprobs or content is None:
        return None
    scale = score_scale_of(output_model)
    key = "label" if scale is None or "label" in output_model.model_fields else scale.field
    span = label_span(content, key)
    return None if span is None else span_probability(content, logprobs, span)


def reparsed_probability(
    verdict: ParsedVerdict,
    content: str | None,
    logprobs: Sequence[TokenLogprob] | None,
    recorded: float | None,
    output_model: type[BaseModel],
) -> float | None:
    """A re-parsed record's label probability: found again in its recorded tokens; a
    probability from a confidence field (no tokens) is kept while the verdict stays ok."""
    if logprobs:
        return label_probability(verdict, content, logprobs, output_model)
    return recorded if verdict.status is Status.OK else None
