"""Human-readable views of run results: terminal tables and text formats."""

from assay.report._tables import force_summary_frame, force_table, render_force_report

__all__ = ["force_summary_frame", "force_table", "render_force_report"]
