"""Human-readable views of run results: terminal tables, text formats and an HTML page."""

from assay.report._factuality import factuality_frame, factuality_markdown, factuality_table
from assay.report._html import render_html_report
from assay.report._tables import force_summary_frame, force_table, render_force_report

__all__ = [
    "factuality_frame",
    "factuality_markdown",
    "factuality_table",
    "force_summary_frame",
    "force_table",
    "render_force_report",
    "render_html_report",
]
