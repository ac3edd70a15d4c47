"""Every reader of a run directory's JSONL files reads them one way: a torn
last line (a process killed mid-write) is skipped, never a crash or a half record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.core.rundir import (
    ANSWERS_FILE,
    CLAIMS_FILE,
    GATE_DECISIONS_FILE,
    MANIFEST_FILE,
    METRICS_FILE,
    RESPONSES_FILE,
    SWEEP_FILE,
    iter_rows,
)
from assay.errors import RunError
from assay.policies.fail_closed._samples import _by_answer
from assay.policies.report._curves import RunCache, _sweep_points
from assay.policies.report._data import _mix, policy_report
from assay.runs.rebuild._metrics import read_answers

TORN = '{"outcome": "fa'  # the last line of a file whose writer was killed mid-write


def test_iter_rows_skips_a_torn_last_line(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n\n{"b": [2]}\n' + TORN, encoding="utf-8")
    assert list(iter_rows(path)) == [{"a": 1}, {"b": [2]}]
    assert list(iter_rows(tmp_path / "missing.jsonl")) == []


def test_iter_rows_names_file_and_line_of_a_corrupt_line(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n{"a": \n{"a": 3}\n', encoding="utf-8")
    with pytest.raises(RunError, match=r"x\.jsonl:2: corrupt record"):
        list(iter_rows(path))


def test_read_answers_skips_a_torn_last_line(tmp_path: Path) -> None:
    (tmp_path / ANSWERS_FILE).write_text('{"answer_id": "a1"}\n' + TORN, encoding="utf-8")
    assert read_answers(tmp_path) == [{"answer_id": "a1"}]


@pytest.mark.parametrize("name", [RESPONSES_FILE, GATE_DECISIONS_FILE])
def test_policy_outcome_mix_skips_a_torn_last_line(tmp_path: Path, name: str) -> None:
    rows = [{"outcome": "pass"}, {"outcome": "pass"}, {"outcome": "abstain"}]
    body = "".join(json.dumps(r) + "\n" for r in rows) + TORN
    (tmp_path / name).write_text(body, encoding="utf-8")
    counts = {(m.label, m.count, m.total) for m in _mix(tmp_path)}
    assert counts == {("abstain", 1, 3), ("pass", 2, 3)}


def test_policy_samples_skip_a_torn_last_claim(tmp_path: Path) -> None:
    (tmp_path / CLAIMS_FILE).write_text('{"dataset": "d", "answer_id', encoding="utf-8")
    assert _by_answer(tmp_path) == {}


def test_recorded_sweep_skips_a_torn_last_point(tmp_path: Path) -> None:
    (tmp_path / SWEEP_FILE).write_text('{"threshold": 0.5}\n{"thresh', encoding="utf-8")
    cache = RunCache(tmp_path)
    assert _sweep_points(tmp_path, {}, cache) == ([{"threshold": 0.5}], SWEEP_FILE)


def test_a_corrupt_policy_output_line_is_a_report_warning_naming_file_and_line(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "policies" / "p"
    folder.mkdir(parents=True)
    (folder / MANIFEST_FILE).write_text("{}", encoding="utf-8")
    (folder / METRICS_FILE).write_text("{}", encoding="utf-8")
    (folder / RESPONSES_FILE).write_text('{"outcome": "pass"}\n{"outc\n', encoding="utf-8")
    report = policy_report(tmp_path, folder, RunCache(tmp_path), charts=False)
    assert len(report.warnings) == 1
    assert "cannot read the outputs" in report.warnings[0]
    assert f"{RESPONSES_FILE}:2: corrupt record" in report.warnings[0]
