"""Run specs, execution with resume, run directories and manifests."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assay._lazy import LazyNames

if TYPE_CHECKING:  # imported on first use (PEP 562)
    from assay.core.records import JudgmentRecord
    from assay.core.rundir import (
        JUDGMENTS_FILE,
        MANIFEST_FILE,
        METRICS_FILE,
        iter_records,
        latest_records,
        read_json,
    )
    from assay.core.settings import ModelDefaults
    from assay.runs.runner._runner import Runner, run_spec
    from assay.runs.spec._options import RunOptions, RunOutcome
    from assay.runs.spec._spec import (
        BaselineSpec,
        DatasetSpec,
        FailurePolicy,
        JudgeMatrixSpec,
        LoadedSpec,
        RunSpec,
        load_spec,
    )

_SOURCES = {  # where each lazily imported name lives
    "assay.core.records": ("JudgmentRecord",),
    "assay.core.rundir": (
        "JUDGMENTS_FILE",
        "MANIFEST_FILE",
        "METRICS_FILE",
        "iter_records",
        "latest_records",
        "read_json",
    ),
    "assay.core.settings": ("ModelDefaults",),
    "assay.runs.runner._runner": ("Runner", "run_spec"),
    "assay.runs.spec._options": ("RunOptions", "RunOutcome"),
    "assay.runs.spec._spec": (
        "BaselineSpec",
        "DatasetSpec",
        "FailurePolicy",
        "JudgeMatrixSpec",
        "LoadedSpec",
        "RunSpec",
        "load_spec",
    ),
}
_lazy = LazyNames(__name__, _SOURCES, globals())

__all__ = [
    "JUDGMENTS_FILE",
    "MANIFEST_FILE",
    "METRICS_FILE",
    "BaselineSpec",
    "DatasetSpec",
    "FailurePolicy",
    "JudgeMatrixSpec",
    "JudgmentRecord",
    "LoadedSpec",
    "ModelDefaults",
    "RunOptions",
    "RunOutcome",
    "RunSpec",
    "Runner",
    "iter_records",
    "latest_records",
    "load_spec",
    "read_json",
    "run_spec",
]


def __getattr__(name: str) -> Any:
    """Import a name's module on first use: `load_spec` and `RunOptions` alone (a spec
    error) do not load the runner, every stage and the model clients."""
    return _lazy.get(name)


def __dir__() -> list[str]:
    return _lazy.names(__all__)
