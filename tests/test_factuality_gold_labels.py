"""Gold claim labels that assay would otherwise count silently as "not supported"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import invoke
from pydantic import ValidationError
from test_metrics_factuality import claim, ver

from assay.core.answers import GoldClaim
from assay.metrics import gold_metrics


def test_gold_claim_labels_are_read_case_and_separator_insensitively() -> None:
    assert GoldClaim(id="c", text="t", label="Not Supported").label == "not_supported"
    assert GoldClaim(id="c", text="t", label=" SUPPORTED ").label == "supported"
    assert GoldClaim(id="c", text="t").label is None


def test_a_gold_claim_label_outside_the_known_set_is_refused() -> None:
    with pytest.raises(ValidationError, match="must be supported\\|not_supported.*got 'yes'"):
        GoldClaim(id="c", text="t", label="yes")


def test_gold_metrics_refuses_labels_that_would_count_as_negative() -> None:
    records = [ver("r1", "c1", "supported", gold="yes"), ver("r1", "c2", "unsupported", gold="no")]
    with pytest.raises(ValueError, match="gold labels 'no', 'yes' are not gold labels"):
        gold_metrics(records)
    row = gold_metrics(records, positive="yes").row("v1")  # the caller names the mapping
    assert (row.tp, row.fp, row.fn, row.tn) == (1, 0, 0, 1)


def test_gold_metrics_with_known_labels_is_unchanged() -> None:
    records = [ver("r1", "c1", "supported", gold="supported")]
    records.append(ver("r1", "c2", "supported", gold="unsupported"))
    row = gold_metrics(records, claims=[claim("r1", "c1", "supported")]).row("v1")
    assert (row.tp, row.fp) == (1, 1)


def test_a_run_over_answers_with_unknown_gold_labels_is_one_error_line(tmp_path: Path) -> None:
    answers = tmp_path / "answers.jsonl"
    row = {"id": "a1", "answer": "The sky is blue.", "evidence": [{"id": "p", "text": "Blue sky."}]}
    row["gold_claims"] = [{"id": "c1", "text": "The sky is blue.", "label": "yes"}]
    answers.write_text(json.dumps(row) + "\n", encoding="utf-8")
    spec = tmp_path / "spec.toml"
    spec.write_text(
        f'name = "g"\noutput_dir = "{tmp_path / "out"}"\n'
        f'[factuality]\ndatasets = [{{ path = "{answers}" }}]\n'
        'verifiers = [{ kind = "overlap" }]\n',
        encoding="utf-8",
    )
    code, _, err = invoke(["run", str(spec), "--no-progress"])
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "answers.jsonl:1" in lines[0] and "got 'yes'" in lines[0]
    assert not (tmp_path / "out" / "verifications.jsonl").exists()
