"""What `assay report` and the end of `assay run` print or write, per format."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay._table import Grid, print_grid
from assay.core.atomic import write_bytes_atomic
from assay.errors import AssayError
from assay.report._views import report_grids

if TYPE_CHECKING:
    from assay.report._formats import ReportFormat, RunReport

WIDE = 110  # a terminal this wide also gets MVR per axis in the summary table


def print_tables(
    console: Any,
    metrics: Mapping[str, Any],
    label: str,
    *,
    detail: bool,
    extra: Sequence[Grid] = (),
) -> None:
    """The run's tables on `console` (then `extra`, e.g. the policies tables): rich
    tables on a terminal, plain text elsewhere."""
    axes = not console.is_terminal or console.width >= WIDE
    grids = [*report_grids(metrics, label, axes=axes, detail=detail), *extra]
    for i, grid in enumerate(grids):
        if i:
            console.print()
        print_grid(console, grid)


def write_report_file(target: Path, text: str) -> None:
    """Write exactly `target` (parents created), atomically: `report -f html` writes into
    a run directory without its writer lock; a directory there is a one-line error."""
    if target.is_dir():
        raise AssayError("is a directory; give -o a file path, e.g. -o report.txt", file=target)
    try:
        write_bytes_atomic(target, text.encode("utf-8"))  # a reader never sees half a report
    except OSError as exc:
        raise AssayError(f"cannot write the report: {exc.strerror}", file=target) from None


def emit_report(fmt: ReportFormat, report: RunReport, output: Path | None, console: Any) -> None:
    """`assay report -f NAME`: to `output`, the format's default file, or stdout.

    The built-in table format on stdout prints through `console` (rich tables on a
    terminal); a written file's path is printed instead of its text.
    """
    # here, not at the top: the end of `assay run` prints its tables (print_tables) without
    # the formats' modules (comparisons, HTML, policies: pandas, scipy)
    from assay.report._formats import default_file, head_lines, table_format
    from assay.report._views_policies import policy_grids

    file_name = default_file(fmt)
    target = output if output is not None else report.run_dir / file_name if file_name else None
    if target is None and fmt is table_format:
        console.print(head_lines(report), markup=False, highlight=False, soft_wrap=True)
        policies = policy_grids(report.policy_tables, report.title)
        print_tables(console, report.metrics, report.title, detail=report.detail, extra=policies)
        return
    text = fmt(report)
    stale = report.stale_line
    if stale and stale not in text:  # csv, or a plugin's format: the warning on stderr
        sys.stderr.write(f"warning: {stale}\n")
    if target is None:
        sys.stdout.write(text)
        return
    write_report_file(target, text)
    sys.stdout.write(f"{target}\n")
