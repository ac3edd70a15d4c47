"""Lenient JSON extraction and verdict parsing: every response gets exactly one status."""

from __future__ import annotations

import subprocess
import sys

import pytest

# `import assay.parsing` in a fresh interpreter currently fails with a circular import
# (see test_assay_parsing_imports_on_its_own); importing assay.judges first avoids it so
# the rest of this module can still run.
import assay.judges  # noqa: F401
from assay.judges import Status
from assay.parsing import (
    PARSER_VERSION,
    ParsedVerdict,
    extract_json_object,
    normalise_label,
    parse_verdict,
)
from assay.prompts import ForceVerdict, Prompt, PromptRegistry, SupportVerdict

GENERIC = PromptRegistry(include_env=False).get("generic-support@1")
FORCE = PromptRegistry(include_env=False).get("force-aware@1")


def parse(
    content: str | None,
    *,
    finish_reason: str | None = "stop",
    refusal: str | None = None,
    prompt: Prompt = GENERIC,
) -> ParsedVerdict:
    return parse_verdict(
        content,
        finish_reason=finish_reason,
        refusal=refusal,
        output_model=prompt.output_model,
        labels=prompt.meta.labels,
        scores=prompt.meta.scores,
    )


def test_assay_parsing_imports_on_its_own() -> None:
    """BUG: `import assay.parsing` (or assay.parsing._json) in a fresh interpreter raises
    ImportError: assay/parsing/_verdict.py imports assay.core.judging, which runs
    assay/judges/__init__.py -> assay/judges/_llm.py -> `from assay.parsing import
    PARSER_VERSION` while assay.parsing is only partially initialised."""
    for module in ("assay.parsing", "assay.parsing._json"):
        proc = subprocess.run(
            [sys.executable, "-c", f"import {module}"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, (
            f"`import {module}` fails in a fresh interpreter (circular import):\n"
            + proc.stderr.strip().splitlines()[-1]
        )


# ---- extract_json_object ---------------------------------------------------------------


def test_plain_json() -> None:
    assert extract_json_object('{"label": "fully_supported", "confidence": 0.9}') == {
        "label": "fully_supported",
        "confidence": 0.9,
    }


def test_reasoning_before_json() -> None:
    text = (
        "Let me think. The passage says the effect was seen in mice only, so the claim "
        'overreaches.\n\nAnswer: {"label": "force_gap", "primary_axis": "scope"}'
    )
    assert extract_json_object(text) == {"label": "force_gap", "primary_axis": "scope"}


@pytest.mark.parametrize("lang", ["json", "JSON", ""])
def test_code_fence(lang: str) -> None:
    text = f'Here you go:\n```{lang}\n{{"label": "unsupported"}}\n```\nHope that helps.'
    assert extract_json_object(text) == {"label": "unsupported"}


def test_trailing_commas() -> None:
    assert extract_json_object('{"a": [1, 2,], "b": {"c": 3,},}') == {"a": [1, 2], "b": {"c": 3}}
    assert extract_json_object('```json\n{"label": "x",}\n```') == {"label": "x"}


def test_last_object_wins() -> None:
    text = 'Draft: {"label": "unsupported"}\nOn reflection, final: {"label": "fully_supported"}'
    assert extract_json_object(text) == {"label": "fully_supported"}


def test_last_well_formed_object_wins_over_trailing_garbage() -> None:
    text = '{"label": "a"} then a broken one {"label": "b", oops}'
    assert extract_json_object(text) == {"label": "a"}


def test_braces_inside_strings() -> None:
    assert extract_json_object('{"rationale": "uses } and { and }{", "label": "x"}') == {
        "rationale": "uses } and { and }{",
        "label": "x",
    }
    assert extract_json_object(r'{"a": "quote \" then }"}') == {"a": 'quote " then }'}


def test_nested_objects() -> None:
    text = 'prefix {"label": "x", "meta": {"inner": {"deep": [1, {"k": "v"}]}}} suffix'
    assert extract_json_object(text) == {
        "label": "x",
        "meta": {"inner": {"deep": [1, {"k": "v"}]}},
    }


@pytest.mark.parametrize(
    "text",
    ["", "   ", "no json here at all", "{not json}", "{'label': 'x'}", "label: fully_supported"],
)
def test_no_json_gives_none(text: str) -> None:
    assert extract_json_object(text) is None


@pytest.mark.parametrize("text", ["[1, 2, 3]", '["fully_supported"]', "```json\n[1, 2]\n```"])
def test_json_array_gives_none(text: str) -> None:
    assert extract_json_object(text) is None


@pytest.mark.parametrize("text", ['"just a string"', "42", "null", "true"])
def test_json_scalars_give_none(text: str) -> None:
    assert extract_json_object(text) is None


def test_unbalanced_brace_in_prose_before_json() -> None:
    """BUG (assay/parsing/_json.py `_candidates`): an unmatched '{' in the reasoning
    text (or a '{' inside a quoted phrase outside any object, whose quotes are not
    tracked at depth 0) swallows the rest of the text, so the final, well-formed
    answer object is never found and the docstring's "return the last well-formed JSON
    object" does not hold. Expected {'label': 'x'}, actual None."""
    assert extract_json_object('The set {a, b is unbalanced. Final: {"label": "x"}') == {
        "label": "x"
    }
    assert extract_json_object('Output a literal "{" first? No. {"label": "x"}') == {"label": "x"}


# ---- parse_verdict ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "label", "score"),
    [
        ("Fully Supported", "fully_supported", 1.0),
        ("fully_supported", "fully_supported", 1.0),
        ("FULLY-SUPPORTED", "fully_supported", 1.0),
        ("  Partially   supported ", "partially_supported", 0.5),
        ("Unsupported", "unsupported", 0.0),
        ("contradicted", "contradicted", 0.0),
        ("Irrelevant", "irrelevant", 0.0),
    ],
)
def test_ok_with_label_normalisation(raw: str, label: str, score: float) -> None:
    v = parse(f'{{"label": "{raw}", "confidence": 0.8, "rationale": "r"}}')
    assert v.status is Status.OK
    assert v.label == label
    assert v.score == score
    assert v.error is None
    assert v.parsed is not None and v.parsed["label"] == label
    assert v.parsed["confidence"] == 0.8


def test_ok_force_prompt_scores() -> None:
    ok = parse('{"label": "Force Gap", "primary_axis": "scope", "severity": 2}', prompt=FORCE)
    assert (ok.status, ok.label, ok.score) == (Status.OK, "force_gap", 0.0)
    cal = parse('{"label": "force_calibrated", "severity": 0}', prompt=FORCE)
    assert (cal.status, cal.label, cal.score) == (Status.OK, "force_calibrated", 1.0)


def test_ok_after_reasoning_and_fence() -> None:
    text = 'Thinking...\n```json\n{"label": "contradicted", "confidence": 0.7,}\n```'
    v = parse(text)
    assert (v.status, v.label, v.score) == (Status.OK, "contradicted", 0.0)


@pytest.mark.parametrize("label", ["supported", "mostly_supported", "yes", "force_gap", ""])
def test_unknown_label_is_parse_error_never_coerced(label: str) -> None:
    v = parse(f'{{"label": "{label}", "confidence": 0.9}}')
    assert v.status is Status.PARSE_ERROR
    assert v.label is None and v.score is None
    assert v.error
    assert v.parsed == {"label": label, "confidence": 0.9}


@pytest.mark.parametrize("content", [None, "", "   \n\t"])
def test_empty_output_is_parse_error(content: str | None) -> None:
    v = parse(content)
    assert v.status is Status.PARSE_ERROR
    assert v.error == "empty output"
    assert v.label is None and v.score is None


def test_prose_without_json_is_parse_error() -> None:
    v = parse("The claim looks fully supported to me.")
    assert v.status is Status.PARSE_ERROR
    assert v.label is None


def test_finish_reason_length_is_truncated() -> None:
    v = parse('{"label": "fully_supported"', finish_reason="length")
    assert v.status is Status.TRUNCATED and v.label is None
    # Even a complete-looking body is untrustworthy when the cap was hit.
    assert parse('{"label": "fully_supported"}', finish_reason="length").status is Status.TRUNCATED


def test_content_filter_is_refusal() -> None:
    v = parse(None, finish_reason="content_filter")
    assert v.status is Status.REFUSAL and v.label is None
    assert parse('{"label": "fully_supported"}', finish_reason="content_filter").status is (
        Status.REFUSAL
    )


def test_refusal_field_is_refusal() -> None:
    v = parse('{"label": "fully_supported"}', refusal="I can't help with that.")
    assert v.status is Status.REFUSAL
    assert v.error == "I can't help with that."
    assert v.label is None and v.score is None


def test_refusal_precedes_truncation() -> None:
    assert parse(None, finish_reason="length", refusal="no").status is Status.REFUSAL


@pytest.mark.parametrize(
    "text",
    [
        "I'm sorry, I can't help with that request.",
        "I am sorry, but I cannot assess this.",
        "I cannot evaluate medical claims.",
        "I can't do that.",
        "  i won't answer this",
        "As an AI, I must refrain from judging this.",
        "I must decline.",
        "I'm unable to comply.",
    ],
)
def test_refusal_text_without_json(text: str) -> None:
    v = parse(text)
    assert v.status is Status.REFUSAL
    assert v.label is None and v.score is None


def test_refusal_text_with_curly_apostrophe() -> None:
    """BUG (assay/parsing/_verdict.py `_REFUSAL_TEXT`): the refusal pattern only knows the
    ASCII apostrophe, so "I’m sorry, I can’t help" (U+2019, which many models emit) is
    classified parse_error instead of refusal."""
    v = parse("I\u2019m sorry, I can\u2019t help with that.")
    assert v.status is Status.REFUSAL, f"curly-apostrophe refusal classified as {v.status}"


def test_refusal_wording_with_json_answer_is_ok() -> None:
    v = parse('I cannot be fully certain, but: {"label": "unsupported"}')
    assert (v.status, v.label) == (Status.OK, "unsupported")


@pytest.mark.parametrize(
    "body",
    [
        '{"label": "unsupported", "confidence": 3.0}',
        '{"label": "unsupported", "confidence": -0.1}',
        '{"label": "unsupported", "confidence": "high"}',
        '{"confidence": 0.5}',
        '{"label": 5}',
        '{"label": null}',
    ],
)
def test_schema_violation_is_parse_error(body: str) -> None:
    v = parse(body)
    assert v.status is Status.PARSE_ERROR
    assert v.label is None and v.score is None
    assert v.error
    assert v.parsed is not None


def test_force_schema_violation_is_parse_error() -> None:
    v = parse('{"label": "force_gap", "severity": 7}', prompt=FORCE)
    assert v.status is Status.PARSE_ERROR
    assert "severity" in (v.error or "")


def test_confidence_error_names_field() -> None:
    v = parse('{"label": "unsupported", "confidence": 3.0}')
    assert v.error is not None and v.error.startswith("confidence")


CORPUS: list[tuple[str | None, str | None, str | None]] = [
    ('{"label": "fully_supported"}', "stop", None),
    ('{"label": "nope"}', "stop", None),
    ("", "stop", None),
    (None, None, None),
    ("I'm sorry, I can't", "stop", None),
    ('{"label": "x"', "length", None),
    (None, "content_filter", None),
    ('{"label": "fully_supported"}', "stop", "refused"),
    ('{"label": "unsupported", "confidence": 3.0}', "stop", None),
    ("[1, 2]", "stop", None),
    ("```json\n{}\n```", "stop", None),
    ('{"label": "Partially Supported", "confidence": 0.5}', None, None),
]


@pytest.mark.parametrize(("content", "finish", "refusal"), CORPUS)
def test_every_result_has_exactly_one_status(
    content: str | None, finish: str | None, refusal: str | None
) -> None:
    v = parse(content, finish_reason=finish, refusal=refusal)
    assert isinstance(v.status, Status)
    assert sum(v.status is s for s in Status) == 1
    assert v.status is not Status.API_ERROR  # the parser never invents an API error
    if v.status is Status.OK:
        assert v.label in GENERIC.meta.labels and v.score is not None and v.error is None
    else:
        assert v.label is None and v.score is None and v.error


def test_normalise_label() -> None:
    assert normalise_label("Fully Supported") == "fully_supported"
    assert normalise_label(" force-gap ") == "force_gap"
    assert normalise_label("FORCE_CALIBRATED") == "force_calibrated"


def test_schemas_and_version() -> None:
    assert GENERIC.output_model is SupportVerdict
    assert FORCE.output_model is ForceVerdict
    assert PARSER_VERSION.startswith("assay-verdict/")
