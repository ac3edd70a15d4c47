"""Output schemas declared in prompt front matter, numeric score scales, Python models."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from assay.core.outcomes import Status
from assay.errors import PromptError
from assay.judges import JudgeItem, LLMJudge
from assay.models import ModelConfig, cache_key, make_client
from assay.parsing import parse_verdict
from assay.parsing._verdict import ParsedVerdict
from assay.prompts import (
    PromptRegistry,
    SupportVerdict,
    load_prompt_file,
    score_scale_of,
)
from assay.prompts._prompt import Prompt
from assay.testing import FakeOpenAIServer, reply

HEAD = """\
+++
id = "rubric"
version = 1
task = "judge"
variables = ["evidence", "claim"]
{extra}
"""
BODY = """\
+++
=== user ===
Evidence: {{ evidence }}
Claim: {{ claim }}
"""
LABEL_ENUM = """\
[scores]
supported = 1.0
unsupported = 0.0
[output.label]
type = "enum"
values = ["supported", "unsupported"]
description = "Is the claim supported?"
[output.rationale]
type = "string"
required = false
"""
LIKERT = """\
score_field = "score"
[output.score]
type = "integer"
minimum = 1
maximum = 5
[output.rationale]
type = "string"
required = false
"""


def _load(tmp_path: Path, extra: str, name: str = "p.prompt") -> Prompt:
    path = tmp_path / name
    path.write_text(HEAD.format(extra=extra) + BODY, encoding="utf-8")
    return load_prompt_file(path)


def _parse(prompt: Prompt, content: str) -> ParsedVerdict:
    return parse_verdict(
        content,
        finish_reason="stop",
        refusal=None,
        output_model=prompt.output_model,
        labels=prompt.meta.labels,
        scores=prompt.meta.scores,
    )


# ---- declared fields -------------------------------------------------------------------


def test_enum_label_field_builds_model_and_schema(tmp_path: Path) -> None:
    p = _load(tmp_path, LABEL_ENUM)
    assert p.meta.labels == ["supported", "unsupported"]
    schema = p.output_model.model_json_schema()
    assert schema["required"] == ["label"]
    assert schema["properties"]["label"]["enum"] == ["supported", "unsupported"]
    assert schema["properties"]["label"]["description"] == "Is the claim supported?"
    assert "rationale" in schema["properties"]
    ok = _parse(p, '{"label": "Supported", "rationale": "the passage says so"}')
    assert (ok.status, ok.label, ok.score) == (Status.OK, "supported", 1.0)
    bad = _parse(p, '{"label": "maybe"}')
    assert bad.status is Status.PARSE_ERROR
    assert bad.error is not None and bad.error.startswith("label:")


def test_all_field_types(tmp_path: Path) -> None:
    extra = LABEL_ENUM + (
        '[output.confidence]\ntype = "number"\nminimum = 0\nmaximum = 1\n'
        '[output.flagged]\ntype = "boolean"\n'
        '[output.count]\ntype = "integer"\nrequired = false\n'
    )
    props = _load(tmp_path, extra).output_model.model_json_schema()["properties"]
    assert props["confidence"] == {
        "maximum": 1,
        "minimum": 0,
        "title": "Confidence",
        "type": "number",
    }
    assert props["flagged"]["type"] == "boolean"
    assert props["count"]["anyOf"] == [{"type": "integer"}, {"type": "null"}]


def test_registered_schemas_are_unchanged(tmp_path: Path) -> None:
    p = PromptRegistry(include_env=False).get("generic-support@1")
    assert p.output_model is SupportVerdict
    assert score_scale_of(p.output_model) is None
    assert "output_schema_sha256" not in p.identity()


# ---- score scales ----------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "score"), [(1, 0.0), (3, 0.5), (5, 1.0), (4, 0.75)])
def test_likert_score_is_normalised_and_raw_kept(tmp_path: Path, raw: int, score: float) -> None:
    p = _load(tmp_path, LIKERT)
    assert p.meta.labels == ["1", "2", "3", "4", "5"]
    out = _parse(p, f'{{"score": {raw}, "rationale": "r"}}')
    assert (out.status, out.score, out.label) == (Status.OK, score, str(raw))
    assert out.parsed is not None and out.parsed["score"] == raw


@pytest.mark.parametrize("raw", ["0", "6", "-1", "5.5"])
def test_out_of_range_score_names_field_and_range(tmp_path: Path, raw: str) -> None:
    out = _parse(_load(tmp_path, LIKERT), f'{{"score": {raw}}}')
    assert out.status is Status.PARSE_ERROR
    assert out.error == f"score must lie in [1, 5], got {raw}"
    assert out.score is None


@pytest.mark.parametrize("content", ['{"score": true}', '{"score": "four"}', '{"rationale": "x"}'])
def test_non_numeric_score_is_a_parse_error(tmp_path: Path, content: str) -> None:
    out = _parse(_load(tmp_path, LIKERT), content)
    assert out.status is Status.PARSE_ERROR
    assert out.error is not None and out.error.startswith("score:")


def test_number_scale_with_label_field(tmp_path: Path) -> None:
    extra = (
        'score_field = "quality"\n[output.label]\ntype = "enum"\nvalues = ["good", "bad"]\n'
        '[output.quality]\ntype = "number"\nminimum = 0\nmaximum = 10\n'
    )
    p = _load(tmp_path, extra)
    out = _parse(p, '{"label": "good", "quality": 7.5}')
    assert (out.status, out.label, out.score) == (Status.OK, "good", 0.75)
    assert out.parsed is not None and out.parsed["quality"] == 7.5


def test_live_judge_scores_on_the_scale(tmp_path: Path) -> None:
    """The judge (and `assay reparse`, which parses the same way) uses the prompt's scale."""
    judge = LLMJudge(make_client(ModelConfig(model="openai/x"), None), _load(tmp_path, LIKERT))
    j = judge.judgment_from_raw(content='{"score": 2}', finish_reason="stop", refusal=None)
    assert (j.status, j.label, j.score) == (Status.OK, "2", 0.25)


# ---- identity and cache key ------------------------------------------------------------


def _key(prompt: Prompt) -> str:
    judge = LLMJudge(make_client(ModelConfig(model="openai/x"), None), prompt)
    return cache_key(judge.client.config, judge.request_for(JudgeItem(claim="c", evidence="e")))


def test_changing_only_a_range_changes_hash_and_cache_key(tmp_path: Path) -> None:
    a = _load(tmp_path, LIKERT, "a.prompt")
    b = _load(tmp_path, LIKERT.replace("maximum = 5", "maximum = 7"), "b.prompt")
    assert a.render({"evidence": "e", "claim": "c"}) == b.render({"evidence": "e", "claim": "c"})
    assert a.sha256 != b.sha256
    assert a.identity()["output_schema_sha256"] != b.identity()["output_schema_sha256"]
    assert _key(a) != _key(b)
    assert _key(a) == _key(_load(tmp_path, LIKERT, "a2.prompt"))


# ---- Python models ---------------------------------------------------------------------


class Grade(BaseModel):
    label: Literal["pass", "fail"]
    grade: int = Field(ge=0, le=10)


def test_with_output_model_any_pydantic_model(tmp_path: Path) -> None:
    base = _load(tmp_path, LABEL_ENUM.replace("supported", "pass").replace("unpass", "fail"))
    p = base.with_output_model(Grade, score_field="grade")
    assert (
        p.output_model.model_json_schema()["properties"] == Grade.model_json_schema()["properties"]
    )
    assert p.sha256 != base.sha256
    assert p.identity()["output_schema"] == "Grade"
    assert p.identity()["score_field"] == "grade"
    assert score_scale_of(Grade) is None  # the caller's class is left untouched
    out = _parse(p, '{"label": "pass", "grade": 8}')
    assert (out.status, out.score) == (Status.OK, 0.8)
    assert _key(p) != _key(base)
    plain = base.with_output_model(Grade)
    assert _parse(plain, '{"label": "fail", "grade": 8}').score == 0.0  # label -> score map


def test_with_output_model_needs_a_range(tmp_path: Path) -> None:
    class NoRange(BaseModel):
        label: str
        grade: int

    with pytest.raises(PromptError, match="Field\\(ge=..., le=...\\)"):
        _load(tmp_path, LABEL_ENUM).with_output_model(NoRange, score_field="grade")


# ---- bad declarations ------------------------------------------------------------------

_ENUM = '[output.label]\ntype = "enum"\nvalues = ["yes", "no"]\n'
_SCORES = "[scores]\nyes = 1.0\nno = 0.0\n"
BAD: dict[str, tuple[str, str, str]] = {
    # case: (front matter, field, message fragment)
    "both": ('output_schema = "LabelVerdict"\n' + _SCORES + _ENUM, "", "not both"),
    "enum_without_values": (_SCORES + '[output.label]\ntype = "enum"\n', "output.label", "values"),
    "unknown_type": (_SCORES + _ENUM + '[output.x]\ntype = "date"\n', "output.x.type", "enum"),
    "range_on_string": (
        _SCORES + _ENUM + '[output.x]\ntype = "string"\nminimum = 1\n',
        "output.x",
        "only for integer and number",
    ),
    "inverted_range": (
        'score_field = "s"\n[output.s]\ntype = "integer"\nminimum = 5\nmaximum = 1\n',
        "output.s",
        "minimum (5) must be below maximum (1)",
    ),
    "fractional_integer_bound": (
        'score_field = "s"\n[output.s]\ntype = "integer"\nminimum = 0.5\nmaximum = 3\n',
        "output.s",
        "whole-number",
    ),
    "unknown_key": (_SCORES + _ENUM + '[output.x]\ntype = "string"\nmax = 3\n', "output.x.max", ""),
    "score_field_missing": ('score_field = "s"\n' + _ENUM, "", "[output.s]"),
    "score_field_without_range": (
        'score_field = "s"\n' + _ENUM + '[output.s]\ntype = "integer"\n',
        "",
        "output.s: a score_field must be an integer or number field with both minimum and maximum",
    ),
    "score_field_and_scores": (
        'score_field = "s"\n'
        + _SCORES
        + _ENUM
        + '[output.s]\ntype = "integer"\nminimum = 1\nmaximum = 3\n',
        "",
        "not both",
    ),
    "uppercase_label": (
        '[output.label]\ntype = "enum"\nvalues = ["Yes", "no"]\n',
        "",
        "write 'yes', not 'Yes'",
    ),
    "labels_differ": ('labels = ["yes", "maybe"]\n' + _SCORES + _ENUM, "", "differ"),
    "no_label_field": ('[output.why]\ntype = "string"\n', "", "`label` field"),
    "bad_field_name": (_SCORES + _ENUM + '[output.Why]\ntype = "string"\n', "", "'Why'"),
    "pydantic_name": (_SCORES + _ENUM + '[output.json]\ntype = "string"\n', "", "'json'"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_declaration_is_one_line_error(tmp_path: Path, case: str) -> None:
    extra, field, fragment = BAD[case]
    with pytest.raises(PromptError) as info:
        _load(tmp_path, extra)
    message = str(info.value)
    assert "\n" not in message
    assert str(tmp_path / "p.prompt") in message
    assert fragment in message
    if field:
        assert info.value.field == field


def test_decompose_prompt_needs_no_label_field(tmp_path: Path) -> None:
    extra = '[output.claims]\ntype = "string"\n'
    text = HEAD.format(extra=extra).replace('"judge"', '"decompose"') + BODY
    path = tmp_path / "d.prompt"
    path.write_text(text, encoding="utf-8")
    p = load_prompt_file(path)
    assert p.meta.labels == []
    assert p.output_model.model_json_schema()["required"] == ["claims"]


def _props(prompt: Prompt) -> dict[str, Any]:
    props: dict[str, Any] = prompt.output_model.model_json_schema()["properties"]
    return props


def test_integer_bounds_stay_integers_in_the_schema(tmp_path: Path) -> None:
    assert _props(_load(tmp_path, LIKERT))["score"]["maximum"] == 5
    assert isinstance(_props(_load(tmp_path, LIKERT))["score"]["maximum"], int)


def test_declared_schema_is_sent_and_scored_over_loopback(tmp_path: Path) -> None:
    """End to end: the declared schema is the response_format, the answer is scaled."""
    with FakeOpenAIServer(default=reply('{"score": 4, "rationale": "mostly"}')) as server:
        config = ModelConfig(
            model="openai/fake", api_base=server.base_url, structured_output="json_schema"
        )
        judge = LLMJudge(make_client(config, None), _load(tmp_path, LIKERT))
        judgment = asyncio.run(judge(JudgeItem(claim="c", evidence="e")))
        body = server.requests[-1]
    sent = body["response_format"]["json_schema"]
    assert sent["name"] == "rubric_v1"
    assert sent["schema"]["properties"]["score"] == {
        "maximum": 5,
        "minimum": 1,
        "title": "Score",
        "type": "integer",
    }
    assert (judgment.status, judgment.label, judgment.score) == (Status.OK, "4", 0.75)
    assert judgment.parsed is not None and judgment.parsed["score"] == 4
