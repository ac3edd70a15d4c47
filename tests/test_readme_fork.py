"""The README test's fork server answers a command as a fresh process would.

tests/_readme_fork.py runs plain README commands in forks of one warm interpreter; these
tests run the same commands both ways (fork and a real subprocess) and compare what a
caller can see: exit status, stdout, stderr, files written (by a thread still running at
the end, by a file never closed, by an atexit handler), and that nothing one command does
to its process (environment, globals) reaches the next.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from _readme_fork import ForkServer, Plain, plain_command

SCRIPT = """
import atexit, os, sys, threading, time
print("cwd", os.path.basename(os.getcwd()), "flag", os.environ.get("FLAG"), "argv", sys.argv[1:])
print("leaked", os.environ.get("LEAK"), getattr(os, "_readme_fork_mark", None))
os.environ["LEAK"] = "yes"
os._readme_fork_mark = "set"
unclosed = open("unclosed.txt", "w")
unclosed.write("written, never closed")
def late():
    time.sleep(0.3)
    with open("thread.txt", "w") as fh:
        fh.write("thread finished")
threading.Thread(target=late).start()
atexit.register(lambda: print("atexit ran", file=sys.stderr))
if sys.argv[1:] == ["boom"]:
    raise RuntimeError("boom")
sys.exit(int(sys.argv[1]) if sys.argv[1:] else 0)
"""


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fork-box")
    (path / "script.py").write_text(SCRIPT, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def forks(box: Path) -> Iterator[ForkServer]:
    server = ForkServer(box, dict(os.environ), warm=("assay.cli",))
    yield server
    server.close()


def _files(box: Path) -> dict[str, str]:
    found = {name: box / name for name in ("unclosed.txt", "thread.txt")}
    texts = {name: path.read_text(encoding="utf-8") for name, path in found.items()}
    for path in found.values():
        path.unlink()
    return texts


def _env() -> dict[str, str]:
    return dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")


def _real(cmd: str, box: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-c", cmd], cwd=box, env=_env(), capture_output=True, text=True)


def _forked(cmd: str, forks: ForkServer) -> subprocess.CompletedProcess[str]:
    plain = plain_command(cmd)
    assert plain is not None
    return forks.run(plain, _env(), timeout=60)


@pytest.mark.parametrize(
    ("cmd", "expected"),
    [
        ("assay report r -f html  # comment", Plain({}, "assay", ["report", "r", "-f", "html"])),
        ("KEY=sk-... assay run x.toml", Plain({"KEY": "sk-..."}, "assay", ["run", "x.toml"])),
        ("python examples/judge.py runs/x", Plain({}, "examples/judge.py", ["runs/x"])),
        ("assay run a.toml && assay report runs/a", None),
        ("assay run a.toml --format json > plan.json", None),
        ("assay policies apply r 2>&1 | grep warning", None),
        ('assay policies apply r || echo "exit code $?"', None),
        ("echo '{}' > row.json", None),
        ("python -m assay.testing --port 8765", None),
        ("sed -n '/^x/p' f", None),
        ("ls *.toml", None),
    ],
)  # fmt: skip
def test_only_a_plain_command_skips_bash(cmd: str, expected: Plain | None) -> None:
    assert plain_command(cmd) == expected


@pytest.mark.parametrize("argv", ["--version", "validate missing.toml", "no-such-command"])
def test_the_cli_answers_as_the_console_script_does(
    argv: str, box: Path, forks: ForkServer
) -> None:
    real, forked = _real(f"assay {argv}", box), _forked(f"assay {argv}", forks)
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        real.returncode,
        real.stdout,
        real.stderr,
    )


@pytest.mark.parametrize("args", ["", "3", "boom"])
def test_a_script_answers_and_writes_as_a_fresh_interpreter_does(
    args: str, box: Path, forks: ForkServer
) -> None:
    cmd = f"FLAG=on python script.py {args}".strip()
    real = _real(cmd, box)
    real_files = _files(box)
    forked = _forked(cmd, forks)
    forked_files = _files(box)  # the fork, too, waits for the thread before it answers
    assert forked.returncode == real.returncode == {"": 0, "3": 3, "boom": 1}[args]
    assert forked.stdout == real.stdout
    assert "leaked None None" in forked.stdout and "flag on" in forked.stdout
    assert (
        forked_files
        == real_files
        == {
            "unclosed.txt": "written, never closed",
            "thread.txt": "thread finished",
        }
    )
    assert forked.stderr == real.stderr and real.stderr.endswith("atexit ran\n")
    assert ("RuntimeError: boom" in forked.stderr) == (args == "boom")


def test_a_command_past_its_timeout_is_killed_and_the_server_goes_on(
    box: Path, forks: ForkServer
) -> None:
    (box / "sleep.py").write_text("import time\ntime.sleep(30)\n", encoding="utf-8")
    with pytest.raises(subprocess.TimeoutExpired):
        forks.run(Plain({}, "sleep.py", []), dict(os.environ), timeout=0.5)
    done = forks.run(Plain({}, "assay", ["--version"]), dict(os.environ), timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("assay ")
