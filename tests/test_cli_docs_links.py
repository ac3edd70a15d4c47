"""`assay --help` and every subcommand's help end with the docs page of that command.

The pages move while the docs are reorganised; this fails when a command (a new one, or
one renamed) has no entry in assay/cli/_docs.COMMAND_PAGES, when an entry names a command
that no longer exists, or when a page it names is not in docs/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from assay.cli import app
from assay.cli._docs import COMMAND_PAGES, DOCS_DIR

ROOT = Path(__file__).resolve().parents[1]


def _command_paths(command: Any, path: str = "") -> list[str]:
    """Every command path of the built CLI ("" is `assay` itself), as a user types it
    (a group has `commands`: typer builds on its own copy of click's classes)."""
    paths = [path]
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        paths += _command_paths(sub, f"{path} {name}".strip())
    return paths


COMMANDS = _command_paths(typer.main.get_command(app))


def test_every_command_has_a_docs_page_and_no_entry_is_stale() -> None:
    assert len(COMMANDS) > 10  # the tree was walked, not just the root
    assert sorted(set(COMMANDS) - set(COMMAND_PAGES)) == [], "commands without a docs page"
    assert sorted(set(COMMAND_PAGES) - set(COMMANDS)) == [], "entries for no command"


@pytest.mark.parametrize("page", sorted(set(COMMAND_PAGES.values())))
def test_every_linked_page_exists(page: str) -> None:
    assert (ROOT / DOCS_DIR / page).is_file(), f"{DOCS_DIR}/{page} is linked from --help"


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c or "assay")
def test_help_ends_with_its_docs_page(command: str) -> None:
    result = CliRunner().invoke(app, [*command.split(), "--help"], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    last = [line.strip() for line in result.output.splitlines() if line.strip()][-1]
    assert last == f"Docs: {DOCS_DIR}/{COMMAND_PAGES[command]}"
