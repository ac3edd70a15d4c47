"""Human-readable views of run results: terminal tables, text formats and an HTML page."""

from assay.report._html import render_html_report
from assay.report._tables import force_summary_frame, force_table, render_force_report

__all__ = ["force_summary_frame", "force_table", "render_force_report", "render_html_report"]
