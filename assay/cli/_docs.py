"""Where each command is documented: one table, shown at the end of every command's help.

`assay --help` and each subcommand's `--help` end with `Docs: docs/<page>`, so a user who
finds a command also finds the guide that explains it. The pages are the repository's
docs/ folder (the site is built from it). One table here, applied to the whole command
tree by `link_docs`, instead of an `epilog=` on every decorator that could drift;
tests/test_cli_docs_links.py fails when a command has no entry or names a missing page.
"""

from __future__ import annotations

import typer
from typer.main import get_command_name

DOCS_DIR = "docs"

# command path ("" is `assay` itself, "policies apply" a subcommand) -> page under docs/
COMMAND_PAGES: dict[str, str] = {
    "": "index.md",
    "run": "get-started/first-run.md",
    "report": "reference/reports.md",
    "compare": "tutorials/compare-judges.md",
    "recompute": "explanations/run-directory.md",
    "verify": "how-to/verify.md",
    "import-medscore": "how-to/import-datasets.md",
    "reparse": "how-to/reparse.md",
    "pack": "how-to/pack.md",
    "unpack": "how-to/pack.md",
    "rerun": "how-to/rerun.md",
    "validate": "tutorials/providers-and-local-models.md",
    "version": "get-started/install.md",
    "list": "how-to/plugins.md",
    "prompts": "tutorials/prompt-ablation.md",
    "prompts list": "tutorials/prompt-ablation.md",
    "prompts show": "tutorials/prompt-ablation.md",
    "prompts render": "tutorials/prompt-ablation.md",
    "cache": "how-to/cache.md",
    "cache info": "how-to/cache.md",
    "cache clear": "how-to/cache.md",
    "policies": "tutorials/policies.md",
    "policies apply": "tutorials/policies.md",
    "policies tune": "tutorials/policies.md",
    "policies sweep": "tutorials/policies.md",
    "policies compare": "tutorials/policies.md",
    "policies list": "tutorials/policies.md",
    "policies export": "reference/policies/integration.md",
    "view": "tutorials/why-judges-disagree.md",
    "labels": "how-to/adjudicate.md",
    "labels export": "how-to/adjudicate.md",
}


def docs_line(command: str) -> str | None:
    """The help's last line for `command` (a path such as "cache info"), if it has a page."""
    page = COMMAND_PAGES.get(command)
    return f"Docs: {DOCS_DIR}/{page}" if page else None


def link_docs(app: typer.Typer, path: str = "") -> None:
    """Give `app`, its commands and its sub-groups (recursively) their docs line as epilog.

    A command missing from the table keeps no epilog rather than breaking the CLI; the
    test, not the user, finds it."""
    app.info.epilog = docs_line(path)
    for command in app.registered_commands:
        name = command.name or (command.callback and get_command_name(command.callback.__name__))
        command.epilog = docs_line(_join(path, str(name)))
    for group in app.registered_groups:
        if group.typer_instance is not None and isinstance(group.name, str):
            link_docs(group.typer_instance, _join(path, group.name))


def _join(path: str, name: str) -> str:
    return f"{path} {name}".strip()
