"""A `ComparisonReport` as pandas DataFrames, one per part, for analysis in Python."""

from __future__ import annotations

import pandas as pd

from assay.compare._model import AblationCell, ComparisonReport
from assay.compare._panels import left_out_frame, panels_frame
from assay.metrics import PairedComparison

ABLATION_COLUMNS = [
    "judge",
    "run",
    "model",
    "prompt",
    "prompt_version",
    "reference",
    "metric",
    *AblationCell.model_fields,
]


def comparisons_frame(report: ComparisonReport) -> pd.DataFrame:
    """One row per comparison, columns as the JSON keys (`metric` ... `p_holm`)."""
    return pd.DataFrame(
        [c.model_dump() for c in report.comparisons], columns=list(PairedComparison.model_fields)
    )


def ablation_frame(report: ComparisonReport) -> pd.DataFrame:
    """Tidy: one row per (judge, metric) with the value, its CI and the Δ against the
    reference. `frame.pivot(index="judge", columns="metric", values="value")` gives the
    ablation table's layout."""
    rows = [
        {
            "judge": row.judge,
            "run": row.run,
            "model": row.model,
            "prompt": row.prompt,
            "prompt_version": row.prompt_version,
            "reference": row.reference,
            "metric": metric,
            **cell.model_dump(),
        }
        for row in report.ablation
        for metric, cell in row.metrics.items()
    ]
    return pd.DataFrame(rows, columns=ABLATION_COLUMNS)


def kappa_frame(report: ComparisonReport) -> pd.DataFrame:
    """Judges and raters on both axes; NA where kappa is undefined."""
    if report.kappa is None:
        return pd.DataFrame(dtype="Float64")
    names = report.kappa.raters
    return pd.DataFrame(report.kappa.values, index=names, columns=names, dtype="Float64")


def confusions_frame(report: ComparisonReport) -> pd.DataFrame:
    """Long: one row per (judge, dataset, gold label, predicted label) with its count;
    a verifier's rows are its verdicts against gold claim labels, binary (supported or
    not_supported), over the claims it scored."""
    rows = [
        (t.judge, t.dataset, gold, pred, t.counts[i][k])
        for t in report.confusions
        for i, gold in enumerate(t.labels)
        for k, pred in enumerate(t.labels)
    ]
    return pd.DataFrame(rows, columns=["judge", "dataset", "gold", "predicted", "count"])


def force_frame(report: ComparisonReport) -> pd.DataFrame:
    columns = ["judge", "mvr", "mvr_lo", "mvr_hi", "fs", "fs_lo", "fs_hi"]
    return pd.DataFrame([p.model_dump() for p in report.force], columns=columns)


RELIABILITY_COLUMNS = ["judge", "run", "dataset", "lo", "hi", "n", "confidence", "accuracy"]


def reliability_frame(report: ComparisonReport) -> pd.DataFrame:
    """Long: one row per (judge, dataset, bin) with its edges, item count, mean
    confidence and accuracy (NaN for an empty bin); empty without label probabilities."""
    rows = [
        (t.judge, t.run, t.dataset, b.lo, b.hi, b.count, b.confidence, b.accuracy)
        for t in report.reliability
        for b in t.reliability
    ]
    return pd.DataFrame(rows, columns=RELIABILITY_COLUMNS)


def report_frames(report: ComparisonReport) -> dict[str, pd.DataFrame]:
    """`comparisons`, `ablation`, `kappa`, `confusions`, `force`, `panels` (judges'
    panel reliability), `panels_left_out` (each judge left out) and `reliability` (the
    reliability-diagram bins of judges with label probabilities) as DataFrames."""
    return {
        "comparisons": comparisons_frame(report),
        "ablation": ablation_frame(report),
        "kappa": kappa_frame(report),
        "confusions": confusions_frame(report),
        "force": force_frame(report),
        "panels": panels_frame(report.panels),
        "panels_left_out": left_out_frame(report.panels),
        "reliability": reliability_frame(report),
    }
