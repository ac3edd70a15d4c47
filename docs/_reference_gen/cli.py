"""The CLI reference: every command of the typer app, from its click command objects.

Usage lines, help, arguments and options are what `assay ... --help` prints, read
from the objects `typer.main.get_command(app)` builds, so a new option appears here
once the page is regenerated. A command's `Docs: docs/PAGE` epilog becomes a link.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from _reference_gen.models import cell, escape, prose

DOCS_EPILOG = re.compile(r"Docs:\s*docs/(\S+\.md)")


def root() -> Any:
    """The click group of the `assay` typer app."""
    import typer

    from assay.cli import app

    return typer.main.get_command(app)


def walk(command: Any, parent: Any = None, name: str = "assay") -> Iterator[tuple[Any, Any]]:
    """(command, its context) for `command` and every subcommand, depth first."""
    ctx = command.context_class(command, info_name=name, parent=parent)
    yield command, ctx
    for sub_name, sub in getattr(command, "commands", {}).items():
        if not sub.hidden:
            yield from walk(sub, ctx, sub_name)


def _path(ctx: Any) -> str:
    return str(ctx.command_path)


def _type(param: Any, ctx: Any) -> str:
    return str(param.display_type(ctx)).strip("<>")


def _default(param: Any) -> str:
    if param.required:
        return "**required**"
    default = param.default
    if default is None or callable(default):
        return ""
    if isinstance(default, bool) and param.secondary_opts:
        return f"`{(param.opts if default else param.secondary_opts)[0]}`"
    return f"`{default}`"


def _names(param: Any) -> str:
    names = [*param.opts, *param.secondary_opts]
    return " / ".join(f"`{n}`" for n in names)


def _params_lines(command: Any, ctx: Any) -> list[str]:
    params = [p for p in command.params if not getattr(p, "hidden", False)]
    arguments = [p for p in params if p.param_type_name == "argument"]
    options = [p for p in params if p.param_type_name == "option"]
    lines: list[str] = []
    if arguments:
        lines += [
            "**Arguments**",
            "",
            "| Name | Type | Default | Help |",
            "| --- | --- | --- | --- |",
        ]
        for p in arguments:
            lines.append(
                f"| `{str(p.name).upper()}` | {cell(_type(p, ctx))} | {cell(_default(p))} "
                f"| {prose(p.help or '')} |"
            )
        lines.append("")
    if options:
        lines += [
            "**Options**",
            "",
            "| Option | Type | Default | Help |",
            "| --- | --- | --- | --- |",
        ]
        for p in options:
            lines.append(
                f"| {cell(_names(p))} | {cell(_type(p, ctx))} | {cell(_default(p))} "
                f"| {prose(p.help or '')} |"
            )
        lines.append("")
    return lines


def _epilog(command: Any) -> list[str]:
    """The guide a command's `Docs: docs/PAGE` epilog names, as a link from this page."""
    found = DOCS_EPILOG.search(command.epilog or "")
    return [f"Guide: [{found.group(1)}](../{found.group(1)}).", ""] if found else []


def command_lines(command: Any, ctx: Any) -> list[str]:
    """One command's section: usage, help, its guide, arguments and options."""
    level = "#" * min(2 + _path(ctx).count(" "), 4)
    usage = command.get_usage(ctx).strip()
    help_text = "\n\n".join(
        escape(" ".join(p.split())) for p in (command.help or "").split("\n\n") if p.strip()
    )
    lines = [f"{level} `{_path(ctx)}`", "", "```", usage, "```", ""]
    if help_text:
        lines += [help_text, ""]
    lines += _epilog(command)
    return lines + _params_lines(command, ctx)


def cli_page() -> str:
    """The whole `reference/cli.md`."""
    lines = [
        "# Command-line reference",
        "",
        "Every `assay` command, its arguments and options, as `--help` shows them. "
        "Generated from the typer app by `python docs/gen_reference.py`; do not edit "
        "by hand.",
        "",
    ]
    for command, ctx in walk(root()):
        lines += command_lines(command, ctx)
    return "\n".join(lines).rstrip("\n") + "\n"


def undocumented(group: Any = None) -> list[str]:
    """Commands, arguments and options without help text, by command path (of the
    `assay` app unless another click group is given)."""
    out = []
    for command, ctx in walk(root() if group is None else group):
        if not (command.help or command.short_help or "").strip():
            out.append(_path(ctx))
        for p in command.params:
            if not getattr(p, "hidden", False) and not (p.help or "").strip():
                out.append(f"{_path(ctx)} {p.opts[0] if p.opts else p.name}")
    return out
