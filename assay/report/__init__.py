"""Human-readable views of run results: terminal tables, text formats and an HTML page.

Importing this package registers the built-in report formats (table, json, csv,
markdown, html) in `assay.core.registry.REPORT_FORMATS`.
"""

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
