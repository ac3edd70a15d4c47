"""Human-readable views of run results: terminal tables, text formats and an HTML page."""

from assay._table import Grid, print_grid, render_markdown, render_plain
from assay.report._export import tidy_csv, tidy_frame
from assay.report._html import render_html_report
from assay.report._output import (
    FORMATS,
    print_tables,
    render_text,
    status_line,
    write_report_file,
)
from assay.report._views import report_grids

__all__ = [
    "FORMATS",
    "Grid",
    "print_grid",
    "print_tables",
    "render_html_report",
    "render_markdown",
    "render_plain",
    "render_text",
    "report_grids",
    "status_line",
    "tidy_csv",
    "tidy_frame",
    "write_report_file",
]
