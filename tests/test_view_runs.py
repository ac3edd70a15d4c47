"""Run discovery of `assay view` (assay.view.index): which directories are runs, what
kind, their status (a live writer-lock holder is "running"), and a broken manifest
listed as "unreadable" without hiding the other runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _view_runs import item, manifest, pair, write_claims, write_items, write_pairs

from assay.core.rundir_lock import LOCK_FILE, WriterLock
from assay.view.index import RunSummary, ViewIndex, discover, run_id, writer_active

JUDGES = [
    {"id": "openai/m1::j@1", "client": {"model": "openai/m1"}, "stats": {"cost_usd": 0.25}},
    {"id": "openai/m2::j@1", "model": "openai/m2", "stats": {"cost_usd": 0.5}},  # older shape
    {"id": "baseline:x", "stats": {"cost_usd": None}},
]


def by_name(paths: list[Path]) -> dict[str, RunSummary]:
    return {r.path: r for r in discover(paths)}


def test_runs_are_found_below_the_paths_not_inside_other_runs(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    write_items(root / "a", [], [item("i0", "j", "yes")])
    write_pairs(root / "team" / "b", pair("p", "j", 0.9, 0.1))
    manifest(root / "a" / "policies" / "strict")  # a policy's own manifest: part of run a
    (root / ".hidden").mkdir()
    manifest(root / ".hidden" / "c")
    found = by_name([root])
    assert sorted(found) == ["runs/a", "runs/team/b"]
    assert found["runs/a"].kinds == ["items", "policies"]
    assert found["runs/team/b"].kinds == ["forcebench"]
    assert found["runs/a"].id == run_id(root / "a") and len(found["runs/a"].id) == 12


def test_a_path_may_be_a_run_itself_and_a_run_is_listed_once(tmp_path: Path) -> None:
    run = write_items(tmp_path / "one", [], [item("i0", "j", "yes")])
    runs = discover([run, tmp_path, run])
    assert [r.dir for r in runs] == [str(run)] and runs[0].path == "one"


def test_kinds_follow_the_record_files(tmp_path: Path) -> None:
    pairwise = {"item_id": "p", "pairwise": True}
    judged = [item("p", "j", "a", order="ab")]
    write_items(tmp_path / "pw", [pairwise], judged)
    write_items(tmp_path / "both", [{"item_id": "s"}, pairwise], judged)
    claim = {"answer_id": "a1", "claim_id": "c1", "verifier_id": "v"}
    fact = write_claims(tmp_path / "fact", [claim])
    (fact / "gates.jsonl").write_text('{"answer_id": "a1"}\n')
    (fact / "judgments.jsonl").write_text("")  # every run creates its record files up front
    (fact / "item_judgments.jsonl").write_text("")
    kinds = {r.name: r.kinds for r in discover([tmp_path])}
    assert kinds == {"pw": ["pairwise"], "both": ["items", "pairwise"],
                     "fact": ["factuality", "gate"]}  # fmt: skip


def test_summary_from_the_manifest(tmp_path: Path) -> None:
    run = tmp_path / "r"
    times = {"created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-02T00:00:00Z"}
    manifest(run, name="nightly", status="complete", planned_judgments=10, recorded_judgments=8,
             judges=JUDGES, **times)  # fmt: skip
    (s,) = discover([tmp_path])
    assert (s.name, s.status, s.planned, s.recorded) == ("nightly", "complete", 10, 8)
    assert s.judges == ["openai/m1::j@1", "openai/m2::j@1", "baseline:x"]
    assert s.models == ["openai/m1", "openai/m2"] and s.cost_usd == 0.75
    assert (s.created_at, s.updated_at) == ("2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z")


def test_factuality_counts_and_verifier_costs(tmp_path: Path) -> None:
    section = {"verifiers": [{"id": "v", "client": {"model": "openai/v"},
                              "stats": {"cost_usd": 0.1}}],
               "decomposer": {"stats": {"cost_usd": 0.2}},
               "planned_verifications": 5, "recorded_verifications": 4}  # fmt: skip
    manifest(tmp_path / "f", factuality=section)
    (s,) = discover([tmp_path])
    assert (s.planned, s.recorded, s.judges, s.models) == (5, 4, ["v"], ["openai/v"])
    assert s.cost_usd == pytest.approx(0.3)
    manifest(tmp_path / "f", factuality=section, planned_judgments=0, recorded_judgments=0)
    (s,) = discover([tmp_path])
    assert (s.planned, s.recorded) == (5, 4)  # a factuality-only run plans no judgments
    manifest(tmp_path / "f", factuality=section, planned_judgments=10, recorded_judgments=10)
    (s,) = discover([tmp_path])
    assert (s.planned, s.recorded) == (15, 14)  # judgments and verifications


@pytest.mark.parametrize(
    ("written", "shown"),
    [("complete", "complete"), ("failed", "failed"), ("running", "interrupted"),
     ("interrupted", "interrupted"), (None, "complete")],
)  # fmt: skip
def test_status_without_a_live_writer(tmp_path: Path, written: str | None, shown: str) -> None:
    manifest(tmp_path / "r", **({"status": written} if written else {}))
    (tmp_path / "r" / LOCK_FILE).write_text('{"pid": 1}\n')  # a dead writer's file
    assert discover([tmp_path])[0].status == shown


@pytest.fixture
def holder(tmp_path: Path) -> Iterator[Path]:
    """A run whose writer lock another process holds until the test ends."""
    run = tmp_path / "live"
    manifest(run, status="running")
    code = (
        "import sys; from assay.core.rundir_lock import WriterLock\n"
        f"lock = WriterLock({str(run)!r}, command='assay run', fix='wait')\n"
        "lock.acquire(); print('locked', flush=True); sys.stdin.read()\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "locked"
        yield run
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=30)


def test_a_live_lock_holder_makes_the_run_running(holder: Path) -> None:
    lock_file = holder / LOCK_FILE
    before = lock_file.read_text()
    assert discover([holder])[0].status == "running"
    assert writer_active(holder) and lock_file.read_text() == before
    # the check took nothing: a writer in this process is still refused, the holder kept
    with pytest.raises(Exception, match="another assay process"):
        WriterLock(holder, command="t", fix="wait").acquire()


def test_the_check_creates_no_lock_file(tmp_path: Path) -> None:
    manifest(tmp_path / "r", status="running")
    assert not writer_active(tmp_path / "r")
    assert discover([tmp_path])[0].status == "interrupted"
    assert not (tmp_path / "r" / LOCK_FILE).exists()


def test_a_lock_held_in_this_process_counts_too(tmp_path: Path) -> None:
    manifest(tmp_path / "r", status="running")
    with WriterLock(tmp_path / "r", command="t", fix="wait"):
        assert discover([tmp_path])[0].status == "running"
    assert discover([tmp_path])[0].status == "interrupted"


@pytest.mark.parametrize(
    ("text", "reason"),
    [("{not json", "not valid JSON"), ("[1, 2]", "expected a JSON object"),
     ('{"judges": 5}', "judges")],
)  # fmt: skip
def test_a_broken_manifest_is_listed_unreadable_with_one_line(
    tmp_path: Path, text: str, reason: str
) -> None:
    write_items(tmp_path / "good", [], [item("i0", "j", "yes")])
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "manifest.json").write_text(text)
    found = {r.name: r for r in discover([tmp_path])}
    assert found["good"].status == "complete"
    assert found["bad"].status == "unreadable" and found["bad"].reason is not None
    assert reason in found["bad"].reason and "manifest.json" in found["bad"].reason
    assert "\n" not in found["bad"].reason


def test_an_unreadable_manifest_file_is_unreadable(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        pytest.skip("root reads every file")
    manifest(tmp_path / "r")
    (tmp_path / "r" / "manifest.json").chmod(0)
    assert discover([tmp_path])[0].status == "unreadable"


def test_the_index_lists_new_runs_and_knows_their_directories(tmp_path: Path) -> None:
    with ViewIndex([tmp_path]) as ix:
        assert ix.runs() == []
        run = write_items(tmp_path / "later", [], [item("i0", "j", "yes")])
        (s,) = ix.runs()
        assert ix.run_dir(s.id) == run
        with pytest.raises(KeyError):
            ix.run_dir("000000000000")
        json.dumps(s.model_dump())  # what the server sends
