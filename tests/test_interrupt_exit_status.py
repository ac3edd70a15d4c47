"""An interrupted `python -m assay` exits 130 with its one line, however the interruption
reached it: during a command, inside a string `exec` (CPython then marks the
KeyboardInterrupt unhandled and, under `-m`, would kill the process with SIGINT at exit:
status -2), or while the CLI's modules are still loading."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

INTERRUPTED = 130

# A module run with `python -m`, as the bug needs: it adds a command to the real CLI whose
# work is interrupted inside a string exec (as a dataclass built at import would be).
_PROBE = """
import sys
from assay.cli import app, main

@app.command("probe")
def probe(how: str) -> None:
    if how == "string-exec":
        exec("raise KeyboardInterrupt", {})
    raise KeyboardInterrupt

sys.argv = ["assay", "probe", sys.argv[1]]
main()
"""

# Loading the CLI is interrupted: importing `assay.cli` raises KeyboardInterrupt from a
# string exec, then `python -m assay compare ...` is what runs.
_LOADING = """
import builtins, runpy, sys
real_import = builtins.__import__

def interrupted_import(name, *args, **kwargs):
    if name == "assay.cli":
        exec("raise KeyboardInterrupt", {})
    return real_import(name, *args, **kwargs)

builtins.__import__ = interrupted_import
sys.argv = ["assay", "compare", "some-run", "--api-key", "sk-secret-123456789"]
runpy.run_module("assay", run_name="__main__", alter_sys=True)
"""


def _run_module(tmp_path: Path, source: str, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "probe_module.py").write_text(source, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    return subprocess.run(
        [sys.executable, "-m", "probe_module", *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )


@pytest.mark.parametrize("how", ["string-exec", "plain"])
def test_an_interrupted_command_exits_130_with_one_line(tmp_path: Path, how: str) -> None:
    done = _run_module(tmp_path, _PROBE, how)
    assert done.returncode == INTERRUPTED, done.stderr
    assert done.stderr.splitlines() == [
        f"interrupted; no output was left half-written; to finish, run it again: assay probe {how}"
    ]


def test_a_ctrl_c_while_the_cli_loads_exits_130_with_one_line(tmp_path: Path) -> None:
    done = _run_module(tmp_path, _LOADING)
    assert done.returncode == INTERRUPTED, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert lines[0].startswith("interrupted; ") and "assay compare some-run" in lines[0]
    assert "sk-secret-123456789" not in lines[0]  # the line is scrubbed like any other
