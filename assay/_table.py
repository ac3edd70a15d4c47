"""Tables for `assay list` and `assay run --dry-run`: rich on a terminal, plain text in
pipes and files (no box-drawing characters or colour codes for grep, awk and diffs)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TextIO


def plain_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned columns separated by two spaces; one line per row."""
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return "\n".join([line(headers), *(line(r) for r in rows)]) + "\n"


def print_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    title: str | None = None,
    stream: TextIO | None = None,
) -> None:
    """A rich table when writing to a terminal, else `plain_table` under a title line."""
    out = stream if stream is not None else sys.stdout
    if out.isatty():
        from rich.console import Console
        from rich.table import Table

        table = Table(title=title, title_justify="left")
        for header in headers:
            table.add_column(header)
        for row in rows:
            table.add_row(*row)
        Console(file=out, highlight=False).print(table)
        return
    if title:
        out.write(f"{title}\n")
    out.write(plain_table(headers, rows))
