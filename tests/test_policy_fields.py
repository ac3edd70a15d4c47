"""Policy dataset fields: read from answers JSONL, validated with
one-line errors naming file, line and field, carried into answers.jsonl / claims.jsonl,
and absent from every dump when a dataset does not give them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.core.answer_fields import CLAIM_FIELDS, RESPONSE_FIELDS
from assay.core.answers import AnswerItem, GoldClaim, Passage
from assay.core.records import AnswerRecord, ClaimRecord
from assay.datasets import load_answers
from assay.errors import DatasetError
from assay.policies.claim_selective._inputs import ClaimInput
from assay.runs import Runner, RunOptions, load_spec

FULL_ROW: dict[str, Any] = {
    "id": "q1",
    "question": "How much?",
    "answer": "Take 5 mg. Not with food.",
    "source": "drug_label",
    "intent": "Dosage Adjustment",
    "source_url": "https://example.org/label",
    "evidence_text": "Take 5 mg daily.",
    "claim_type": "instruction-specific",
    "split": "DEV",
    "gold_action": "Partial",
    "evidence_label": "has evidence",
    "gold_support": 0.5,
    "gold_citation_quality": "weak",
    "evidence": [
        {"id": "p1", "text": "Take 5 mg daily.", "doc_id": "d1", "page": 3},
        {"id": "p2", "text": "A review.", "evidence_level": "Review"},
    ],
    "gold_claims": [
        {"id": "c1", "text": "Take 5 mg.", "gold_status": "certified", "critical": True},
        {"id": "c2", "text": "Not with food.", "gold_status": "omitted", "required": False},
        {"id": "c3", "text": "Maybe.", "critical": False, "gold_usable": True},
    ],
}
BARE_ROW: dict[str, Any] = {
    "id": "q2",
    "answer": "Plain text.",
    "evidence": [{"id": "p3", "text": "Plain text."}],
    "gold_claims": [{"id": "c1", "text": "Plain text."}],
}


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _load(tmp_path: Path, rows: list[dict[str, Any]]) -> list[AnswerItem]:
    return load_answers(_jsonl(tmp_path / "answers.jsonl", rows), format="jsonl").items


def test_response_claim_and_passage_fields_are_read_and_normalised(tmp_path: Path) -> None:
    item = _load(tmp_path, [FULL_ROW])[0]
    assert (item.intent, item.claim_type, item.split) == (
        "dosage_adjustment",
        "instruction_specific",
        "dev",
    )
    assert (item.gold_action, item.evidence_label) == ("partial", "has_evidence")
    assert (item.gold_support, item.gold_citation_quality) == (0.5, "WEAK")
    assert (item.source, item.source_url, item.evidence_text) == (
        "drug_label",
        "https://example.org/label",
        "Take 5 mg daily.",
    )
    p1, p2 = item.evidence
    assert (p1.doc_id, p1.page, p1.evidence_level) == ("d1", 3, None)
    assert p2.evidence_level == "review"
    c1, c2, c3 = item.gold_claims or []
    assert (c1.critical, c1.required, c1.gold_status, c1.gold_usable) == (
        True,
        None,
        "certified",
        True,
    )
    assert (c2.gold_status, c2.gold_usable, c2.required) == ("omitted", False, False)
    assert (c3.gold_status, c3.gold_usable, c3.critical) == (None, True, False)


@pytest.mark.parametrize(
    ("change", "field", "needle"),
    [
        (
            {"gold_action": "maybe"},
            "gold_action",
            "must be full|partial|conflict|abstain, got 'maybe'",
        ),
        ({"split": "validation"}, "split", "must be train|dev|test, got 'validation'"),
        (
            {"evidence_label": "yes"},
            "evidence_label",
            "must be has_evidence|no_evidence, got 'yes'",
        ),
        ({"gold_support": 1.5}, "gold_support", "less than or equal to 1"),
        ({"gold_support": -0.1}, "gold_support", "greater than or equal to 0"),
        ({"gold_support": True}, "gold_support", "must be a number in [0, 1], got true"),
        ({"gold_support": "high"}, "gold_support", "valid number"),
        (
            {"gold_citation_quality": "OK"},
            "gold_citation_quality",
            "must be GOOD|WEAK|BAD, got 'OK'",
        ),
        ({"intent": 7}, "intent", "valid string"),
        (
            {"gold_claims": [{"id": "c", "text": "t", "gold_status": "true"}]},
            "gold_claims.0.gold_status",
            "must be certified|condition_limited|conflicting|omitted, got 'true'",
        ),
        (
            {"gold_claims": [{"id": "c", "text": "t", "gold_status": "omitted", "gold_usable": 1}]},
            "gold_claims.0.gold_usable",
            "gold_usable = true disagrees with gold_status = 'omitted'",
        ),
        (
            {"gold_claims": [{"id": "c", "text": "t", "critical": "sometimes"}]},
            "gold_claims.0.critical",
            "valid boolean",
        ),
        (
            {"evidence": [{"id": "p", "text": "t", "evidence_level": ["review"]}]},
            "evidence.0.evidence_level",
            "valid string",
        ),
    ],
)
def test_a_bad_value_is_one_line_naming_file_line_and_field(
    tmp_path: Path, change: dict[str, Any], field: str, needle: str
) -> None:
    path = _jsonl(tmp_path / "bad.jsonl", [BARE_ROW, {**FULL_ROW, **change}])
    with pytest.raises(DatasetError) as excinfo:
        load_answers(path, format="jsonl")
    err = excinfo.value
    assert (err.field, err.line) == (field, 2)
    text = str(err)
    assert text.startswith(f"{path}:2: field '{field}': ") and "\n" not in text
    assert needle in text


def test_absent_fields_leave_every_dump_as_before(tmp_path: Path) -> None:
    """Datasets without the fields: no new key anywhere, so hashes stay the same."""
    item = _load(tmp_path, [BARE_ROW])[0]
    assert list(item.model_dump()) == [
        "id",
        "question",
        "answer",
        "evidence",
        "gold_claims",
        "gold_factuality",
        "source",
    ]
    assert list(item.evidence[0].model_dump()) == ["id", "text", "title", "source"]
    assert list((item.gold_claims or [])[0].model_dump()) == ["id", "text", "label", "evidence"]
    record = AnswerRecord(dataset="d", answer_id="q2")
    assert record.model_dump_json() == (
        '{"dataset":"d","answer_id":"q2","question":null,"answer_chars":null,'
        '"gold_factuality":null}'
    )
    claim = ClaimRecord(
        dataset="d", answer_id="q2", sentence_id=0, claim_id="c", claim="t", decomposer_id="x"
    )
    assert not set(claim.model_dump()) & set(CLAIM_FIELDS)


def test_present_fields_dump_after_the_keys_records_always_had() -> None:
    passage = Passage(id="p", text="t", evidence_level="review", page=2)
    assert list(passage.model_dump()) == ["id", "text", "title", "source", "page", "evidence_level"]
    record = AnswerRecord(dataset="d", answer_id="a", gold_action="abstain", source="s")
    dumped = list(record.model_dump())
    assert dumped[:5] == ["dataset", "answer_id", "question", "answer_chars", "gold_factuality"]
    assert set(dumped[5:]) == {"gold_action", "source"}
    assert AnswerRecord.model_validate_json(record.model_dump_json()) == record


def _given_claims_run(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    _jsonl(tmp_path / "answers.jsonl", rows)
    spec = tmp_path / "spec.toml"
    spec.write_text(
        """
name = "fields"
[factuality]
datasets = [{ path = "answers.jsonl", format = "jsonl" }]
decomposer = { kind = "given" }
verifiers = [{ kind = "overlap", threshold = 0.5 }]
""",
        encoding="utf-8",
    )
    out = tmp_path / "run"
    outcome = Runner(load_spec(spec), RunOptions(output_dir=str(out), progress=False)).run()
    assert outcome.status == "complete"
    return out


def _lines(path: Path) -> dict[str, dict[str, Any]]:
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]
    return {f"{r['answer_id']}/{r.get('claim_id', '')}": r for r in rows}


def test_a_run_carries_the_fields_into_answers_and_claims(tmp_path: Path) -> None:
    out = _given_claims_run(tmp_path, [FULL_ROW, BARE_ROW])
    answers = _lines(out / "answers.jsonl")
    full = answers["q1/"]
    expected = AnswerItem.model_validate(FULL_ROW)
    for name in (*RESPONSE_FIELDS, "source"):
        assert full[name] == getattr(expected, name), name
    assert not set(answers["q2/"]) & {*RESPONSE_FIELDS, "source"}
    claims = _lines(out / "claims.jsonl")
    c1, c2, c3 = claims["q1/c1"], claims["q1/c2"], claims["q1/c3"]
    assert (c1["critical"], c1["gold_status"], c1["gold_usable"]) == (True, "certified", True)
    assert "required" not in c1
    assert (c2["required"], c2["gold_usable"]) == (False, False)
    assert (c3["critical"], c3["gold_usable"]) == (False, True) and "gold_status" not in c3
    assert not set(claims["q2/c1"]) & set(CLAIM_FIELDS)


def test_claim_records_read_as_claim_selective_inputs(tmp_path: Path) -> None:
    """The carried fields are what the policy reads: defaults (critical true, required =
    critical) apply where the dataset is silent."""
    out = _given_claims_run(tmp_path, [FULL_ROW, BARE_ROW])
    claims = _lines(out / "claims.jsonl")
    read = {k: ClaimInput.model_validate(v) for k, v in claims.items()}
    assert [read[k].is_required for k in ("q1/c1", "q1/c2", "q1/c3", "q2/c1")] == [
        True,
        False,
        False,
        True,
    ]
    assert [read[k].gold_usable for k in ("q1/c1", "q1/c2", "q1/c3", "q2/c1")] == [
        True,
        False,
        True,
        None,
    ]


def test_gold_claim_fields_match_the_policy_derivation() -> None:
    """One rule for `gold_usable` in the dataset and in the policy input."""
    for status in ("certified", "condition_limited", "conflicting", "omitted"):
        given = GoldClaim(id="c", text="t", gold_status=status)
        assert given.gold_usable == ClaimInput(claim_id="c", gold_status=status).gold_usable


def test_the_cli_refuses_a_bad_gold_action_with_one_line_and_exit_code_2(tmp_path: Path) -> None:
    """A bad dataset field: exit 2, one line, no run directory."""
    _jsonl(tmp_path / "answers.jsonl", [BARE_ROW, {**FULL_ROW, "gold_action": "maybe"}])
    spec = tmp_path / "spec.toml"
    spec.write_text(
        '[factuality]\ndatasets = [{ path = "answers.jsonl", format = "jsonl" }]\n'
        'decomposer = { kind = "given" }\nverifiers = [{ kind = "overlap" }]\n',
        encoding="utf-8",
    )
    proc = subprocess.run(
        [sys.executable, "-m", "assay", "run", str(spec), "--output-dir", "out"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'answers.jsonl'}:2: field 'gold_action': "
        "must be full|partial|conflict|abstain, got 'maybe'"
    ]
    assert not (tmp_path / "out").exists()


LABELS: dict[str, tuple[str, ...]] = {
    "split": ("train", "dev", "test"),
    "gold_action": ("full", "partial", "conflict", "abstain"),
    "evidence_label": ("has_evidence", "no_evidence"),
}


@settings(max_examples=60, deadline=None)
@given(
    field=st.sampled_from(sorted(LABELS)),
    pick=st.integers(min_value=0, max_value=3),
    upper=st.lists(st.booleans(), min_size=16, max_size=16),
    separator=st.sampled_from(["_", " ", "-", "  ", " - "]),
)
def test_labels_read_case_and_separator_insensitively(
    field: str, pick: int, upper: list[bool], separator: str
) -> None:
    label = LABELS[field][pick % len(LABELS[field])]
    cased = "".join(ch.upper() if up else ch for ch, up in zip(label, upper, strict=False))
    written = f" {cased.replace('_', separator)} "
    item = AnswerItem.model_validate({"id": "a", "answer": "x", field: written})
    assert getattr(item, field) == label
    assert AnswerItem.model_validate(item.model_dump()) == item
