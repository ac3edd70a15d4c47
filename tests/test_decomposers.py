"""Decomposers: sentence splitter, claim-list parser, prompts, LLM and baseline decomposers."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from assay.core.outcomes import Status
from assay.decomposers import (
    DECOMPOSE_PARSER_VERSION,
    Decomposer,
    Decomposition,
    LLMDecomposer,
    Sentence,
    SentenceDecomposer,
    parse_claims,
    split_sentences,
)
from assay.errors import PromptError
from assay.models import ModelConfig, ResponseCache, RetryPolicy, make_client
from assay.prompts import SCHEMAS, PromptRegistry
from assay.prompts._schemas import ClaimList
from assay.testing import FakeOpenAIServer, http_error, refusal, reply, truncated

FAST_RETRY = RetryPolicy(max_attempts=4, initial_wait_s=0.01, max_wait_s=1.0, jitter_s=0.01)
DECOMPOSE_PROMPTS = ["decompose-conditional@1", "decompose-atomic@1"]


def _texts(text: str) -> list[str]:
    sentences = split_sentences(text)
    for i, s in enumerate(sentences):
        assert s.id == i
        assert text[s.span[0] : s.span[1]] == s.text
        assert s.text == s.text.strip() and s.text
    return [s.text for s in sentences]


# ---- sentence splitter -----------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   ", "\n\n\t \n"])
def test_empty_input_has_no_sentences(text: str) -> None:
    assert split_sentences(text) == []


def test_plain_sentences_and_terminators() -> None:
    assert _texts("It rained. Was it cold? Yes! We stayed in.") == [
        "It rained.",
        "Was it cold?",
        "Yes!",
        "We stayed in.",
    ]


def test_spans_are_exact_and_whitespace_is_excluded() -> None:
    text = "  First one.   Second one.  \n\n  Third one.  "
    sentences = split_sentences(text)
    assert [s.span for s in sentences] == [(2, 12), (15, 26), (32, 42)]
    assert [s.id for s in sentences] == [0, 1, 2]


@pytest.mark.parametrize(
    "text",
    [
        "Dr. Smith saw Mr. Lee and Mrs. Park today.",
        "Ms. Chen and Prof. Adams met at St. Mary's Hospital.",
        "Some fruits, e.g. apples, keep well.",
        "One fruit, i.e. an apple, is enough.",
        "It was Roe vs. Wade that changed it.",
        "See Fig. 3 for the curve.",
        "It is listed as No. 5 on the chart.",
        "Use approx. 20 grams of salt.",
        "The U.S. Food and Drug Administration approved it.",
        "J. Smith wrote the report.",
        "Martin Luther King Jr. was born in Atlanta.",
        "Smith et al. (2019) reported this.",
        "The daily dose is 500 mg. twice a day for some patients.",
        "The clinic opens at 9 a.m. sharp on weekdays.",
    ],
)
def test_abbreviations_do_not_split(text: str) -> None:
    assert _texts(text) == [text]


def test_ambiguous_abbreviations_split_before_a_new_sentence() -> None:
    assert _texts("The clinic opens at 9 a.m. The doctor arrives later.") == [
        "The clinic opens at 9 a.m.",
        "The doctor arrives later.",
    ]
    assert _texts("It is sold in the U.S. It is not sold in Europe.") == [
        "It is sold in the U.S.",
        "It is not sold in Europe.",
    ]
    assert _texts("Bring pens, paper, etc. Then sit down.") == [
        "Bring pens, paper, etc.",
        "Then sit down.",
    ]
    assert _texts("The usual dose is 200 mg. Do not exceed 1200 mg a day.") == [
        "The usual dose is 200 mg.",
        "Do not exceed 1200 mg a day.",
    ]
    assert _texts("Many adults lack vitamin D. It is made in the skin.") == [
        "Many adults lack vitamin D.",
        "It is made in the skin.",
    ]
    assert _texts("Is it safe? No. Take it with food.") == [
        "Is it safe?",
        "No.",
        "Take it with food.",
    ]


def test_decimals_and_versions_do_not_split() -> None:
    text = "The dose is 3.5 mg. The p-value was 0.05. Install version 3.11.2 first. Use .5 ml."
    assert _texts(text) == [
        "The dose is 3.5 mg.",
        "The p-value was 0.05.",
        "Install version 3.11.2 first.",
        "Use .5 ml.",
    ]


def test_ellipses() -> None:
    assert _texts("He waited... Then he left. It was... fine, I suppose.") == [
        "He waited...",
        "Then he left.",
        "It was... fine, I suppose.",
    ]
    assert _texts("Well\u2026 Nobody knows.") == ["Well\u2026", "Nobody knows."]


def test_quotes_brackets_and_citations_after_the_period() -> None:
    text = (
        'She said "Stop." Then she left. (This is common.) Another one. '
        "\u201cQuoted.\u201d Next. It was confirmed.[3] Later work agreed."
    )
    assert _texts(text) == [
        'She said "Stop."',
        "Then she left.",
        "(This is common.)",
        "Another one.",
        "\u201cQuoted.\u201d",
        "Next.",
        "It was confirmed.[3]",
        "Later work agreed.",
    ]
    assert _texts('"Stop." he said.') == ['"Stop." he said.']


def test_lowercase_continuation_is_not_a_boundary() -> None:
    assert _texts("It dropped by 20 p.c. in a year. Prices rose.") == [
        "It dropped by 20 p.c. in a year.",
        "Prices rose.",
    ]


def test_lists_are_one_sentence_per_line_without_markers() -> None:
    text = (
        "Do this:\n"
        "1. Take ibuprofen with food.\n"
        "2) Drink water. It helps.\n"
        "- first item\n"
        "* second item\n"
        "\u2022 third item\n"
        "\u2022fourth item\n"
        "(a) lettered item\n"
    )
    assert _texts(text) == [
        "Do this:",
        "Take ibuprofen with food.",
        "Drink water.",
        "It helps.",
        "first item",
        "second item",
        "third item",
        "fourth item",
        "lettered item",
    ]


def test_inline_list_numbers_do_not_make_sentences() -> None:
    assert _texts("Steps: 1. Mix the powder. 2. Stir well. It was 12. Then 13.") == [
        "Steps: 1. Mix the powder.",
        "2. Stir well.",
        "It was 12.",
        "Then 13.",
    ]


def test_newlines_and_blank_lines_are_hard_boundaries() -> None:
    text = "A line without a period\nanother line\r\n\r\nThird line.\n\n\nLast"
    assert _texts(text) == ["A line without a period", "another line", "Third line.", "Last"]


def test_markdown_headers_and_rules() -> None:
    text = "# Overview\n## Dosage and timing\nTake it daily.\n---\n> Quoted advice here.\n1."
    assert _texts(text) == [
        "Overview",
        "Dosage and timing",
        "Take it daily.",
        "---",
        "Quoted advice here.",
        "1.",
    ]


def test_urls_and_emails_are_not_split() -> None:
    text = (
        "See https://www.cdc.gov/flu/about/index.html?x=1. Then write to "
        "help.desk@example.org. Or visit www.nhs.uk/conditions/flu. Done."
    )
    assert _texts(text) == [
        "See https://www.cdc.gov/flu/about/index.html?x=1.",
        "Then write to help.desk@example.org.",
        "Or visit www.nhs.uk/conditions/flu.",
        "Done.",
    ]


def test_medical_paragraph() -> None:
    text = (
        "Dr. Smith prescribed 2.5 mg of warfarin daily, e.g. with the evening meal. "
        "Patients over 65 (i.e. most of the cohort) had an INR of approx. 2.5 vs. 3.0 in "
        "younger ones. If you miss a dose, do not double up! Call the clinic at 8 a.m. "
        "The nurse, J. Doe, will advise.\n\n"
        "Key points:\n"
        "- Avoid large changes in vitamin K intake.\n"
        "- Report unusual bleeding.\n"
    )
    sentences = split_sentences(text)
    assert [s.text for s in sentences] == [
        "Dr. Smith prescribed 2.5 mg of warfarin daily, e.g. with the evening meal.",
        "Patients over 65 (i.e. most of the cohort) had an INR of approx. 2.5 vs. 3.0 in "
        "younger ones.",
        "If you miss a dose, do not double up!",
        "Call the clinic at 8 a.m.",
        "The nurse, J. Doe, will advise.",
        "Key points:",
        "Avoid large changes in vitamin K intake.",
        "Report unusual bleeding.",
    ]
    for s in sentences:
        assert text[s.span[0] : s.span[1]] == s.text


def test_splitter_is_fast() -> None:
    line = "Dr. Smith gave 2.5 mg, e.g. at 9 a.m. daily. See https://x.org/a. Then stop! "
    text = (line * 200 + "\n") * 10
    started = time.perf_counter()
    sentences = split_sentences(text)
    assert time.perf_counter() - started < 1.0
    assert len(sentences) == 6000  # three sentences per repeat


# ---- parser ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        "No verifiable claim",
        "No verifiable claim.",
        "no verifiable claim",
        "NO VERIFIABLE CLAIM.",
        '"No verifiable claim"',
        "  No verifiable claim\n",
        "```\nNo verifiable claim\n```",
        "**No verifiable claim**",
        "- No verifiable claim",
        '{"claims": []}',
        "[]",
    ],
)
def test_no_verifiable_claim_is_ok_with_zero_claims(content: str) -> None:
    parsed = parse_claims(content, finish_reason="stop")
    assert parsed.status is Status.OK
    assert parsed.claims == [] and parsed.error is None


@pytest.mark.parametrize(
    "content",
    [
        '{"claims": ["Aspirin thins the blood.", "Aspirin can cause bleeding."]}',
        'Here you go:\n```json\n{"claims": ["Aspirin thins the blood.", '
        '"Aspirin can cause bleeding.",]}\n```',
        '["Aspirin thins the blood.", "Aspirin can cause bleeding."]',
        "- Aspirin thins the blood.\n- Aspirin can cause bleeding.",
        "* Aspirin thins the blood.\n* Aspirin can cause bleeding.\n",
        "1. Aspirin thins the blood.\n2. Aspirin can cause bleeding.",
        "1) Aspirin thins the blood.\n2) Aspirin can cause bleeding.",
        "Claims:\n- Aspirin thins the blood.\n\n- Aspirin can cause bleeding.",
        "- Aspirin thins the blood.\n-\n- Aspirin can cause bleeding.\n- Aspirin thins the blood.",
        "- Aspirin thins\n  the blood.\n- Aspirin can cause bleeding.",
        "```\n- Aspirin thins the blood.\n- Aspirin can cause bleeding.\n```",
    ],
)
def test_claim_forms(content: str) -> None:
    parsed = parse_claims(content, finish_reason="stop")
    assert parsed.status is Status.OK, parsed.error
    assert parsed.claims == ["Aspirin thins the blood.", "Aspirin can cause bleeding."]


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("", "empty"),
        ("   \n ", "empty"),
        (None, "empty"),
        ("Aspirin thins the blood and can cause bleeding.", "no claim list"),
        ("The sentence says aspirin thins blood. It also mentions bleeding.", "no claim list"),
        ("- Aspirin thins the blood.\nAlso, it can cause bleeding.", "line 2"),
        ("- Aspirin thins the blood.\n- No verifiable claim", "mixes"),
        ('{"answer": "aspirin"}', "no 'claims'"),
        ('{"claims": "Aspirin thins the blood."}', "claims"),
        ('["Aspirin", 3]', "only strings"),
        ("-\n- \n", "only empty"),
    ],
)
def test_unstructured_output_is_a_parse_error(content: str | None, why: str) -> None:
    parsed = parse_claims(content, finish_reason="stop")
    assert parsed.status is Status.PARSE_ERROR
    assert parsed.claims == []
    assert why in (parsed.error or "")


def test_truncated_and_refusal_statuses() -> None:
    cut = parse_claims("- Aspirin thins the", finish_reason="length")
    assert cut.status is Status.TRUNCATED and cut.claims == []
    filtered = parse_claims("- Aspirin thins the blood.", finish_reason="content_filter")
    assert filtered.status is Status.REFUSAL
    refused = parse_claims(None, finish_reason="stop", refusal="I can't help with that.")
    assert refused.status is Status.REFUSAL and refused.error == "I can't help with that."
    text_refusal = parse_claims("I'm sorry, but I can't help with that.", finish_reason="stop")
    assert text_refusal.status is Status.REFUSAL


def test_parser_version_is_a_string() -> None:
    assert isinstance(DECOMPOSE_PARSER_VERSION, str) and DECOMPOSE_PARSER_VERSION


# ---- prompts ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def registry() -> PromptRegistry:
    return PromptRegistry(include_env=False)


def test_claim_list_schema_is_registered() -> None:
    assert SCHEMAS.get("ClaimList") is ClaimList
    assert ClaimList.model_validate({"claims": ["a"]}).claims == ["a"]


@pytest.mark.parametrize("ref", DECOMPOSE_PROMPTS)
def test_decompose_prompts_load(registry: PromptRegistry, ref: str) -> None:
    p = registry.get(ref)
    assert p.builtin and p.meta.task == "decompose"
    assert p.meta.variables == ["sentence", "answer"]
    assert p.meta.optional_variables == ["question"]
    assert p.meta.output_schema == "ClaimList" and p.output_model is ClaimList
    assert p.meta.labels == []
    system = (p.system_template or "").lower()
    assert "no verifiable claim" in system and "- " in system


@pytest.mark.parametrize("ref", DECOMPOSE_PROMPTS)
def test_decompose_prompts_render(registry: PromptRegistry, ref: str) -> None:
    p = registry.get(ref)
    msgs = p.render({"sentence": "SENTENCE-TEXT-7", "answer": "ANSWER-TEXT-3"})
    assert [m.role for m in msgs] == ["system", "user"]
    user = msgs[1].content
    assert "SENTENCE-TEXT-7" in user and "ANSWER-TEXT-3" in user
    assert "Question" not in user
    with_q = p.render({"sentence": "S", "answer": "A", "question": "QUESTION-TEXT-9?"})
    assert "QUESTION-TEXT-9?" in with_q[1].content


@pytest.mark.parametrize("ref", DECOMPOSE_PROMPTS)
def test_missing_sentence_is_a_prompt_error(registry: PromptRegistry, ref: str) -> None:
    with pytest.raises(PromptError, match="needs variable 'sentence'"):
        registry.get(ref).render({"answer": "A"}, where="a1:s0")


# ---- LLM decomposer --------------------------------------------------------------------

ANSWER = "Take ibuprofen with food. I hope you feel better soon!"


def _decomposer(
    server: FakeOpenAIServer,
    cache: ResponseCache | None = None,
    ref: str = "decompose-conditional@1",
    **kw: object,
) -> LLMDecomposer:
    config = ModelConfig(
        model="openai/fake-decomposer",
        api_base=server.base_url,
        retry=FAST_RETRY,
        timeout_s=5.0,
    )
    return LLMDecomposer(make_client(config, cache), PromptRegistry().get(ref), **kw)  # type: ignore[arg-type]


def _decompose(
    dec: LLMDecomposer, sentence: Sentence, question: str | None = None
) -> Decomposition:
    return asyncio.run(dec.decompose(sentence, answer=ANSWER, answer_id="a7", question=question))


def test_llm_decomposer_claims_ids_and_spans(server: FakeOpenAIServer) -> None:
    sentence = split_sentences(ANSWER)[0]
    server.script(sentence.text, [reply("- claim one\n- claim two")])
    dec = _decomposer(server)
    assert isinstance(dec, Decomposer)
    result = _decompose(dec, sentence, question="How should I take ibuprofen?")
    assert result.status is Status.OK
    assert [c.text for c in result.claims] == ["claim one", "claim two"]
    assert [c.id for c in result.claims] == ["a7:s0:c0", "a7:s0:c1"]
    assert all(c.span == sentence.span == (0, 25) and c.sentence_id == 0 for c in result.claims)
    assert result.raw_output == "- claim one\n- claim two"
    assert result.attempts == 1 and not result.cache_hit and result.usage.total_tokens > 0
    sent = server.requests[-1]["messages"]
    assert "How should I take ibuprofen?" in sent[-1]["content"]
    assert ANSWER in sent[-1]["content"]


def test_llm_decomposer_no_verifiable_claim(server: FakeOpenAIServer) -> None:
    sentence = split_sentences(ANSWER)[1]
    server.script(sentence.text, [reply("No verifiable claim")])
    result = _decompose(_decomposer(server, ref="decompose-atomic@1"), sentence)
    assert result.status is Status.OK and result.claims == []
    assert result.raw_output == "No verifiable claim"


def test_llm_decomposer_refusal_truncation_and_parse_error(server: FakeOpenAIServer) -> None:
    dec = _decomposer(server)
    cases = {
        "Sentence about refusal.": (refusal("I can't help with that."), Status.REFUSAL),
        "Sentence about truncation.": (truncated("- claim one\n- cla"), Status.TRUNCATED),
        "Sentence about prose.": (reply("It says ibuprofen helps."), Status.PARSE_ERROR),
    }
    for text, (behavior, status) in cases.items():
        server.script(text, [behavior])
        result = _decompose(dec, Sentence(id=3, text=text, span=(0, len(text))))
        assert result.status is status and result.claims == []
        assert result.error
    assert server.stats.total == 3


def test_llm_decomposer_retries_500s(server: FakeOpenAIServer) -> None:
    server.script("Retry sentence.", [http_error(500), http_error(503), reply("- claim one")])
    result = _decompose(_decomposer(server), Sentence(id=0, text="Retry sentence.", span=(0, 15)))
    assert result.status is Status.OK and result.attempts == 3
    assert [c.text for c in result.claims] == ["claim one"]


def test_llm_decomposer_api_error_after_retries(server: FakeOpenAIServer) -> None:
    server.script("Broken sentence.", [http_error(500)] * 10)
    result = _decompose(_decomposer(server), Sentence(id=0, text="Broken sentence.", span=(0, 16)))
    assert result.status is Status.API_ERROR and result.claims == []
    assert result.attempts == FAST_RETRY.max_attempts and "500" in (result.error or "")


def test_llm_decomposer_cache_hit(server: FakeOpenAIServer, tmp_path: Path) -> None:
    sentence = Sentence(id=0, text="Cached sentence.", span=(0, 16))
    server.script(sentence.text, [reply("- claim one\n- claim two")])
    dec = _decomposer(server, ResponseCache(tmp_path / "c"))
    first = _decompose(dec, sentence)
    second = _decompose(dec, sentence)
    assert first.status is second.status is Status.OK
    assert not first.cache_hit and second.cache_hit and second.attempts == 0
    assert [c.id for c in second.claims] == [c.id for c in first.claims]
    assert server.stats.total == 1


def test_llm_decomposer_identity(server: FakeOpenAIServer) -> None:
    dec = _decomposer(server)
    assert dec.id == "openai/fake-decomposer::decompose-conditional@1"
    info = dec.describe()
    assert info["kind"] == "llm-decomposer"
    assert info["parser_version"] == DECOMPOSE_PARSER_VERSION
    assert info["prompt"]["id"] == "decompose-conditional" and info["prompt"]["sha256"]
    assert info["client"]["model"] == "openai/fake-decomposer"
    assert info["decoding"]["temperature"] == 0.0
    assert _decomposer(server, name="my-dec").id == "my-dec"


def test_llm_decomposer_rejects_a_judge_prompt(server: FakeOpenAIServer) -> None:
    with pytest.raises(PromptError, match='needs a task = "decompose" prompt'):
        _decomposer(server, ref="generic-support@1")


# ---- baseline --------------------------------------------------------------------------


def test_sentence_decomposer() -> None:
    text = "## Dosage\n1.\nTake 2.5 mg daily.\n---\n"
    dec = SentenceDecomposer()
    assert isinstance(dec, Decomposer)
    assert dec.id == "sentence" and dec.describe()["kind"] == "sentence"

    async def run_all() -> list[Decomposition]:
        return [await dec.decompose(s, answer=text, answer_id="q1") for s in split_sentences(text)]

    results = asyncio.run(run_all())
    assert all(r.status is Status.OK and r.attempts == 0 for r in results)
    claims = [c for r in results for c in r.claims]
    assert [(c.id, c.text) for c in claims] == [
        ("q1:s0:c0", "Dosage"),
        ("q1:s2:c0", "Take 2.5 mg daily."),
    ]
    assert claims[1].span == (13, 31) and text[13:31] == "Take 2.5 mg daily."
    assert [len(r.claims) for r in results] == [1, 0, 1, 0]
