"""How a CLI command ends when it fails: one `error:` line on stderr, never a traceback.

User errors (`AssayError`) say which file, line and field and how to fix them. Operating
system refusals (permission denied, disk full, a directory where a file belongs) name the
path. Anything else is a bug in assay: it still ends in one line, which says so and how
to see the traceback (`ASSAY_DEBUG=1`).
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from assay._interrupts import (
    end_command,
    forget_unhandled_interrupt,
    interrupted_line,
    interruption_behind,
    start_command,
    was_reported,
)
from assay._toml_lines import field_line
from assay.errors import AssayError
from assay.redaction import scrub_text

DEBUG_ENV = "ASSAY_DEBUG"
USER_ERROR = 2  # bad input, like click's usage errors
INTERNAL_ERROR = 3
INTERRUPTED = 130  # 128 + SIGINT, as a shell reports Ctrl-C

_OS_HINTS = {
    errno.EACCES: "check its permissions or choose another path",
    errno.EPERM: "check its permissions or choose another path",
    errno.ENOSPC: "free some disk space or choose a path on another disk",
    errno.EDQUOT: "free some disk space or choose a path on another disk",
    errno.EROFS: "the file system is read-only; choose another path",
    errno.EISDIR: "expected a file, got a directory",
    errno.ENOTDIR: "a part of this path is a file, not a directory",
    errno.ENOENT: "no such file or directory; check the path",
    errno.EEXIST: "choose another path",
}


def one_line(text: str) -> str:
    """Collapse whitespace so a message can never spill onto a second line."""
    return " ".join(text.split())


def os_error_line(exc: OSError) -> str:
    """`PATH: reason; what to do` for an OSError."""
    reason = exc.strerror or str(exc)
    hint = _OS_HINTS.get(exc.errno or -1)
    where = exc.filename if exc.filename is not None else None
    if exc.filename2 is not None:
        where = f"{exc.filename} -> {exc.filename2}"
    text = f"{where}: {reason}" if where is not None else reason
    return f"{text}; {hint}" if hint and hint not in reason.lower() else text


def internal_error_line(exc: BaseException) -> str:
    return (
        f"internal error: {type(exc).__name__}: {exc} (please report; rerun with "
        f"{DEBUG_ENV}=1 for the traceback)"
    )


def _with_line(exc: AssayError) -> AssayError:
    """An error about a field of a TOML file (a spec, a policy file) names its line too:
    `spec.toml:9: field 'judges[0].rpm': ...` (a field not written in the file, a default
    or a flag's value, keeps no line)."""
    file = exc.file
    if exc.line is not None or not exc.field or file is None or not file.endswith(".toml"):
        return exc
    try:
        text = Path(file).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return exc
    exc.line = field_line(text, exc.field)
    return exc


def _fail(message: str, code: int) -> int:
    print(f"error: {scrub_text(one_line(message))}", file=sys.stderr)
    return code


def _is_click_error(exc: BaseException) -> bool:
    """Click's (or typer's vendored copy of click's) usage and parameter errors."""
    return callable(getattr(exc, "format_message", None)) and isinstance(
        getattr(exc, "exit_code", None), int
    )


def _click_error(exc: Any) -> int:
    if type(exc).__name__ == "NoArgsIsHelpError":
        return int(exc.exit_code)  # the help text is already printed
    ctx = getattr(exc, "ctx", None)
    where = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
    return _fail(str(exc.format_message()) + where, int(exc.exit_code))


def _interrupted() -> int:
    print(interrupted_line(sys.argv[1:]), file=sys.stderr)
    return INTERRUPTED


def run_guarded(app: Callable[..., Any]) -> int:
    """Run the typer app and return the process exit status."""
    try:
        code = _run_app(app)
    finally:
        end_command()  # run in-process (tests, a program driving the CLI): leave no trace
    if code == INTERRUPTED:
        forget_unhandled_interrupt()  # or `python -m assay` may still die of SIGINT (-2)
    return code


def _run_app(app: Callable[..., Any]) -> int:
    debug = bool(os.environ.get(DEBUG_ENV))
    start_command()  # SIGTERM ends a command like Ctrl-C: one line, exit 130
    try:
        result = app(standalone_mode=False, prog_name="assay")
    except typer.Abort:
        return _fail("aborted", 1)
    except AssayError as exc:
        return _fail(_with_line(exc).render(), USER_ERROR)
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (`start_command`), outside a command
        return _interrupted()
    except Exception as exc:
        if interruption_behind(exc) is not None:  # a signal a library reported as its error
            return _interrupted()
        if _is_click_error(exc):
            return _click_error(exc)
        if debug:
            raise
        if isinstance(exc, OSError):
            return _fail(os_error_line(exc), USER_ERROR)
        return _fail(internal_error_line(exc), INTERNAL_ERROR)
    if result == INTERRUPTED and not was_reported():
        return _interrupted()  # typer turns a command's KeyboardInterrupt into a bare 130
    return result if isinstance(result, int) else 0
