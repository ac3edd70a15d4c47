"""Run `assay ARGV` in-process, as the console script does, capturing its output.

In-process (not a subprocess) so that what a test registered is visible and so that the
suite stays fast; `main()` is the same entry point the `assay` script calls.
"""

from __future__ import annotations

import contextlib
import io
import sys

from assay.cli import main


def invoke(argv: list[str]) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `assay ARGV`."""
    out, err = io.StringIO(), io.StringIO()
    old_argv, sys.argv = sys.argv, ["assay", *argv]
    code: int | str | None = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main()
    except SystemExit as exc:
        code = exc.code
    finally:
        sys.argv = old_argv
    return (code if isinstance(code, int) else 1), out.getvalue(), err.getvalue()
