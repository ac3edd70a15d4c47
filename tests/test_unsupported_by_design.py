"""A claim flagged `unsupported_by_design` in an answers dataset: read with the given
claims, carried into claims.jsonl (absent when not given, so older records dump as
before), and never VERIFIED by fail_closed (reason `unsupported_by_design`), while its
unflagged twin (same text, same evidence, same scores) is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _policies_cli_helpers import assay, lines

from assay.datasets import load_answers
from assay.errors import DatasetError

ROW = {
    "id": "a1",
    "question": "Dose?",
    "answer": "Take 5 mg daily. Take it with food.",
    "evidence": [{"id": "p1", "text": "Take 5 mg daily. Take it with food."}],
    "gold_claims": [
        {"id": "c1", "text": "Take 5 mg daily.", "label": "supported"},
        {
            "id": "c2",
            "text": "Take 5 mg daily.",
            "label": "supported",
            "unsupported_by_design": True,
        },
        {"id": "c3", "text": "Take it with food.", "unsupported_by_design": False},
    ],
}
SPEC = """
name = "by-design"
output_dir = "run"
[factuality]
datasets = [{ name = "d", path = "answers.jsonl" }]
decomposer = { kind = "given" }
verifiers = [{ kind = "overlap", threshold = 0.5 }]
"""
POLICY = """
[[policies]]
name = "render"
kind = "fail_closed"
verifier = "baseline:overlap"
tau_entail = "0.5"
tau_contradict = "0.99"
"""


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_the_flag_is_read_and_a_bad_value_is_one_line(tmp_path: Path) -> None:
    item = load_answers(_write(tmp_path / "a.jsonl", [ROW]), format="jsonl").items[0]
    assert [c.unsupported_by_design for c in item.gold_claims or []] == [None, True, False]
    bad = {**ROW, "gold_claims": [{"id": "c1", "text": "x", "unsupported_by_design": "maybe"}]}
    with pytest.raises(DatasetError, match="unsupported_by_design"):
        load_answers(_write(tmp_path / "b.jsonl", [bad]), format="jsonl")


def test_fail_closed_never_verifies_a_claim_unsupported_by_design(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(tmp_path / "answers.jsonl", [ROW])
    (tmp_path / "spec.toml").write_text(SPEC, encoding="utf-8")
    (tmp_path / "policy.toml").write_text(POLICY, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, _, err = assay("run", "spec.toml", "--no-progress")
    assert code == 0, err
    claims = {c["claim_id"]: c for c in lines(tmp_path / "run" / "claims.jsonl")}
    assert "unsupported_by_design" not in claims["c1"]
    assert claims["c2"]["unsupported_by_design"] is True
    assert claims["c3"]["unsupported_by_design"] is False
    code, _, err = assay("policies", "apply", "run", "--policy", "policy.toml")
    assert code == 0, err
    decided = {c["claim_id"]: c for c in lines(tmp_path / "run/policies/render/claims.jsonl")}
    assert (decided["c1"]["native"], decided["c1"]["reason"]) == ("VERIFIED", "entailed")
    assert decided["c2"]["native"] == "UNVERIFIED"
    assert decided["c2"]["reason"] == "unsupported_by_design"
    assert decided["c2"]["unsupported_by_design"] is True
    assert decided["c3"]["native"] == "VERIFIED" and decided["c3"]["unsupported_by_design"] is False
