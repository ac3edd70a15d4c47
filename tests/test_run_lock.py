"""One writer per run directory.

`run`, `recompute`, `reparse`, `policies apply` and `import-medscore` hold an OS lock on
RUN_DIR/.assay.lock while they write; a second writer exits 2 at once naming the
directory and the holder's pid. The lock dies with its process, so a writer killed with
SIGKILL never blocks the next run. Readers never take it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke
from _policies_cli_helpers import CERT_POLICY
from test_interrupt import GOOD, demo_spec

from assay.core.records import JudgmentRecord
from assay.core.rundir import iter_jsonl, read_json
from assay.testing import FakeOpenAIServer, reply

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
DEMO_JUDGMENTS = 120
LOCK = ".assay.lock"
HOLD = """
import sys, time
from assay.core.rundir_lock import WriterLock
WriterLock(sys.argv[1], command="assay run", fix="wait").acquire()
print("locked", flush=True)
time.sleep(120)
"""


def _assay_run(spec: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "assay", "run", str(spec), "--output-dir", str(out)] + [
        "--no-cache",
        "--no-progress",
    ]


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def _wait_for_lines(path: Path, n: int, proc: subprocess.Popen[Any]) -> None:
    deadline = time.monotonic() + 180  # a loaded machine starts python slowly
    while _lines(path) < n and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    if _lines(path) < n:
        ended = proc.poll()
        err = proc.communicate(timeout=30)[1] if ended is not None else b"(still running)"
        raise AssertionError(f"the first run never got going: exit {ended}, {err!r}")


def _keys_once(path: Path) -> set[Any]:
    keys: set[Any] = set()
    for record in iter_jsonl(path, JudgmentRecord):
        assert record.key not in keys, f"recorded twice: {record.key}"
        keys.add(record.key)
    return keys


def _refused(code: int, err: str, run_dir: Path, pid: int) -> None:
    """Exit 2, one `error:` line naming the directory and the holder's pid."""
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and len(lines) == 1, err
    assert lines[0].startswith(f"error: {run_dir}: another assay process (pid {pid}"), err
    assert "is writing this run directory" in lines[0], err


def _stop(proc: subprocess.Popen[Any]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)


def test_a_second_run_is_refused_and_every_record_is_written_once(tmp_path: Path) -> None:
    with FakeOpenAIServer(default=reply(GOOD), latency_s=0.5) as server:  # slow till refused
        _two_runs_on_one_directory(tmp_path, server)


def _two_runs_on_one_directory(tmp_path: Path, server: FakeOpenAIServer) -> None:
    spec = demo_spec(tmp_path, server.base_url, name="two", max_concurrency=1)
    out = tmp_path / "run"
    first = subprocess.Popen(_assay_run(spec, out), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _wait_for_lines(out / "judgments.jsonl", 4, first)
        second = subprocess.run(_assay_run(spec, out), capture_output=True, text=True, timeout=60)
        _refused(second.returncode, second.stderr, out, first.pid)
        assert first.poll() is None, "the first run ended before the second was refused"
        assert "--output-dir" in second.stderr  # what to do instead
        code, _, err = invoke(["recompute", str(out)])  # a writer, refused the same way
        _refused(code, err, out, first.pid)
        assert first.poll() is None
        server.latency_s = 0.0  # the first run may finish now
        _, stderr = first.communicate(timeout=120)
    finally:
        _stop(first)
    assert first.returncode == 0, stderr
    assert len(_keys_once(out / "judgments.jsonl")) == _lines(out / "judgments.jsonl")
    assert _lines(out / "judgments.jsonl") == DEMO_JUDGMENTS
    assert server.stats.total == DEMO_JUDGMENTS  # every request paid once
    manifest = read_json(out / "manifest.json")
    assert manifest["status"] == "complete" and len(manifest["sessions"]) == 1
    assert not (out / LOCK).exists()  # released: the directory is as before


def test_kill_9_of_the_holder_then_a_plain_rerun_resumes(tmp_path: Path) -> None:
    with FakeOpenAIServer(default=reply(GOOD), latency_s=0.05) as server:
        spec = demo_spec(tmp_path, server.base_url, name="kill", max_concurrency=4)
        _kill_then_resume(tmp_path, spec)


def _kill_then_resume(tmp_path: Path, spec: Path) -> None:
    out = tmp_path / "run"
    first = subprocess.Popen(_assay_run(spec, out), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _wait_for_lines(out / "judgments.jsonl", 20, first)
        assert (out / LOCK).read_text(encoding="utf-8").startswith(f'{{"pid": {first.pid}')
    finally:
        _stop(first)
    assert first.returncode == -signal.SIGKILL
    assert (out / LOCK).exists()  # left behind by the dead holder: must not block
    rerun = subprocess.run(_assay_run(spec, out), capture_output=True, text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    assert len(_keys_once(out / "judgments.jsonl")) == DEMO_JUDGMENTS
    assert _lines(out / "judgments.jsonl") == DEMO_JUDGMENTS
    assert read_json(out / "manifest.json")["status"] == "complete"
    assert not (out / LOCK).exists()


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A complete run of examples/demo.toml (judgments and factuality records)."""
    root = tmp_path_factory.mktemp("lock")
    spec = root / "demo.toml"
    text = (EXAMPLES / "demo.toml").read_text(encoding="utf-8")
    spec.write_text(text.replace("bootstrap = 1000", "bootstrap = 100"), encoding="utf-8")
    code, _, err = invoke(["run", str(spec), "--output-dir", str(root / "run")])
    assert code == 0, err
    cert = root / "cert.toml"
    cert.write_text(CERT_POLICY, encoding="utf-8")
    code, _, err = invoke(["policies", "apply", str(root / "run"), "--policy", str(cert)])
    assert code == 0, err
    return root / "run"


@pytest.fixture
def held(demo_run: Path) -> Iterator[tuple[Path, int]]:
    """`demo_run` with its writer lock held by another process: (run dir, its pid)."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(demo_run)], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"locked\n"
        yield demo_run, proc.pid
    finally:
        _stop(proc)


def _snapshot(run_dir: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(run_dir)): p.read_bytes()
        for p in sorted(run_dir.rglob("*"))
        if p.is_file() and p.name != LOCK
    }


WRITERS = {
    "run": lambda d: ["run", str(d.parent / "demo.toml"), "--output-dir", str(d)],
    "recompute": lambda d: ["recompute", str(d)],
    "reparse": lambda d: ["reparse", str(d)],
    "policies-apply": lambda d: [
        *("policies", "apply", str(d), "--policy", str(EXAMPLES / "policies.toml")),
    ],
    "policies-tune": lambda d: [
        *("policies", "tune", str(d), "--policy", str(d.parent / "cert.toml"), "--name", "cert"),
    ],
    "policies-sweep": lambda d: [
        *("policies", "sweep", str(d), "--policy", str(d.parent / "cert.toml"), "--name", "cert"),
    ],
    "policies-compare": lambda d: ["policies", "compare", str(d), "--a", "cert", "--b", "cert"],
}


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_every_writer_is_refused_while_another_holds_the_lock(
    writer: str, held: tuple[Path, int]
) -> None:
    run_dir, pid = held
    before = _snapshot(run_dir)
    code, _, err = invoke(WRITERS[writer](run_dir))
    _refused(code, err, run_dir, pid)
    assert _snapshot(run_dir) == before  # nothing written, nothing lost


def test_the_python_api_is_refused_too(held: tuple[Path, int]) -> None:
    import assay
    from assay.errors import AssayError

    run_dir, pid = held
    with pytest.raises(AssayError, match=f"another assay process \\(pid {pid}"):
        assay.run(run_dir.parent / "demo.toml", output_dir=run_dir)
    with pytest.raises(AssayError, match=f"pid {pid}"):
        assay.apply_policies(run_dir, EXAMPLES / "policies.toml")


@pytest.mark.parametrize("fmt", ["json", "markdown", "html"])
def test_readers_work_while_the_lock_is_held(fmt: str, held: tuple[Path, int]) -> None:
    run_dir, _ = held
    code, out, err = invoke(["report", str(run_dir), "-f", fmt])
    assert code == 0, err
    assert out.strip()
    code, out, err = invoke(["compare", str(run_dir)])
    assert code == 0, err
    spec = str(run_dir.parent / "demo.toml")
    code, out, err = invoke(["run", spec, "--dry-run", "--output-dir", str(run_dir)])
    assert code == 0, err  # a dry run reads what is recorded, and takes no lock


def test_a_lock_file_left_by_a_dead_process_does_not_block(tmp_path: Path) -> None:
    from assay.core.rundir_lock import WriterLock

    (tmp_path / LOCK).write_text('{"pid": 999999, "command": "assay run"}\n', encoding="utf-8")
    with WriterLock(tmp_path, command="assay recompute", fix="wait") as lock:
        assert lock.held
        assert str(os.getpid()) in (tmp_path / LOCK).read_text(encoding="utf-8")
    assert not (tmp_path / LOCK).exists()


def test_a_second_writer_in_the_same_process_is_refused(tmp_path: Path) -> None:
    from assay.core.rundir_lock import RunDirBusy, WriterLock

    second = WriterLock(tmp_path, command="assay run", fix="wait for it")
    with (
        WriterLock(tmp_path, command="assay run", fix="wait for it"),
        pytest.raises(RunDirBusy, match=f"pid {os.getpid()}, this process"),
    ):
        second.acquire()
    with second:  # free again once the first lets go
        assert second.held


def test_dry_run_takes_no_lock_and_creates_nothing(tmp_path: Path) -> None:
    out = tmp_path / "new"
    spec = EXAMPLES / "demo.toml"
    code, _, err = invoke(["run", str(spec), "--dry-run", "--output-dir", str(out)])
    assert code == 0, err
    assert not out.exists()


def test_a_report_file_is_replaced_whole_or_not_at_all(tmp_path: Path) -> None:
    """`report -f html` writes into a run directory without the lock: a reader sees the
    old report or the new one; a write that fails keeps the old one, no temp file."""
    from assay.report._output import write_report_file

    target = tmp_path / "report.html"
    write_report_file(target, "<p>old</p>\n")
    with pytest.raises(UnicodeEncodeError):
        write_report_file(target, "<p>new " + "x" * 100_000 + "\ud800</p>")  # fails mid-way
    assert target.read_text(encoding="utf-8") == "<p>old</p>\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]
    write_report_file(target, "<p>new</p>\n")
    assert target.read_text(encoding="utf-8") == "<p>new</p>\n"
    assert target.stat().st_mode & 0o777 == 0o644


def test_applying_a_policy_again_never_deletes_the_applied_folder_first(
    demo_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader of policies/<name>/ sees the old folder or the new one: the old one is
    renamed aside, then removed once the new one is in place."""
    import shutil

    import assay

    run = tmp_path / "run"
    shutil.copytree(demo_run, run)
    policy = tmp_path / "p.toml"
    policy.write_text(CERT_POLICY, encoding="utf-8")
    assay.apply_policies(run, policy)
    removed: list[Path] = []
    real = shutil.rmtree

    def rmtree(path: Path, *args: Any, **kwargs: Any) -> None:
        removed.append(Path(path))
        assert (run / "policies" / "cert" / "manifest.json").is_file()  # always there
        real(path, *args, **kwargs)

    monkeypatch.setattr(shutil, "rmtree", rmtree)  # what _apply_write calls
    assay.apply_policies(run, policy)
    assert removed and run / "policies" / "cert" not in removed
    assert sorted(p.name for p in (run / "policies").iterdir()) == ["cert"]


def test_import_medscore_into_a_directory_another_writer_holds(tmp_path: Path) -> None:
    from test_importers import _medscore_run

    source = _medscore_run(tmp_path / "ms")
    out = tmp_path / "imported"
    out.mkdir()
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(out)], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"locked\n"
        code, _, err = invoke(["import-medscore", str(source), "--output-dir", str(out)])
        _refused(code, err, out, proc.pid)
        assert sorted(p.name for p in out.iterdir()) == [LOCK]  # nothing written
    finally:
        _stop(proc)
    code, _, err = invoke(["import-medscore", str(source), "--output-dir", str(out)])
    assert code == 0, err  # the holder is gone (SIGKILL): its lock went with it
    assert (out / "manifest.json").is_file() and not (out / LOCK).exists()


def test_a_run_that_finished_while_this_one_made_its_checks_is_resumed_not_redone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new directory is locked only after the checks; whatever another writer put
    there meanwhile is read again under the lock, so nothing is recorded twice."""
    from concurrent.futures import ThreadPoolExecutor

    from assay.runs import Runner, RunOptions, load_spec

    spec = tmp_path / "demo.toml"
    text = (EXAMPLES / "demo.toml").read_text(encoding="utf-8")
    spec.write_text(text.replace("bootstrap = 1000", "bootstrap = 0"), encoding="utf-8")
    out = tmp_path / "run"
    options = RunOptions(output_dir=str(out), progress=False)
    other = Runner(load_spec(spec), options)
    real = Runner._preflight
    calls: list[int] = []

    def preflight(self: Runner, *args: Any) -> None:
        calls.append(1)
        if len(calls) == 1:  # another writer runs the whole spec between checks and mkdir
            with ThreadPoolExecutor(1) as pool:  # its own event loop
                assert pool.submit(other.run).result().status == "complete"
        real(self, *args)

    monkeypatch.setattr(Runner, "_preflight", preflight)
    outcome = Runner(load_spec(spec), options).run()
    assert outcome.status == "complete" and outcome.written_this_session == 0
    assert len(calls) == 3  # this run, the other, this run again after the other left
    judgments = out / "judgments.jsonl"
    assert len(_keys_once(judgments)) == _lines(judgments) == outcome.planned
    assert len(read_json(out / "manifest.json")["sessions"]) == 2


def test_a_refused_run_loads_no_dataset_and_no_model_first(
    held: tuple[Path, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refusal comes before `Runner(...)` reads the datasets and loads local models
    (seconds to minutes for a large file or a model): `exits 2 at once`."""
    import assay
    from assay.errors import AssayError
    from assay.runs.runner import _runner

    def assemble(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("datasets and models loaded before the lock was checked")

    monkeypatch.setattr(_runner, "assemble", assemble)
    run_dir, pid = held
    code, _, err = invoke(WRITERS["run"](run_dir))
    _refused(code, err, run_dir, pid)
    with pytest.raises(AssayError, match=f"another assay process \\(pid {pid}"):
        assay.run(run_dir.parent / "demo.toml", output_dir=run_dir)
