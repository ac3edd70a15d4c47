"""Every command and code block in the README is executed here, in document order.

The README is the first thing a user runs, so it must never drift from the code:
- ```bash blocks: each command runs in a sandbox (a temp dir with the repository's files
  linked in) and must exit 0. Install steps (`python3 -m venv ... && pip install ...`) are
  what `.ci/run` itself does on a clean clone; here the part after the install runs, and the
  test command must be the one `.ci/run` runs. `python -m pytest` is this suite (not re-run).
  A command that sets a provider key runs against the loopback OpenAI-compatible server
  (OPENAI_BASE_URL), and the fake-server command runs until it prints its URL.
- ```python blocks run as scripts in the same sandbox.
- A plain `assay ...` or `python FILE.py` command (no shell syntax) runs in a fork of one
  warm interpreter (tests/_readme_fork.py): its own process, environment and exit status,
  without paying for the imports again; every other command runs in bash.
- ```toml blocks must parse and validate as (part of) a run spec.
- ```text blocks are printed output: the whole stdout of the command run just before the
  block, line for line (runs of spaces and blank lines aside). A block that shows part of
  the output says so with `<!-- excerpt -->` on the line before its fence; then each of
  its lines must appear in the output, in order. So "2 lines shown, 5 printed" is either
  declared or a failure.
- A ```prompt block must load as a prompt file.

The linters' command (`ruff check ... && mypy ...`, ~70 s of one core) reads nothing the
README writes: it starts in the background when the session starts (conftest's
`readme_linters`, on CI's second core, beside the tests before this one) and is checked in
its place.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from subprocess import Popen
from typing import Any

import pytest
from _readme_fork import ForkServer, plain_command

from assay.testing import Behavior, FakeOpenAIServer, reply

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
LINKED = ("assay", "tests", "examples", "benchmarks", "docs", "pyproject.toml", "README.md")
INSTALL = re.compile(
    r"^python3 -m venv \.venv && \. \.venv/bin/activate && pip install (?P<args>[^&]+?) && "
    r"(?P<rest>.+)$"
)
FENCE = re.compile(r"^```(?P<lang>[\w-]*)\s*$")
# on the line before a fence: the block shows part of the output (text), or is not run
# (docs pages only; the reason is required: e.g. it needs the network or a local model)
EXCERPT = re.compile(r"^<!--\s*excerpt\b.*-->\s*$")
NOT_RUN = re.compile(r"^<!--\s*not run:\s*\S.*-->\s*$")


@dataclass
class Block:
    lang: str
    text: str
    line: int
    excerpt: bool = False
    not_run: bool = False


def readme_blocks(text: str) -> list[Block]:
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        before = lines[i - 1].strip() if i else ""
        start, body = i + 1, []
        i += 1
        while i < len(lines) and lines[i].rstrip() != "```":
            body.append(lines[i])
            i += 1
        text_ = "\n".join(body) + "\n"
        marks = dict(excerpt=bool(EXCERPT.match(before)), not_run=bool(NOT_RUN.match(before)))
        blocks.append(Block(m.group("lang"), text_, start, **marks))
        i += 1
    return blocks


def _commands(block: Block) -> list[str]:
    out = []
    for raw in block.text.splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


def link_repository(box: Path) -> Path:
    """`box` as a sandbox: the repository's files linked in."""
    for name in LINKED:
        (box / name).symlink_to(ROOT / name)
    return box


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return link_repository(tmp_path_factory.mktemp("readme"))


def start_linters(box: Path) -> dict[str, Popen[str]]:
    """The README's independent commands, started now in sandbox `box`."""
    blocks = readme_blocks(README.read_text(encoding="utf-8"))
    return start_independent(blocks, link_repository(box), _env(box))


def _env(box: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["ASSAY_CACHE_DIR"] = str(box / "cache")
    env["COLUMNS"] = "100"
    return env


def _run(
    cmd: str, box: Path, env: dict[str, str], forks: ForkServer | None = None, timeout: float = 600
) -> str:
    plain = plain_command(cmd) if forks is not None else None
    if forks is not None and plain is not None:
        done = forks.run(plain, env, timeout)
    else:
        done = subprocess.run(
            ["bash", "-e", "-c", cmd],
            cwd=box,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"README command failed: {cmd}\n{output}"
    assert "Traceback" not in output, f"{cmd}\n{output}"
    return done.stdout


def _independent(cmd: str) -> bool:
    """A command that reads only the repository (never what an earlier block wrote)."""
    return cmd.startswith(("ruff check ", "mypy "))


def start_independent(blocks: list[Block], box: Path, env: dict[str, str]) -> dict[str, Popen[str]]:
    """Start the independent commands now; `run_bash_line` waits for each in its place."""
    started: dict[str, Popen[str]] = {}
    for block in blocks:
        for cmd in _commands(block) if block.lang == "bash" else []:
            if _independent(cmd) and cmd not in started:
                started[cmd] = subprocess.Popen(
                    ["bash", "-e", "-c", cmd], cwd=box, env=env, text=True,
                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                )  # fmt: skip
    return started


def _finish(cmd: str, proc: Popen[str], timeout: float = 600) -> str:
    """What `_run` checks, for a command started in the background."""
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    finally:
        proc.kill()
    output = stdout + stderr
    assert proc.returncode == 0, f"README command failed: {cmd}\n{output}"
    assert "Traceback" not in output, f"{cmd}\n{output}"
    return stdout


def _run_server_command(cmd: str, box: Path, env: dict[str, str]) -> str:
    """A long-running command (the fake server, `assay view`): it must start and print
    its URL on its first line; then it is stopped."""
    proc = subprocess.Popen(
        ["bash", "-c", f"exec {cmd}"],
        cwd=box,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert "http://127.0.0.1:" in first, first
        return first
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _ci_command() -> str:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    m = re.search(r"pip install -q (?P<args>[^&]+?) && (?P<rest>python -m pytest[^\n]*)", ci)
    assert m, ".ci/run no longer runs `pip install ... && python -m pytest`"
    return f"{m.group('args').strip()} && {m.group('rest').strip()}"


def run_bash_line(
    cmd: str,
    box: Path,
    env: dict[str, str],
    started: dict[str, Popen[str]] | None = None,
    forks: ForkServer | None = None,
) -> str:
    if started and cmd in started:
        return _finish(cmd, started.pop(cmd))
    install = INSTALL.match(cmd)
    if install:
        args, rest = install.group("args").strip(), install.group("rest").strip()
        if rest.startswith("python -m pytest"):
            # The test command: exactly what CI runs (CI adds only pip's -q).
            assert f"{args} && {rest}" == _ci_command()
            return ""
        cmd = rest  # the package is installed already (this suite runs inside it)
    if cmd.startswith("pip install"):
        return ""  # installs are exercised by .ci/run on a clean clone
    if cmd.startswith("python -m pytest"):
        return ""  # this suite itself
    if cmd.startswith(("python -m assay.testing", "assay view")):
        return _run_server_command(cmd, box, env)
    if "_API_KEY=" in cmd.split(" assay ")[0]:
        with FakeOpenAIServer(responder=_answers_like_a_model) as srv:
            hosted = dict(env, OPENAI_BASE_URL=srv.base_url)
            quiet = " --no-progress" if " assay run " in f" {cmd} " else ""
            out = _run(cmd + quiet, box, hosted, forks)
            assert srv.stats.total > 0, "the hosted example sent no request"
            return out
    return _run(cmd, box, env, forks)


def _answers_like_a_model(body: dict[str, Any]) -> Behavior | None:
    """A decomposition request gets its target sentence back as the one claim (the
    server's default verdict is no claim list: every decomposition would fail, and the
    hosted example would end `failed` by the failure budget); the rest, the default."""
    text = str(body["messages"][-1].get("content") or "")
    head, marker, sentence = text.rpartition("Target sentence:")
    if not marker or not sentence.strip():
        return None
    return reply(json.dumps({"claims": [sentence.strip().splitlines()[0]]}))


def check_toml(block: Block, box: Path) -> None:
    """A spec, or a fragment of one (then checked with the demo dataset added)."""
    from assay.runs import load_spec

    data = tomllib.loads(block.text)
    text = block.text
    if "datasets" not in data and "factuality" not in data:
        text += '\n[[datasets]]\npath = "builtin:forcebench-demo"\n'
    elif "datasets" not in data.get("factuality", {"datasets": 0}):  # a stage fragment
        answers = '[{ path = "builtin:factuality-demo" }]'
        if re.search(r"(?m)^\[factuality\]", text):
            text = re.sub(r"(?m)^\[factuality\]$", f"[factuality]\ndatasets = {answers}", text)
        else:
            text = f"factuality.datasets = {answers}\n{text}"
    spec = box / f"readme_{block.line}.toml"
    spec.write_text(text, encoding="utf-8")
    load_spec(spec)


def check_prompt(block: Block, box: Path) -> None:
    from assay.prompts import PromptRegistry

    d = box / "readme-prompts"
    d.mkdir(exist_ok=True)
    meta = tomllib.loads(block.text.split("+++")[1])
    (d / f"{meta['id']}.prompt").write_text(block.text, encoding="utf-8")
    prompt = PromptRegistry([d], include_env=False).get(f"{meta['id']}@{meta['version']}")
    assert prompt.meta.task == meta["task"]


def _lines(text: str) -> list[str]:
    """Non-blank lines, each with its runs of whitespace read as one space."""
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


_SHIFT: dict[str, int] = {}  # lines a regenerated block added to a page, per page


def _regenerate(where: str, block: Block, output: str) -> None:
    """`ASSAY_REGEN_DOCS=1`: write the command's output into the page's text block (a
    maintainer's tool; the diff is then reviewed like any other change)."""
    page = Path(__file__).resolve().parents[1] / where
    lines = page.read_text(encoding="utf-8").splitlines(keepends=True)
    start = block.line + _SHIFT.get(where, 0)  # the first line of the block's body
    old = block.text.count("\n")
    new = [line.rstrip() + "\n" for line in output.rstrip("\n").splitlines()]
    lines[start : start + old] = new
    page.write_text("".join(lines), encoding="utf-8")
    _SHIFT[where] = _SHIFT.get(where, 0) + len(new) - old


def check_output(block: Block, last_output: str, where: str = "README.md") -> None:
    """The whole output, or (`<!-- excerpt -->`) some of its lines in their order."""
    shown, produced = _lines(block.text), _lines(last_output)
    actual = f"\n--- actual output ---\n{last_output}"
    if not block.excerpt and shown != produced and os.environ.get("ASSAY_REGEN_DOCS"):
        _regenerate(where, block, last_output)
        return
    if not block.excerpt:
        assert shown == produced, (
            f"{where}:{block.line}: the block is not the command's whole output: regenerate "
            f"it, or mark it <!-- excerpt --> if it shows part on purpose{actual}"
        )
        return
    rest = iter(produced)
    for line in shown:
        assert any(line == p for p in rest), (
            f"{where}:{block.line}: this output line is not what the command prints now, "
            f"or not in this order (regenerate it):\n{line}{actual}"
        )


def test_readme_blocks_are_all_of_known_kinds() -> None:
    blocks = readme_blocks(README.read_text(encoding="utf-8"))
    assert {b.lang for b in blocks} <= {"bash", "python", "toml", "text", "prompt"}
    assert [b.line for b in blocks if b.not_run] == []  # every README block runs
    assert [b.line for b in blocks if b.excerpt and b.lang != "text"] == []


def test_every_readme_block_runs(sandbox: Path, readme_linters: dict[str, Popen[str]]) -> None:
    env = _env(sandbox)
    blocks = readme_blocks(README.read_text(encoding="utf-8"))
    started = readme_linters or start_independent(blocks, sandbox, env)
    forks = ForkServer(sandbox, env)
    try:
        _run_blocks(blocks, sandbox, env, started, forks)
        assert not started, f"started but never checked: {sorted(started)}"
    finally:
        forks.close()
        for proc in started.values():
            proc.kill()
            proc.communicate()


def _run_blocks(
    blocks: list[Block],
    sandbox: Path,
    env: dict[str, str],
    started: dict[str, Popen[str]],
    forks: ForkServer | None = None,
    page: str = "README.md",
) -> None:
    last_output = ""
    for block in blocks:
        where = f"{page}:{block.line}"
        if block.not_run:
            continue  # a docs page's sketch (its marker says why); README has none
        if block.lang == "bash":
            for cmd in _commands(block):
                last_output = run_bash_line(cmd, sandbox, env, started, forks) or last_output
        elif block.lang == "python":
            script = sandbox / f"readme_{block.line}.py"
            script.write_text(block.text, encoding="utf-8")
            last_output = _run(shlex.join([sys.executable, str(script)]), sandbox, env, forks)
        elif block.lang == "toml":
            check_toml(block, sandbox)
        elif block.lang == "prompt":
            check_prompt(block, sandbox)
        elif block.lang == "text":
            check_output(block, last_output, page)
        else:  # pragma: no cover - guarded by the test above
            pytest.fail(f"{where}: unknown block kind {block.lang!r}")
