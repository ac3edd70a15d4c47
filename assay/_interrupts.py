"""Ctrl-C and SIGTERM stop CPU work at once.

Python runs a signal handler between two bytecodes of the main thread; an asyncio loop's
handlers (`loop.add_signal_handler`, and `asyncio.run`'s SIGINT handler, which only
cancels the main task) wait until the loop gets control back, which synchronous work
such as a bootstrap never gives it. So around such work both signals, and SIGTERM for
the whole of a CLI command (`start_command`), raise `Interrupted` (a KeyboardInterrupt)
where the main thread is; every long computation is chunked so that it reaches a
bytecode often.
"""

from __future__ import annotations

import shlex
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from types import FrameType
from typing import Any, TypeVar

from assay.redaction import scrub_text

T = TypeVar("T")

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived: handled everywhere a Ctrl-C is."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)


_pending: list[int] = []  # a signal whose Interrupted may have been swallowed
_received: list[int] = []  # the last signal this command raised for (`start_command` clears)


def _raise(signum: int, frame: FrameType | None) -> None:
    """Raise where the main thread is, and remember the signal: a handler that runs inside
    a callback Python ignores exceptions from (an import lock's weakref callback, a
    `__del__`) loses the exception, and `check_cancelled` raises it again later."""
    _pending[:] = [signum]
    _received[:] = [signum]
    raise Interrupted(signum)


def interruption_behind(exc: BaseException) -> Interrupted | None:
    """The interruption a failure really is, or None.

    Code a signal lands in may turn its `Interrupted` into an error of its own: pydantic
    builds a deferred validator in Rust and reports what a Python hook raised as a
    `SchemaError`, so the cause is lost. The exception itself or one in its chain is the
    interruption; failing that, once a signal was raised for in this command, whatever
    ends it is taken as that signal's doing (the alternative is an "internal error" for a
    Ctrl-C, and a run marked failed instead of resumable)."""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        if isinstance(link, Interrupted):
            return link
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    return Interrupted(_received[-1]) if _received else None


_reported = threading.Event()


def mark_reported() -> None:
    """The command printed its own line about the interruption (`assay run`'s resume
    line); the CLI's generic one would repeat it."""
    _reported.set()


def was_reported() -> bool:
    return _reported.is_set()


class _QuietUnraisable:
    """An `Interrupted` Python could not raise is kept for `check_cancelled` (`_raise`), so
    the "Exception ignored in ..." traceback would be noise before the command's own line;
    anything else goes to the hook that was in place."""

    def __init__(self, previous: Callable[[Any], object]) -> None:
        self.previous = previous

    def __call__(self, unraisable: Any) -> None:
        if not isinstance(unraisable.exc_value, Interrupted):
            self.previous(unraisable)


class _Command:
    """Whether a CLI command is running in this process, and the SIGTERM handler it
    replaced (given back when it ends: a command can be invoked in-process, by tests or
    by a program driving the CLI)."""

    active = False
    previous_sigterm: Any = None


def start_command() -> None:
    """For the rest of the command, SIGTERM raises `Interrupted` as Ctrl-C raises
    KeyboardInterrupt; nothing is reported yet. SIGINT keeps Python's handler, which
    `asyncio.run` needs in order to put its own (cancel the main task) in place."""
    _reported.clear()
    _pending.clear()
    _received.clear()
    if not isinstance(sys.unraisablehook, _QuietUnraisable):
        sys.unraisablehook = _QuietUnraisable(sys.unraisablehook)
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _raise)
        if not _Command.active:  # `python -m assay` starts one before the CLI's own
            _Command.previous_sigterm = previous
    _Command.active = True


def end_command() -> None:
    """The command is over: SIGTERM's handler and the unraisable hook are given back, and
    nothing it received is left for later code to be taken for."""
    if not _Command.active:
        return
    _Command.active = False
    _received.clear()
    _pending.clear()
    if isinstance(sys.unraisablehook, _QuietUnraisable):
        sys.unraisablehook = sys.unraisablehook.previous
    previous, _Command.previous_sigterm = _Command.previous_sigterm, None
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)


def interrupted_line(argv: list[str]) -> str:
    """The one line an interrupted command ends with: nothing was left half-written, and
    the same command (secrets scrubbed) finishes the work."""
    again = shlex.join(["assay", *argv])
    line = f"interrupted; no output was left half-written; to finish, run it again: {again}"
    return scrub_text(line)


def forget_unhandled_interrupt() -> None:
    """Let an interrupted command's own exit status (130) stand.

    CPython marks a KeyboardInterrupt that ends a string `exec` (dataclasses build their
    methods that way, at import) as unhandled even when a caller catches it, and under
    `python -m` it then kills the process with SIGINT at exit (status -2) whatever
    `sys.exit` said. Every string `exec` clears that mark when it starts, so an empty one
    does; it runs only once an interruption has been caught, so it hides nothing."""
    exec("pass", {})  # noqa: S102 - a constant, to clear the interpreter's mark


_cancel_events: dict[int, threading.Event] = {}


@contextmanager
def cancellable(event: threading.Event) -> Iterator[None]:
    """Within the block, in a worker thread (which no signal reaches), `check_cancelled`
    raises once `event` is set: the main thread sets it when it is interrupted, so the
    worker stops at its next chunk instead of finishing its work first."""
    ident = threading.get_ident()
    _cancel_events[ident] = event
    try:
        yield
    finally:
        _cancel_events.pop(ident, None)


@contextmanager
def beside(work: Callable[[], T]) -> Iterator[Callable[[], T]]:
    """Run `work` in a thread while the block runs, for a second core: numpy and scipy
    release the GIL in their loops, so two bootstraps run at once. The block gets a
    function that waits for the result (and raises what `work` raised). When the block is
    interrupted or fails, the thread stops at its next chunk (`check_cancelled`)."""
    stop = threading.Event()

    def run() -> T:
        with cancellable(stop):
            return work()

    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="assay-beside")
    future = pool.submit(run)
    try:
        yield future.result
    except BaseException:
        stop.set()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def check_cancelled() -> None:
    """Called between chunks of long work: raise if this thread's work was cancelled, or,
    in the main thread, if a signal arrived whose exception was swallowed (`_raise`)."""
    event = _cancel_events.get(threading.get_ident())
    if event is not None and event.is_set():
        raise Interrupted(signal.SIGINT)
    if _pending and threading.current_thread() is threading.main_thread():
        signum = _pending.pop()
        raise Interrupted(signum)


@contextmanager
def interruptible() -> Iterator[None]:
    """Within the block both signals raise `Interrupted` at the next bytecode, even
    inside an event loop; the previous handlers come back after it. Outside the main
    thread (a library caller's worker) it changes nothing: signals only reach that one."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[int, Any] = {sig: signal.getsignal(sig) for sig in SIGNALS}
    for sig in SIGNALS:
        signal.signal(sig, _raise)
    try:
        yield
    except Interrupted:
        _pending.clear()  # delivered: nothing left for a later check
        raise
    except BaseException as exc:
        behind = interruption_behind(exc)  # a signal another library turned into its error
        if behind is None:
            raise
        _pending.clear()
        raise behind from exc
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler if handler is not None else signal.SIG_DFL)
        if not _Command.active:
            _received.clear()  # a library caller's later failures are its own


__all__ = [
    "SIGNALS",
    "Interrupted",
    "beside",
    "cancellable",
    "check_cancelled",
    "end_command",
    "forget_unhandled_interrupt",
    "interruptible",
    "interrupted_line",
    "interruption_behind",
    "mark_reported",
    "start_command",
    "was_reported",
]
