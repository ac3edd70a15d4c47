"""Resume compares the spec's result-relevant fields, not its bytes; the manifest records
the cache directory actually used; recompute/reparse never present a torn or short
record file as complete."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assay.errors import RunError
from assay.runs import Runner, RunOptions, load_spec, read_json
from assay.runs.rebuild._reparse import recompute_run, reparse_run_checked

SPEC = """# a comment
name = "{name}"
description = "{description}"
bootstrap = {bootstrap}
[[datasets]]
name = "demo"
path = "builtin:forcebench-demo"
[[baselines]]
name = "token-overlap"
[failure]
max_failed_fraction = {fraction}
"""


def write(path: Path, **fields: object) -> Path:
    values = {"name": "r", "description": "first", "bootstrap": 0, "fraction": 0.05}
    values.update(fields)
    path.write_text(SPEC.format(**values), encoding="utf-8")
    return path


def run(spec: Path, out: Path, **opts: object) -> object:
    return Runner(load_spec(spec), RunOptions(output_dir=str(out), progress=False, **opts)).run()


def test_editing_comment_description_or_name_keeps_the_run_resumable(tmp_path: Path) -> None:
    spec = write(tmp_path / "s.toml")
    out = tmp_path / "out"
    run(spec, out)
    text = spec.read_text(encoding="utf-8").replace("# a comment", "# another comment")
    spec.write_text(text, encoding="utf-8")
    write(spec, description="edited", name="renamed", fraction=0.5)
    spec.write_text("# edited comment\n" + spec.read_text(encoding="utf-8"), encoding="utf-8")
    outcome = run(spec, out)  # refused before: the spec's sha256 differed
    assert outcome.status == "complete"  # type: ignore[attr-defined]
    manifest = read_json(out / "manifest.json")
    assert len(manifest["sessions"]) == 2 and manifest["spec"]["description"] == "edited"


def test_a_result_relevant_change_is_refused_listing_what_changed(tmp_path: Path) -> None:
    spec = write(tmp_path / "s.toml")
    run(spec, tmp_path / "out")
    write(spec, bootstrap=200, description="edited")
    with pytest.raises(RunError) as info:
        run(spec, tmp_path / "out")
    message = info.value.render()
    assert "different spec (bootstrap: 0 → 200)" in message
    assert "description" not in message


def test_an_old_manifest_resumes_when_only_non_result_fields_changed(tmp_path: Path) -> None:
    spec = write(tmp_path / "s.toml")
    out = tmp_path / "out"
    run(spec, out)
    manifest = read_json(out / "manifest.json")
    manifest["spec_sha256"] = "0" * 64  # as written by an older assay, for other bytes
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert run(spec, out).status == "complete"  # type: ignore[attr-defined]
    del manifest["spec"]  # no copy to compare: the bytes decide, as before
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(RunError, match="no copy to compare"):
        run(spec, out)


def test_manifest_records_the_cache_dir_actually_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = write(tmp_path / "s.toml")
    run(spec, tmp_path / "a", cache_dir=str(tmp_path / "given"))
    cache = read_json(tmp_path / "a" / "manifest.json")["cache"]
    assert cache["dir"] == str((tmp_path / "given").resolve())  # was null
    monkeypatch.setenv("ASSAY_CACHE_DIR", str(tmp_path / "from-env"))
    run(spec, tmp_path / "b")
    assert read_json(tmp_path / "b" / "manifest.json")["cache"]["dir"] == str(
        (tmp_path / "from-env").resolve()
    )
    run(spec, tmp_path / "c", use_cache=False)
    assert read_json(tmp_path / "c" / "manifest.json")["cache"]["dir"] is None


def _tear_last_line(path: Path) -> int:
    data = path.read_bytes()
    path.write_bytes(data[:-40])  # a write cut short: no newline at the end
    return data.count(b"\n")


def test_recompute_on_a_torn_file_says_incomplete_and_resume_repairs_it(tmp_path: Path) -> None:
    spec = write(tmp_path / "s.toml")
    out = tmp_path / "out"
    run(spec, out)
    complete_metrics = read_json(out / "metrics.json")
    assert "complete" not in complete_metrics
    line = _tear_last_line(out / "judgments.jsonl")
    done = subprocess.run(
        [sys.executable, "-m", "assay", "recompute", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    torn = f"{out / 'judgments.jsonl'}:{line}: torn last line"
    assert f"incomplete: {torn}" in done.stderr
    assert "119 of 120 planned judgments recorded" in done.stderr
    metrics = read_json(out / "metrics.json")
    assert metrics["complete"] is False and metrics["incomplete"][0].startswith(torn)
    manifest = read_json(out / "manifest.json")
    assert manifest["status"] == "interrupted" and manifest["message"].startswith(torn)

    assert run(spec, out).status == "complete"  # type: ignore[attr-defined]
    assert recompute_run(out) == []
    repaired = read_json(out / "metrics.json")
    # the redone judgment has a new recorded_at, so only the record digests differ
    assert repaired.pop("records_sha256") != complete_metrics.pop("records_sha256")
    assert repaired == complete_metrics


def test_reparse_on_a_torn_file_marks_metrics_incomplete(tmp_path: Path) -> None:
    spec = write(tmp_path / "s.toml")
    out = tmp_path / "out"
    run(spec, out)
    line = _tear_last_line(out / "judgments.jsonl")
    _, problems = reparse_run_checked(out)
    assert problems[0] == f"{out / 'judgments.jsonl'}:{line}: torn last line (a write cut short)"
    assert read_json(out / "metrics.json")["complete"] is False
    assert read_json(out / "manifest.json")["status"] == "interrupted"


def test_names_inside_the_spec_still_count(tmp_path: Path) -> None:
    """Only the run's own `name` is free: a dataset's or baseline's name shapes records."""
    spec = write(tmp_path / "s.toml")
    run(spec, tmp_path / "out")
    text = spec.read_text(encoding="utf-8")
    spec.write_text(text.replace('name = "demo"', 'name = "demo2"'), encoding="utf-8")
    with pytest.raises(RunError, match=r"datasets\[0\]\.name: 'demo' → 'demo2'"):
        run(spec, tmp_path / "out")
    spec.write_text(text.replace("token-overlap", "entity-overlap"), encoding="utf-8")
    with pytest.raises(RunError, match=r"baselines\[0\]\.name: 'token-overlap' → 'entity"):
        run(spec, tmp_path / "out")


def test_request_settings_of_an_endpoint_block_may_change(tmp_path: Path) -> None:
    from assay.runs.store._resume import normalised_spec, spec_changes

    def spec(**judge: object) -> dict[str, object]:
        block = {"models": ["openai/m"], "prompts": ["generic-support@1"], **judge}
        return {"datasets": [{"path": "builtin:forcebench-demo"}], "judges": [block]}

    old = normalised_spec(spec(timeout_s=5, max_concurrency=2, api_key_env="A"))
    assert spec_changes(old, normalised_spec(spec(timeout_s=9, api_key_env="B"))) == []
    changed = spec_changes(old, normalised_spec(spec(temperature=0.5)))
    assert changed == ["judges[0].temperature: None → 0.5"]
