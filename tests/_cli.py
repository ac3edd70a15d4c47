"""Run `assay ARGV` in-process, as the console script does, capturing its output.

In-process (not a subprocess) so that what a test registered is visible and so that the
suite stays fast; `main()` is the same entry point the `assay` script calls.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

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


def invoke_as_process(
    argv: list[str], *, env: Mapping[str, str], cwd: Path
) -> subprocess.CompletedProcess[str]:
    """`invoke` with exactly `env` as the environment and `cwd` as the working directory,
    answered as `subprocess.run(..., capture_output=True, text=True)` would answer: for
    tests written against a subprocess that do not need one (no fresh imports, no signals).
    """
    old_env, old_cwd = dict(os.environ), Path.cwd()
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    try:
        code, out, err = invoke(argv)
    finally:
        os.chdir(old_cwd)
        os.environ.clear()
        os.environ.update(old_env)
    return subprocess.CompletedProcess(["assay", *argv], code, out, err)
