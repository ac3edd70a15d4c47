"""Ctrl-C and SIGTERM during long CPU work (a run's final metrics, `recompute`) end the
command within seconds, with the resume line, exit 130 and nothing lost; the same
command run again completes. Real subprocesses, real signals."""

from __future__ import annotations

import itertools
import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

import assay
from assay.runs import iter_records, read_json

DEMO = Path(assay.__file__).parent / "data" / "forcebench_demo.jsonl"

BASELINES = ("citation-presence", "token-overlap")
COPIES = 10  # the 60 bundled pairs, ten times over: 600 pairs, 1200 judgments a judge
# The old code ignored both signals for the whole bootstrap (minutes at this size); the
# bound leaves slack for a loaded two-core box, well under that.
WITHIN_S = 6.0


def heavy_spec(tmp: Path, bootstrap: int = 100_000, copies: int = COPIES) -> Path:
    """Two deterministic baselines on 600 pairs: judged in a moment, then a bootstrap of
    the largest allowed size takes seconds."""
    rows = [json.loads(line) for line in DEMO.read_text("utf-8").splitlines()]
    pairs = tmp / "pairs.jsonl"
    with pairs.open("w", encoding="utf-8") as f:
        for k, row in itertools.product(range(copies), rows):
            f.write(json.dumps({**row, "id": f"{row['id']}-{k}"}) + "\n")
    blocks = "".join(f'[[baselines]]\nname = "{b}"\n' for b in BASELINES)
    spec = tmp / "heavy.toml"
    spec.write_text(
        f'name = "heavy"\nbootstrap = {bootstrap}\n[[datasets]]\npath = "pairs.jsonl"\n{blocks}',
        encoding="utf-8",
    )
    return spec


def _cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "assay", *args]


def wait_until(check: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return False


def signal_and_time(
    proc: subprocess.Popen[str], sig: signal.Signals, busy: Callable[[], bool]
) -> tuple[float, str]:
    """Send `sig` while `busy()` holds (the CPU work has not finished); seconds to exit."""
    assert proc.poll() is None and busy(), "the work ended before the signal"
    sent = time.monotonic()
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=600)
    return time.monotonic() - sent, stderr


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_during_the_final_metrics_interrupts_the_run_at_once(
    tmp_path: Path, sig: signal.Signals
) -> None:
    copies = 4 * COPIES  # the final metrics take seconds, however fast they have become
    spec, out = heavy_spec(tmp_path, copies=copies), tmp_path / "run"
    planned = 2 * _lines(DEMO) * copies * len(BASELINES)  # each pair judged twice
    cmd = _cmd("run", str(spec), "--output-dir", str(out), "--no-progress", "--no-cache")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_until(lambda: _lines(out / "judgments.jsonl") >= planned, timeout=120)
        time.sleep(0.5)  # the records are written: the bootstrap is running
        took, stderr = signal_and_time(proc, sig, lambda: not (out / "metrics.json").exists())
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    assert took < WITHIN_S, f"{took:.1f}s after {sig.name}"
    print(f"{sig.name}: ended {took:.2f}s after the signal")
    assert "Traceback" not in stderr
    assert f"interrupted: {planned}/{planned} judgments saved in {out}; resume with:" in stderr
    assert read_json(out / "manifest.json")["status"] == "interrupted"
    assert not (out / "metrics.json").exists()
    assert len(list(iter_records(out / "judgments.jsonl"))) == planned
    if sig is signal.SIGTERM:  # once is enough: the resumed run computes the metrics
        again = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        assert again.returncode == 0, again.stderr
        assert read_json(out / "manifest.json")["status"] == "complete"
        assert len(list(iter_records(out / "judgments.jsonl"))) == planned
        _recompute_is_interrupted_without_loss(out)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_while_judgments_never_wait_interrupts_the_run_at_once(
    tmp_path: Path, sig: signal.Signals
) -> None:
    """Deterministic baselines (like a fully cached re-run) answer without waiting, so the
    event loop, through which both signals cancel a run, never ran until every judgment
    was made (48,000 here: seconds). Workers now give it a turn every 20 ms."""
    copies = 20 * COPIES
    spec, out = heavy_spec(tmp_path, bootstrap=0, copies=copies), tmp_path / "run"
    planned = 2 * _lines(DEMO) * copies * len(BASELINES)
    cmd = _cmd("run", str(spec), "--output-dir", str(out), "--no-progress", "--no-cache")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert wait_until(lambda: _lines(out / "judgments.jsonl") >= 100, timeout=120)
        took, stderr = signal_and_time(proc, sig, lambda: _lines(out / "judgments.jsonl") < planned)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    assert took < 2.0, f"{took:.2f}s after {sig.name}"
    saved = _lines(out / "judgments.jsonl")
    assert saved < planned // 2, saved
    assert f"interrupted: {saved}/{planned} judgments saved in {out}; resume with:" in stderr
    assert read_json(out / "manifest.json")["status"] == "interrupted"


def _recompute_is_interrupted_without_loss(run: Path) -> None:
    """`assay recompute` redraws the same bootstrap: SIGTERM stops it at once with the
    line that says to run it again, and the metrics.json it was replacing is intact."""
    metrics = (run / "metrics.json").read_bytes()
    proc = subprocess.Popen(
        _cmd("recompute", str(run)), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        time.sleep(2.0)  # started, and busy with the bootstrap
        took, stderr = signal_and_time(proc, signal.SIGTERM, lambda: True)
    finally:
        proc.kill()
    assert proc.returncode == 130 and took < WITHIN_S, (took, stderr)
    assert stderr.startswith("interrupted; ") and f"run it again: assay recompute {run}" in stderr
    assert (run / "metrics.json").read_bytes() == metrics
    assert not list(run.glob(".*.tmp"))
