"""Run the README's `assay ...` and `python SCRIPT` commands in forks of a warm interpreter.

Each README command used to be a fresh `bash -c` whose Python spent most of its 2-4 s
importing litellm, pandas, scipy and assay before doing a few milliseconds of work; ~90
such commands were most of the suite's time. Here one server process imports those
modules once (and nothing else: no registry is read, no thread started), then forks once
per command: the command still runs in its own process, with its own environment, working
directory, stdout/stderr and exit status, and leaves nothing behind for the next command.

Only a plain command goes here (optional `NAME=value` prefixes, then `assay ARGS` or
`python FILE.py ARGS`); anything with shell syntax (`&&`, pipes, redirections, `$`) is left
to bash, so the real console script still runs in the README test.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

# Imported once by the server, before any fork: what the README's commands spend their
# start-up on. torch is left out (its thread pools do not survive a fork).
WARM = (
    "litellm",
    "pandas",
    "scipy.stats",
    "sklearn.metrics",
    "assay.cli",
    "assay.compare",
    "assay.policies",
    "assay.report",
    "assay.judges",
    "assay.runs",
)
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
SHELL_WORD = re.compile(r"[$`*?\[\]~{}]")


@dataclass(frozen=True)
class Plain:
    """A command without shell syntax: environment assignments, then a program."""

    env: dict[str, str]
    program: str  # "assay" or a script path
    args: list[str]


def plain_command(cmd: str) -> Plain | None:
    """`cmd` as a Plain command, or None when bash must run it."""
    lexer = shlex.shlex(cmd, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:
        return None
    if any(set(w) <= set("();<>|&") or SHELL_WORD.search(w) for w in words):
        return None
    env: dict[str, str] = {}
    while words and ASSIGNMENT.match(words[0]):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    if words[:1] == ["assay"]:
        return Plain(env, "assay", words[1:])
    if len(words) >= 2 and words[0] in ("python", sys.executable) and words[1].endswith(".py"):
        return Plain(env, words[1], words[2:])
    return None


class ForkServer:
    """The warm interpreter; `run` answers like `subprocess.run(capture_output=True)`."""

    def __init__(self, cwd: Path, env: dict[str, str], warm: tuple[str, ...] = WARM) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _SERVER, *warm],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.cwd = cwd
        ready = self._answer()
        assert ready == "ready", f"README fork server did not start: {ready!r}"

    def _answer(self) -> str:
        assert self.proc.stdout is not None
        return self.proc.stdout.readline().strip()

    def run(
        self, command: Plain, env: dict[str, str], timeout: float
    ) -> subprocess.CompletedProcess[str]:
        """`command` with `env` (plus its own assignments) in a fresh fork."""
        assert self.proc.stdin is not None
        with tempfile.TemporaryDirectory() as tmp:
            out, err = Path(tmp) / "out", Path(tmp) / "err"
            request = {
                "program": command.program,
                "args": command.args,
                "cwd": str(self.cwd),
                "env": {**env, **command.env},
                "out": str(out),
                "err": str(err),
            }
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
            pid = int(self._answer())
            expired = threading.Event()
            killer = threading.Timer(timeout, lambda: (expired.set(), os.kill(pid, signal.SIGKILL)))
            killer.start()
            try:
                code = int(self._answer())
            finally:
                killer.cancel()
            if expired.is_set():
                raise subprocess.TimeoutExpired(command.program, timeout)
            stdout = out.read_text(encoding="utf-8", errors="replace")
            stderr = err.read_text(encoding="utf-8", errors="replace")
        return subprocess.CompletedProcess([command.program, *command.args], code, stdout, stderr)

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# The server: import WARM, then per request line fork a child that becomes the command.
_SERVER = """
import atexit, gc, importlib, io, json, os, shutil, sys, threading, traceback, types
for name in sys.argv[1:]:
    importlib.import_module(name)
print("ready", flush=True)

def become(req, main):
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    for fd, path in ((1, req["out"]), (2, req["err"])):
        os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), fd)
    if req["program"] == "assay":
        from assay.cli import main as assay_main
        sys.argv = ["assay", *req["args"]]
        sys.path[0] = os.path.dirname(shutil.which("assay") or sys.executable)
        assay_main()
    else:  # as `python SCRIPT ARGS` runs it: a fresh __main__ module
        script = os.path.abspath(req["program"])
        sys.argv = [req["program"], *req["args"]]
        sys.path[0] = os.path.dirname(script)
        main.__file__ = script
        sys.modules["__main__"] = main
        with open(script, "rb") as fh:
            code = compile(fh.read(), script, "exec")
        exec(code, main.__dict__)

def exit_code(exc):
    code = exc.code
    if code is None or isinstance(code, int):
        return code or 0
    print(code, file=sys.stderr)
    return 1

def child(req):
    # What the interpreter does at exit (join non-daemon threads, atexit handlers, collect
    # what the command dropped, flush what it left open), then leave without tearing down
    # the thousands of modules inherited from the server: that took ~2 s a command.
    main = types.ModuleType("__main__")
    try:
        become(req, main)
        code = 0
    except SystemExit as exc:
        code = exit_code(exc)
    except BaseException as exc:
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename == "<string>":
            tb = tb.tb_next  # the server's own frames: a real process has none of them
        traceback.print_exception(type(exc), exc, tb)
        code = 1
    threading._shutdown()
    atexit._run_exitfuncs()
    atexit._clear()
    main.__dict__.clear()  # as module teardown does: the script's objects go first
    gc.collect()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            code = code or 120
    for obj in gc.get_objects():  # files still open: teardown would have closed them
        try:
            if isinstance(obj, io.IOBase) and not obj.closed and obj.writable():
                obj.flush()
        except Exception:
            pass
    os._exit(code)

gc.freeze()  # forked children then share the server's objects without copying them
for line in sys.stdin:
    req = json.loads(line)
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        child(req)
    print(pid, flush=True)
    _, status = os.waitpid(pid, 0)
    print(os.waitstatus_to_exitcode(status), flush=True)
"""
