"""Compare judges (and prompt versions) on the same items: paired differences with
bootstrap CIs, McNemar tests, Holm correction, ablation tables."""

from assay.compare._model import (
    AblationCell,
    AblationRow,
    ComparedRun,
    ComparisonReport,
    ConfusionTable,
    ForcePoint,
    KappaMatrix,
)

__all__ = [
    "AblationCell",
    "AblationRow",
    "ComparedRun",
    "ComparisonReport",
    "ConfusionTable",
    "ForcePoint",
    "KappaMatrix",
]
