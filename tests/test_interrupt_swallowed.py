"""A signal whose exception Python swallows (its handler ran inside an import lock's
weakref callback or a `__del__`, where exceptions are printed and ignored) is not lost:
the next `check_cancelled` between chunks of long work raises it."""

from __future__ import annotations

import contextlib
import gc
import signal
import subprocess
import sys

import pytest

from assay import _interrupts
from assay._interrupts import (
    Interrupted,
    check_cancelled,
    end_command,
    interruptible,
    start_command,
)

_PREVIOUS = signal.getsignal(signal.SIGTERM)


class _RaisesInDel:
    def __del__(self) -> None:
        _interrupts._raise(signal.SIGTERM, None)  # as if the signal arrived here


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_signal_swallowed_in_a_finaliser_is_raised_at_the_next_check() -> None:
    start_command()
    try:
        obj = _RaisesInDel()
        del obj  # Python prints "Exception ignored in ..." and goes on
        gc.collect()
        with pytest.raises(Interrupted) as caught:
            check_cancelled()
        assert caught.value.signum == signal.SIGTERM
        check_cancelled()  # raised once, then gone
    finally:
        end_command()
    assert signal.getsignal(signal.SIGTERM) is _PREVIOUS  # given back


def test_a_delivered_signal_leaves_nothing_pending() -> None:
    with pytest.raises(Interrupted), interruptible():
        _interrupts._raise(signal.SIGINT, None)
    check_cancelled()  # nothing raised: the interruption was delivered


def test_a_new_command_starts_with_nothing_pending() -> None:
    with contextlib.suppress(Interrupted):  # swallowed
        _interrupts._raise(signal.SIGTERM, None)
    start_command()
    try:
        check_cancelled()
    finally:
        end_command()


def test_a_swallowed_interruption_prints_no_traceback() -> None:
    """In a command (a subprocess: the hook is the process's), the signal arriving in a
    finaliser prints nothing; the command reports the interruption itself."""
    code = (
        "import gc, signal\n"
        "from assay import _interrupts\n"
        "_interrupts.start_command()\n"
        "class X:\n"
        "    def __del__(self):\n"
        "        _interrupts._raise(signal.SIGTERM, None)\n"
        "x = X(); del x; gc.collect()\n"
        "try:\n"
        "    _interrupts.check_cancelled()\n"
        "except _interrupts.Interrupted as exc:\n"
        "    print('interrupted', exc.signum)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout == f"interrupted {int(signal.SIGTERM)}\n"
    assert proc.stderr == ""
