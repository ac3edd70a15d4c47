"""Run specs, execution with resume, run directories and manifests."""

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
from assay.runs.runner._runner import Runner, RunOptions, RunOutcome, run_spec
from assay.runs.spec._spec import (
    BaselineSpec,
    DatasetSpec,
    FailurePolicy,
    JudgeMatrixSpec,
    LoadedSpec,
    RunSpec,
    load_spec,
)

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
