"""A run's metrics rebuilt from its record files alone (`recompute`, `reparse`), and other
tools' released outputs turned into run directories.

Names are imported on first use: a run computing its metrics (`compute_metrics`) does
not load the reparsing machinery.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assay._lazy import LazyNames

if TYPE_CHECKING:  # imported on first use (PEP 562)
    from assay.runs.rebuild._metrics import compute_metrics
    from assay.runs.rebuild._reparse import (
        check_recorded_bootstrap,
        rebuild_metrics,
        recompute_run,
        reparse_run,
        reparse_run_checked,
    )

_lazy = LazyNames(
    __name__,
    {
        "_metrics": ["compute_metrics"],
        "_reparse": [
            "check_recorded_bootstrap",
            "rebuild_metrics",
            "recompute_run",
            "reparse_run",
            "reparse_run_checked",
        ],
    },
    globals(),
)

__all__ = [
    "check_recorded_bootstrap",
    "compute_metrics",
    "rebuild_metrics",
    "recompute_run",
    "reparse_run",
    "reparse_run_checked",
]


def __getattr__(name: str) -> Any:
    return _lazy.get(name)


def __dir__() -> list[str]:
    return _lazy.names(__all__)
