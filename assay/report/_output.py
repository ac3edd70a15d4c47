"""What `assay report` and the end of `assay run` print or write, per format."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from assay._table import print_grid, render_markdown, render_plain
from assay.errors import AssayError
from assay.report._export import tidy_csv
from assay.report._views import report_grids

FORMATS = ("table", "json", "csv", "markdown", "html")
WIDE = 110  # a terminal this wide also gets MVR per axis in the summary table


def status_line(manifest: Mapping[str, Any]) -> str:
    """`run NAME · status S · recorded/planned judgments · verifications`."""
    line = f"run {manifest.get('name')} · status {manifest.get('status')}"
    if manifest.get("planned_judgments"):
        line += (
            f" · {manifest.get('recorded_judgments')}/{manifest.get('planned_judgments')} judgments"
        )
    fact = manifest.get("factuality") or {}
    if fact:
        line += (
            f" · {fact.get('recorded_verifications')}/{fact.get('planned_verifications')}"
            " verifications"
        )
    return line


def render_text(
    manifest: Mapping[str, Any], metrics: Mapping[str, Any], fmt: str, label: str, *, detail: bool
) -> str:
    """The whole report as text for `fmt` (table, json, csv or markdown)."""
    if fmt == "json":
        return json.dumps(metrics, indent=2) + "\n"
    if fmt == "csv":
        return tidy_csv(metrics)
    grids = report_grids(metrics, label, detail=detail)
    if fmt == "markdown":
        return "\n".join(render_markdown(g) for g in grids)
    if fmt == "table":
        return "\n".join([status_line(manifest) + "\n", *(render_plain(g) for g in grids)])
    raise AssayError(f"--format {fmt!r}: use {', '.join(FORMATS[:-1])} or {FORMATS[-1]}")


def print_tables(console: Any, metrics: Mapping[str, Any], label: str, *, detail: bool) -> None:
    """The run's tables on `console`: rich tables on a terminal, plain text elsewhere."""
    axes = not console.is_terminal or console.width >= WIDE
    for i, grid in enumerate(report_grids(metrics, label, axes=axes, detail=detail)):
        if i:
            console.print()
        print_grid(console, grid)


def write_report_file(target: Path, text: str) -> None:
    """Write exactly `target` (parents created); a directory there is a one-line error."""
    if target.is_dir():
        raise AssayError("is a directory; give -o a file path, e.g. -o report.txt", file=target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise AssayError(f"cannot write the report: {exc.strerror}", file=target) from None
