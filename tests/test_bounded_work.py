"""Bounded work, always interruptible, beyond `assay run`: a sweep range
is bounded when read, the policies bootstrap never holds every resample's weights at
once, and Ctrl-C or SIGTERM ends `compare` and `policies tune` at once with exit 130,
one line saying what to rerun, and no half-written output."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest
from _cli import invoke
from _policies_cli_helpers import assay, write_text
from test_interrupt_cpu import WITHIN_S, heavy_spec, signal_and_time, wait_until

from assay._limits import MAX_GRID_POINTS
from assay.metrics._ratio_bootstrap import RatioCounts, bootstrap_intervals, resample_weights

pytest_plugins = ["_policies_fixtures"]  # run_dir, policy_file


def test_a_sweep_of_too_many_points_is_one_line_and_writes_nothing(
    run_dir: Path, policy_file: Path
) -> None:
    args = ("--param", "tau_entail", "--from", "0.5", "--to", "0.99", "--step", "0.00001")
    code, out, err = assay(
        "policies", "sweep", run_dir, "--policy", policy_file, "--name", "render", *args
    )
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("error: ")
    assert "--step" in err and "49001 points" in err and str(MAX_GRID_POINTS) in err
    assert not (run_dir / "policies" / "render" / "sweep.jsonl").exists()


def test_the_policies_bootstrap_keeps_a_chunk_of_weights_not_all() -> None:
    """2,000 resamples of 20,000 responses: the whole weight matrix is 320 MB; a chunk at
    a time stays a few MB, and the intervals are those of the whole matrix."""
    n, resamples = 20_000, 2_000
    rng = np.random.default_rng(1)
    counts = RatioCounts(numerator=rng.integers(0, 2, n).tolist(), denominator=[1] * n)
    tracemalloc.start()
    try:
        got = bootstrap_intervals({"m": counts}, resamples=resamples, random_state=3)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20, f"peak {peak / 2**20:.0f} MiB"
    small = RatioCounts(numerator=counts.numerator[:500], denominator=[1] * 500)
    weights = resample_weights(500, 300, 3)
    num = weights @ np.asarray(small.numerator)
    whole = np.percentile(num / 500, [2.5, 97.5])
    chunked = bootstrap_intervals({"m": small}, resamples=300, random_state=3)["m"].ci
    assert chunked == (float(whole[0]), float(whole[1]))
    assert got["m"].n_resamples_valid == resamples


def _popen(*args: object, cwd: Path | None = None) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "assay", *map(str, args)]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd)


def _writes(run_dir: Path, pid: int) -> bool:
    """Whether process `pid` holds the run directory's writer lock (the lock file names it)."""
    try:
        info = json.loads((run_dir / ".assay.lock").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(info, dict) and info.get("pid") == pid


def _check_interrupted(proc: subprocess.Popen[str], took: float, stderr: str, sig: str) -> None:
    assert proc.returncode == 130, stderr
    assert took < WITHIN_S, f"{took:.1f}s after {sig}"
    print(f"{sig}: ended {took:.2f}s after the signal")
    assert "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("interrupted; "), stderr
    assert "assay " in lines[0]  # the command to run again


SIGNALS = pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])


@pytest.fixture(scope="module")
def compared_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two baselines on 1,800 pairs, no CI of its own: `compare` draws the bootstrap
    (and takes seconds to read and pair the records)."""
    root = tmp_path_factory.mktemp("compare_run")
    spec, out = heavy_spec(root, bootstrap=0, copies=30), root / "run"
    cmd = [sys.executable, "-m", "assay", "run", str(spec), "--output-dir", str(out)]
    done = subprocess.run([*cmd, "--no-progress", "--no-cache"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return out


@SIGNALS
def test_a_signal_ends_compare_at_once_without_its_output(
    compared_run: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    target = tmp_path / "cmp.json"
    proc = _popen("compare", compared_run, "--n-boot", "100000", "-f", "json", "-o", target)
    try:
        time.sleep(2.5)  # started: the runs are being read and compared
        took, stderr = signal_and_time(proc, sig, lambda: not target.exists())
    finally:
        proc.kill()
    _check_interrupted(proc, took, stderr, sig.name)
    assert not target.exists() and not list(tmp_path.glob("*.tmp*"))


BIG_GRID = (
    "grid = { support = [SUPPORT], conflict = [SUPPORT], condition_limited = ['0.30'] }\n"
    'where = ["condition_limited <= support"]\n'
    'objectives = [{ metric = "coverage", direction = "max" }]\n'
)


@SIGNALS
def test_a_signal_ends_a_tuning_at_once_and_keeps_the_earlier_one(
    run_dir: Path, policy_file: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    """A grid of the largest allowed size (100 x 100, 7,000 candidates where
    condition_limited <= support: tens of seconds); the tune/ files an earlier tuning
    wrote are left as they were."""
    values = ", ".join(f'"{k / 100:.2f}"' for k in range(100))
    grid = write_text(tmp_path / "grid.toml", BIG_GRID.replace("SUPPORT", values))
    code, _, err = assay("policies", "tune", run_dir, "--policy", policy_file, "--name", "cert")
    assert code == 0, err
    folder = run_dir / "policies" / "cert" / "tune"
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    proc = _popen(
        "policies", "tune", run_dir, "--policy", policy_file, "--name", "cert", "--grid", grid
    )
    try:
        # the signal must reach the tuning itself, not Python's start-up (seconds under load)
        assert wait_until(lambda: _writes(run_dir, proc.pid) or proc.poll() is not None, 60.0)
        assert wait_until(lambda: proc.poll() is not None, timeout=2.0) is False
        took, stderr = signal_and_time(proc, sig, lambda: True)
    finally:
        proc.kill()
    _check_interrupted(proc, took, stderr, sig.name)
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_compare_from_python_is_bounded_too(compared_run: Path) -> None:
    from assay.compare import compare_runs
    from assay.errors import AssayError

    with pytest.raises(AssayError, match="--n-boot must be at most 100000, got 100001"):
        compare_runs([compared_run], n_boot=100_001)


def test_apply_workers_stop_at_their_next_chunk_when_the_main_thread_is_interrupted() -> None:
    """Ctrl-C reaches the main thread only; the threads of `policies apply --workers`
    (each deciding a policy that would take 30 s) stop at their next chunk, and the
    policies not started never start."""
    from assay._interrupts import check_cancelled
    from assay.policies.jobs._session import _in_threads

    started: list[int] = []

    def decide(pick: Any) -> tuple[Any, Any]:
        started.append(pick)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            check_cancelled()  # as the bootstrap does between chunks
            time.sleep(0.01)
        return pick, None

    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))  # as Ctrl-C does
    timer.start()
    began = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        _in_threads(decide, cast(Any, [1, 2, 3, 4]), workers=2)
    assert time.monotonic() - began < 3.0
    assert sorted(started) == [1, 2]


@pytest.mark.parametrize("command", ["recompute", "reparse"])
def test_a_run_recorded_with_a_bootstrap_above_the_bound_is_refused(
    compared_run: Path, tmp_path: Path, command: str
) -> None:
    """A run made before the bound (here: its manifest edited) asks for 10^9 resamples:
    one line naming the manifest's field, before any file is rewritten."""
    run = Path(shutil.copytree(compared_run, tmp_path / "run"))
    manifest = json.loads((run / "manifest.json").read_text("utf-8"))
    manifest["spec"]["bootstrap"] = 1_000_000_000
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    files = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}
    code, _, err = invoke([command, str(run)])
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("error: ")
    assert "manifest.json" in err and "spec.bootstrap" in err and "100000" in err
    assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()} == files
