"""Compare judges (and prompt versions) on the same items: paired differences with
bootstrap CIs, McNemar tests, Holm correction, ablation tables.

`compare_runs(run_dirs, ...)` reads run directories into a `ComparisonReport`;
`report_frames(report)` gives its parts as DataFrames. Modules: `_load` (a run
directory, majority-vote judges), `_universe` (items every run has), `_outcomes`
(ForceBench, factuality), `_item_outcomes` (items datasets), `_parts` (ablation, kappa,
confusions, MVR-FS points), `_build` (`compare_runs`), `_frames`, `_model`, `_drift`
(a re-run against its original: `assay rerun`'s drift report).
"""

from assay.compare._build import METRIC_ORDER, compare_runs
from assay.compare._frames import report_frames
from assay.compare._model import (
    AblationCell,
    AblationRow,
    ComparedRun,
    ComparisonReport,
    ConfusionTable,
    ForcePoint,
    KappaMatrix,
    ReliabilityTable,
)

__all__ = [
    "METRIC_ORDER",
    "AblationCell",
    "AblationRow",
    "ComparedRun",
    "ComparisonReport",
    "ConfusionTable",
    "ForcePoint",
    "KappaMatrix",
    "ReliabilityTable",
    "compare_runs",
    "report_frames",
]
