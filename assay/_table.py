"""One table model for every table assay prints (reports, `list`, dry runs), three
renderings: plain text, markdown and a rich Table.

Numbers are the reason a report exists, so no rendering ever cuts a numeric cell: plain
text and markdown never cut anything, and the rich Table (terminals only) shortens
identifiers in the middle instead, or is not used at all when even that cannot fit.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

GAP = "  "
MIN_ID = 12  # an identifier is never shortened below this many characters


@dataclass(frozen=True)
class Grid:
    """A titled table of already-formatted cells; `numeric[i]` right-aligns column i."""

    title: str
    headers: tuple[str, ...]
    numeric: tuple[bool, ...]
    rows: Sequence[tuple[str, ...]] = field(default_factory=list)
    caption: str = ""

    def widths(self) -> list[int]:
        return [max([len(h), *(len(r[i]) for r in self.rows)]) for i, h in enumerate(self.headers)]


def render_plain(grid: Grid) -> str:
    """Aligned whitespace columns; every cell in full, whatever the width."""
    widths = grid.widths()

    def line(cells: tuple[str, ...]) -> str:
        parts = [
            c.rjust(w) if num else c.ljust(w)
            for c, w, num in zip(cells, widths, grid.numeric, strict=True)
        ]
        return GAP.join(parts).rstrip()

    out = [grid.title] if grid.title else []
    out += [line(grid.headers), *(line(r) for r in grid.rows)]
    if grid.caption:
        out.append(grid.caption)
    return "\n".join(out) + "\n"


def _md_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|")


def render_markdown(grid: Grid) -> str:
    """A GitHub-flavoured markdown table under a `##` heading, caption as a paragraph."""
    align = ["---:" if num else "---" for num in grid.numeric]
    lines = [f"## {grid.title}", ""] if grid.title else []
    lines.append("| " + " | ".join(_md_cell(h) for h in grid.headers) + " |")
    lines.append("| " + " | ".join(align) + " |")
    lines += ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in grid.rows]
    if grid.caption:
        lines += ["", grid.caption]
    return "\n".join(lines) + "\n"


def shorten_middle(text: str, limit: int) -> str:
    """`abcdef…uvwxyz`: keeps both ends, where ids differ (provider prefix, version)."""
    if len(text) <= limit:
        return text
    head = (limit - 1) // 2
    tail = limit - 1 - head
    return text[:head] + "…" + text[len(text) - tail :]


def _id_limits(grid: Grid, width: int) -> list[int] | None:
    """Per-column widths that fit `width`, shortening only identifier columns; None if
    the numeric columns alone (plus MIN_ID per identifier column) do not fit."""
    widths = grid.widths()
    text_cols = [i for i, num in enumerate(grid.numeric) if not num]
    fixed = sum(w for w, num in zip(widths, grid.numeric, strict=True) if num)
    budget = width - fixed - len(GAP) * (len(widths) - 1) - 1
    if budget < MIN_ID * len(text_cols):
        return None
    limits = list(widths)
    for n_left, i in enumerate(sorted(text_cols, key=lambda c: widths[c]), start=0):
        share = budget // (len(text_cols) - n_left)
        limits[i] = min(widths[i], share)
        budget -= limits[i]
    return limits


def rich_table(grid: Grid, width: int) -> Any | None:
    """A rich Table of `grid` no wider than `width`, or None when it cannot fit uncut."""
    from rich import box
    from rich.table import Table

    limits = _id_limits(grid, width)
    if limits is None:
        return None
    table = Table(
        title=grid.title or None,
        caption=grid.caption or None,
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        collapse_padding=True,
    )
    for header, num, w in zip(grid.headers, grid.numeric, limits, strict=True):
        table.add_column(
            header,
            justify="right" if num else "left",
            no_wrap=True,
            overflow="fold" if num else "ellipsis",
            min_width=w,
            max_width=None if num else w,
        )
    for row in grid.rows:
        cells = [
            c if num else shorten_middle(c, w)
            for c, num, w in zip(row, grid.numeric, limits, strict=True)
        ]
        table.add_row(*cells)
    return table


def print_grid(console: Any, grid: Grid) -> None:
    """A rich Table on a terminal when it fits; plain text otherwise (pipes, files, too
    narrow), printed without markup, highlighting or cropping."""
    table = rich_table(grid, console.width) if console.is_terminal else None
    if table is not None:
        console.print(table)
        return
    text = render_plain(grid)
    console.print(
        text, end="", markup=False, highlight=False, emoji=False, crop=False, soft_wrap=True
    )


def print_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    title: str | None = None,
    stream: TextIO | None = None,
) -> None:
    """Text tables outside reports (`assay list`, `assay run --dry-run`): the same
    rendering as the report tables, all columns text, on stdout or `stream`."""
    from rich.console import Console

    grid = Grid(
        title=title or "",
        headers=tuple(headers),
        numeric=tuple(False for _ in headers),
        rows=[tuple(r) for r in rows],
    )
    print_grid(Console(file=stream if stream is not None else sys.stdout), grid)
