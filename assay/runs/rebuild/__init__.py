"""A run's metrics rebuilt from its record files alone (`recompute`, `reparse`), and other
tools' released outputs turned into run directories.
"""

from assay.runs.rebuild._metrics import compute_metrics
from assay.runs.rebuild._reparse import (
    check_recorded_bootstrap,
    rebuild_metrics,
    recompute_run,
    reparse_run,
    reparse_run_checked,
)

__all__ = [
    "check_recorded_bootstrap",
    "compute_metrics",
    "rebuild_metrics",
    "recompute_run",
    "reparse_run",
    "reparse_run_checked",
]
