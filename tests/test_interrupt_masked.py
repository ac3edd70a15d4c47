"""A signal whose `Interrupted` a library reports as an error of its own is still an
interruption.

pydantic builds a deferred validator in Rust and reports what a Python hook raised
there as a `SchemaError`: a SIGTERM landing in that build once ended `assay policies
tune` with "internal error" (exit 3) instead of the interrupted line (exit 130). Here a
real signal is sent to the process and the code it lands in turns it into a
`RuntimeError`, as such a library would.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from assay import _interrupts
from assay._interrupts import (
    Interrupted,
    end_command,
    interruptible,
    interruption_behind,
    start_command,
)
from assay.core.rundir import read_json
from assay.runs import RunOptions, run_spec
from assay.runs.rebuild import _metrics
from assay.runs.store._resume import RunInterrupted

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def _masked_signal(sig: signal.Signals) -> None:
    """Raise `sig` in this thread and report its exception as a library error would.

    `signal.raise_signal` delivers it to the calling thread at once (`os.kill` may hand it
    to another thread of a test worker, and the handler would then run only when the
    main thread next checks, possibly after the block that installed it has ended)."""
    assert signal.getsignal(sig) is _interrupts._raise
    try:
        signal.raise_signal(sig)
        deadline = time.monotonic() + 5  # the handler raises at the next bytecode
        while time.monotonic() < deadline:
            pass
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
import signal, sys, time
import typer
from assay._interrupts import Interrupted
from assay.cli._errors import run_guarded

app = typer.Typer()

@app.command()
def tune(n: int = 1) -> None:
    try:
        signal.raise_signal(signal.SIGTERM)
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
    """The run's final metrics are computed where both signals raise (`interruptible`):
    its manifest says `interrupted` (run it again to resume), not `failed`."""

    def metrics_hit_by_a_signal(*args: object, **kwargs: object) -> None:
        _masked_signal(signal.SIGTERM)

    monkeypatch.setattr(_metrics, "compute_metrics", metrics_hit_by_a_signal)
    out = tmp_path / "run"
    start_command()  # SIGTERM raises where the main thread is, as in `assay`
    try:
        with pytest.raises(RunInterrupted) as stopped:
            run_spec(EXAMPLES / "demo.toml", RunOptions(output_dir=out, use_cache=False))
    finally:
        end_command()
    assert stopped.value.saved == stopped.value.planned > 0  # every judgment kept
    manifest = read_json(out / "manifest.json")
    assert manifest["status"] == "interrupted", manifest.get("message")


def test_a_command_run_in_process_leaves_no_trace(tmp_path: Path) -> None:
    """After an in-process command that a signal ended, SIGTERM's handler is the one
    before it and a later failure is not taken for that signal."""
    import typer

    from assay.cli._errors import INTERRUPTED, run_guarded

    before = signal.getsignal(signal.SIGTERM)
    app = typer.Typer()

    @app.command()
    def tune(n: int = 1) -> None:
        _masked_signal(signal.SIGTERM)

    @app.command()
    def other() -> None:
        pass

    import sys

    argv = sys.argv
    sys.argv = ["assay", "tune"]
    try:
        assert run_guarded(app) == INTERRUPTED
    finally:
        sys.argv = argv
    assert signal.getsignal(signal.SIGTERM) is before
    assert interruption_behind(RuntimeError("a later bug")) is None
