"""Human-readable views of run results: terminal tables, text formats and an HTML page.

The built-in report formats (table, json, csv, markdown, html) register in
`assay.core.registry.REPORT_FORMATS` when `_formats` is imported: the registry does that
on its first read. Names are imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assay._lazy import LazyNames

if TYPE_CHECKING:  # imported on first use (PEP 562)
    from assay._table import Grid, print_grid, render_markdown, render_plain
    from assay.report._compare_html import comparison_section, render_comparison_html
    from assay.report._digests import RecordDigest, RecordsCheck, check_records
    from assay.report._export import tidy_csv, tidy_frame
    from assay.report._formats import (
        ReportFormat,
        RunReport,
        compares_with,
        comparison_renderer,
        render_report,
        resolve_format,
        status_line,
    )
    from assay.report._html import build_page, render_html_report
    from assay.report._output import emit_report, print_tables, write_report_file
    from assay.report._views import report_grids

_SOURCES = {  # where each lazily imported name lives
    "assay._table": ("Grid", "print_grid", "render_markdown", "render_plain"),
    "assay.report._compare_html": ("comparison_section", "render_comparison_html"),
    "assay.report._digests": ("RecordDigest", "RecordsCheck", "check_records"),
    "assay.report._export": ("tidy_csv", "tidy_frame"),
    "assay.report._formats": (
        "ReportFormat",
        "RunReport",
        "compares_with",
        "comparison_renderer",
        "render_report",
        "resolve_format",
        "status_line",
    ),
    "assay.report._html": ("build_page", "render_html_report"),
    "assay.report._output": ("emit_report", "print_tables", "write_report_file"),
    "assay.report._views": ("report_grids",),
}
_lazy = LazyNames(__name__, _SOURCES, globals())

__all__ = [
    "Grid",
    "RecordDigest",
    "RecordsCheck",
    "ReportFormat",
    "RunReport",
    "build_page",
    "comparison_renderer",
    "compares_with",
    "check_records",
    "comparison_section",
    "emit_report",
    "print_grid",
    "print_tables",
    "render_comparison_html",
    "render_html_report",
    "render_markdown",
    "render_plain",
    "render_report",
    "report_grids",
    "resolve_format",
    "status_line",
    "tidy_csv",
    "tidy_frame",
    "write_report_file",
]


def __getattr__(name: str) -> Any:
    """Import a name's module on first use: the end of `assay run` prints its tables
    without loading the comparison, HTML and policies modules (pandas, scipy)."""
    return _lazy.get(name)


def __dir__() -> list[str]:
    return _lazy.names(__all__)
