"""Metrics computed from run records."""

from assay.metrics._bootstrap import bootstrap_ci
from assay.metrics._force import (
    ForceReport,
    ForceRow,
    force_metrics,
    force_metrics_frame,
    pair_table,
)

__all__ = [
    "ForceReport",
    "ForceRow",
    "bootstrap_ci",
    "force_metrics",
    "force_metrics_frame",
    "pair_table",
]
