"""Bad inputs to `assay policies apply` (policies spec §5.1, §6 test 37): a malformed JSON
line or a record failing validation in any file a policy reads is exit 2 with one line
naming file, line and field, and nothing is written under `policies/<name>/`; a torn
last line (a process killed mid-write) is still ignored, as everywhere a run is read."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _gate_fixtures import scored_record
from _policies_cli_helpers import POLICY, RUN_SPEC, assay, make_run, write_text

RECORD_FILES = ("answers.jsonl", "claims.jsonl", "verifications.jsonl", "gates.jsonl")


@pytest.fixture(scope="module")
def base_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = make_run(tmp_path_factory.mktemp("policies_inputs"), RUN_SPEC)
    answers = [json.loads(line) for line in (run / "answers.jsonl").read_text().splitlines()]
    gates = [scored_record(a["answer_id"], 0.4, 0.6) for a in answers]  # one per question
    records = [g.model_copy(update={"dataset": a["dataset"]}) for g, a in zip(gates, answers)]
    text = "".join(r.model_dump_json() + "\n" for r in records)
    write_text(run / "gates.jsonl", text)
    return run


@pytest.fixture
def run_dir(base_run: Path, tmp_path: Path) -> Path:
    target = tmp_path / "run"
    shutil.copytree(base_run, target)
    return target


@pytest.fixture
def policy_file(tmp_path: Path) -> Path:
    return write_text(tmp_path / "policies.toml", POLICY)


def _edit_line(path: Path, index: int, edit: object) -> int:
    """Replace line `index` (0-based) of a JSONL file by `edit(record)` or a raw string;
    the 1-based line number an error must name."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(lines) > index + 1, "the edited line must not be the last one"
    if callable(edit):
        lines[index] = json.dumps(edit(json.loads(lines[index]))) + "\n"
    else:
        lines[index] = str(edit)
    path.write_text("".join(lines), encoding="utf-8")
    return index + 1


def _refused(run_dir: Path, policy_file: Path) -> str:
    """Apply; assert exit 2, one stderr line, nothing written; the line."""
    code, _, err = assay("policies", "apply", run_dir, "--policy", policy_file)
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    assert not (run_dir / "policies").exists()
    return err.strip()


@pytest.mark.parametrize("name", RECORD_FILES)
def test_a_torn_middle_line_names_file_line_and_the_key_before_it(
    run_dir: Path, policy_file: Path, name: str
) -> None:
    line = _edit_line(run_dir / name, 1, '{"dataset": "factuality-demo", "answer_id": \n')
    err = _refused(run_dir, policy_file)
    assert f"{name}:{line}: " in err
    assert "not valid JSON at column 45 after key 'answer_id'" in err


@pytest.mark.parametrize(
    ("name", "edit", "field", "needle"),
    [
        ("verifications.jsonl", lambda r: {**r, "status": "fine"}, "status", "'ok'"),
        (
            "verifications.jsonl",
            lambda r: {**r, "pairs": [{**r["pairs"][0], "p_entail": "high"}]},
            "pairs.0.p_entail",
            "valid number",
        ),
        (
            "verifications.jsonl",
            lambda r: {**r, "pairs": [{**r["pairs"][0], "page": [3]}]},
            "pairs.0.page",  # not pairs.0.page.int: the union's member tag is left out
            "",
        ),
        ("answers.jsonl", lambda r: {**r, "gold_action": "maybe"}, "gold_action", "'maybe'"),
        ("claims.jsonl", lambda r: {**r, "critical": "perhaps"}, "critical", "boolean"),
        ("claims.jsonl", lambda r: {k: v for k, v in r.items() if k != "claim"}, "claim", ""),
        ("gates.jsonl", lambda r: {**r, "k1_initial": -1}, "k1_initial", ""),
    ],
)
def test_a_record_failing_validation_names_file_line_and_field(
    run_dir: Path, policy_file: Path, name: str, edit: object, field: str, needle: str
) -> None:
    line = _edit_line(run_dir / name, 2, edit)
    err = _refused(run_dir, policy_file)
    assert f"{name}:{line}: field '{field}': " in err
    assert needle in err


@pytest.mark.parametrize("name", RECORD_FILES)
def test_a_torn_last_line_is_ignored(run_dir: Path, policy_file: Path, name: str) -> None:
    path = run_dir / name
    path.write_text(path.read_text(encoding="utf-8") + '{"dataset": "fact', encoding="utf-8")
    code, _, err = assay("policies", "apply", run_dir, "--policy", policy_file)
    assert code == 0, err
    assert (run_dir / "policies" / "cert" / "manifest.json").is_file()


def _dataset_copy(run_dir: Path, edit: object) -> Path:
    """Point the run's manifest at a copy of its answers dataset with row 2 edited."""
    manifest_path = run_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    source = Path(manifest["factuality"]["datasets"][0]["path"])
    copy = run_dir.parent / "answers_copy.jsonl"
    shutil.copy(source, copy)
    _edit_line(copy, 1, edit)
    manifest["factuality"]["datasets"][0]["path"] = str(copy)
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    return copy


@pytest.mark.parametrize(
    ("edit", "field", "needle"),
    [
        (lambda r: {**r, "gold_action": "maybe"}, "gold_action", "got 'maybe'"),
        (lambda r: {**r, "split": "holdout"}, "split", "train|dev|test"),
        (lambda r: {**r, "gold_support": 1.5}, "gold_support", "1"),
        (
            lambda r: {**r, "evidence": [{"id": "e1", "text": "x", "page": [3]}]},
            "evidence.0.page",
            "",
        ),
    ],
)
def test_a_bad_known_dataset_field_names_file_line_and_field(
    run_dir: Path, policy_file: Path, edit: object, field: str, needle: str
) -> None:
    copy = _dataset_copy(run_dir, edit)
    err = _refused(run_dir, policy_file)
    assert f"{copy}:2: field '{field}': " in err
    assert needle in err


def test_unknown_dataset_fields_are_ignored(run_dir: Path, policy_file: Path) -> None:
    _dataset_copy(run_dir, lambda r: {**r, "reviewer_mood": "maybe", "gold_actions": "maybe"})
    code, _, err = assay("policies", "apply", run_dir, "--policy", policy_file)
    assert code == 0, err
