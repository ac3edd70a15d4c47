"""A signal whose `Interrupted` a library reports as an error of its own is still an
interruption.

pydantic builds a deferred validator in Rust and reports what a Python hook raised
there as a `SchemaError`: a SIGTERM landing in that build once ended `assay policies
tune` with "internal error" (exit 3) instead of the interrupted line (exit 130). Here a
real signal is sent to the process and the code it lands in turns it into a
`RuntimeError`, as such a library would.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from assay import _interrupts
from assay._interrupts import Interrupted, interruptible, interruption_behind
from assay.core.rundir import read_json
from assay.runs import RunOptions, run_spec
from assay.runs.runner._runner import Runner
from assay.runs.store._resume import RunInterrupted

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _masked_signal(sig: signal.Signals) -> None:
    """Send `sig` to this process and report its exception as a library error would."""
    try:
        os.kill(os.getpid(), sig)
        time.sleep(5)  # the handler raises at the next bytecode, long before this ends
    except Interrupted:
        raise RuntimeError("Error building validator: Interrupted") from None
    raise AssertionError("the signal never arrived")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
def test_a_block_ends_with_the_interruption_a_library_masked(sig: signal.Signals) -> None:
    with pytest.raises(Interrupted) as caught, interruptible():
        _masked_signal(sig)
    assert caught.value.signum == sig
    assert isinstance(caught.value.__cause__, RuntimeError)


def test_a_library_callers_later_failure_is_its_own() -> None:
    """Outside a command, what a block received is forgotten when it ends."""
    with pytest.raises(Interrupted), interruptible():
        _masked_signal(signal.SIGTERM)
    with pytest.raises(RuntimeError, match="a bug"), interruptible():
        raise RuntimeError("a bug")
    assert interruption_behind(RuntimeError("a bug")) is None


def test_an_error_with_no_signal_is_not_an_interruption() -> None:
    with pytest.raises(ValueError, match="bad"), interruptible():
        raise ValueError("bad")


def test_an_interruption_in_the_chain_is_found() -> None:
    inner = Interrupted(signal.SIGINT)
    try:
        try:
            raise inner
        except Interrupted:
            raise RuntimeError("wrapped") from None  # the cause hidden, the context kept
    except RuntimeError as exc:
        assert interruption_behind(exc) is inner


_COMMAND = """
import os, signal, sys, time
import typer
from assay._interrupts import Interrupted
from assay.cli._errors import run_guarded

app = typer.Typer()

@app.command()
def tune(n: int = 1) -> None:
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
    except Interrupted:
        raise RuntimeError("Error building validator: Interrupted") from None

sys.exit(run_guarded(app))
"""


def test_a_command_ends_interrupted_not_with_an_internal_error(tmp_path: Path) -> None:
    script = tmp_path / "command.py"
    script.write_text(_COMMAND, encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, str(script), "--n", "2"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 130, proc.stderr
    assert "internal error" not in proc.stderr
    assert proc.stderr.startswith("interrupted; no output was left half-written")


def test_a_run_whose_metrics_a_library_failed_on_a_signal_is_resumable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's manifest says `interrupted` (run it again to resume), not `failed`."""
    previous = signal.getsignal(signal.SIGTERM)

    def metrics_hit_by_a_signal(self: Runner) -> None:
        _interrupts.start_command()  # SIGTERM raises where the main thread is, as in `assay`
        _masked_signal(signal.SIGTERM)

    monkeypatch.setattr(Runner, "_write_metrics", metrics_hit_by_a_signal)
    out = tmp_path / "run"
    try:
        with pytest.raises(RunInterrupted) as stopped:
            run_spec(EXAMPLES / "demo.toml", RunOptions(output_dir=out, use_cache=False))
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert stopped.value.saved == stopped.value.planned > 0  # every judgment kept
    manifest = read_json(out / "manifest.json")
    assert manifest["status"] == "interrupted", manifest.get("message")
