"""examples/README.md indexes every file in examples/, and every command it lists runs.

Each row of its table is `| [FILE](FILE) | the job it shows | run it |`; "run it" is one
or more `commands` (in order), or `data of `SPEC`` for a file a listed spec reads. A
command that a runnable README or docs block already runs (tests/test_readme.py,
tests/test_docs_blocks.py) is not run twice; a command no page runs is run here, in a
sandbox like the README's (a key-setting command against the loopback fake server)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from _readme_fork import ForkServer
from test_docs_blocks import PAGES
from test_readme import README, _commands, _env, link_repository, readme_blocks, run_bash_line

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
INDEX = EXAMPLES / "README.md"
ROW = re.compile(
    r"^\| \[(?P<file>[^\]]+)\]\((?P<link>[^)]+)\) \| (?P<job>[^|]+) \| (?P<run>.+) \|$"
)
DATA_OF = re.compile(r"^data of `(?P<spec>[^`]+)`$")
COMMAND = re.compile(r"`([^`]+)`")


@dataclass(frozen=True)
class Entry:
    file: str
    job: str
    commands: tuple[str, ...]
    data_of: str | None


def index_entries() -> list[Entry]:
    entries = []
    for line in INDEX.read_text(encoding="utf-8").splitlines():
        m = ROW.match(line)
        if not m:
            continue
        assert m["link"] == m["file"], line
        data = DATA_OF.match(m["run"].strip())
        commands = () if data else tuple(COMMAND.findall(m["run"]))
        entries.append(Entry(m["file"], m["job"].strip(), commands, data and data["spec"]))
    return entries


ENTRIES = index_entries()
RUNNABLE = [e for e in ENTRIES if e.commands]


def _example_files() -> list[str]:
    files = (p for p in EXAMPLES.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return sorted(p.relative_to(EXAMPLES).as_posix() for p in files if p != INDEX)


def _page_commands() -> list[str]:
    """Every command a runnable bash block of the README or a docs page runs (an
    `a && b` line counts as its parts)."""
    commands = []
    for page in [README, *PAGES]:
        for block in readme_blocks(page.read_text(encoding="utf-8")):
            if block.lang == "bash" and not block.not_run:
                for line in _commands(block):
                    commands += [part.strip() for part in line.split("&&")]
    return commands


def _run_by_a_page(command: str, page_commands: list[str]) -> bool:
    """`command` is run as shown (perhaps with more options) by a page's block."""
    return any(c == command or c.startswith(f"{command} ") for c in page_commands)


def test_index_names_every_example_file_once_and_no_missing_one() -> None:
    indexed = [e.file for e in ENTRIES]
    assert len(indexed) == len(set(indexed)), "a file is indexed twice"
    assert sorted(indexed) == _example_files()
    assert all(e.job for e in ENTRIES)


@pytest.mark.parametrize("entry", [e for e in ENTRIES if not e.commands], ids=lambda e: e.file)
def test_a_data_file_is_read_by_the_spec_it_names(entry: Entry) -> None:
    assert entry.data_of is not None, f"{entry.file}: neither a command nor `data of`"
    spec = EXAMPLES / entry.data_of
    assert entry.data_of in {e.file for e in RUNNABLE}, f"{entry.data_of} is not a listed example"
    relative = Path(entry.file).relative_to(Path(entry.data_of).parent).as_posix()
    assert f'"{relative}"' in spec.read_text(encoding="utf-8"), f"{spec} does not read {relative}"


def test_every_command_names_its_example() -> None:
    for entry in RUNNABLE:
        assert f"examples/{entry.file}" in entry.commands[0], entry


@pytest.mark.parametrize("entry", RUNNABLE, ids=lambda e: e.file)
def test_every_example_runs(entry: Entry, tmp_path: Path) -> None:
    page_commands = _page_commands()
    if all(_run_by_a_page(c, page_commands) for c in entry.commands):
        return  # the README or a docs page runs it, in tests/test_readme.py or test_docs_blocks.py
    box = link_repository(tmp_path)
    env = _env(box)
    forks = ForkServer(box, env)
    try:
        for command in entry.commands:
            run_bash_line(command, box, env, None, forks)
    finally:
        forks.close()
