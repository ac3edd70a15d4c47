"""Metrics computed from run records."""

from assay.metrics._agreement import AgreementReport, agreement, cohen_kappa
from assay.metrics._bootstrap import bootstrap_ci
from assay.metrics._factuality import (
    CorrelationReport,
    CorrelationRow,
    FactualityReport,
    FactualityRow,
    GoldReport,
    GoldRow,
    average_ranks,
    factuality_correlation,
    factuality_scores,
    gold_metrics,
    length_penalized,
    ratio_ci,
    response_table,
    spearman,
)
from assay.metrics._force import (
    ForceReport,
    ForceRow,
    force_metrics,
    force_metrics_frame,
    pair_table,
)

__all__ = [
    "AgreementReport",
    "CorrelationReport",
    "CorrelationRow",
    "FactualityReport",
    "FactualityRow",
    "ForceReport",
    "ForceRow",
    "GoldReport",
    "GoldRow",
    "agreement",
    "average_ranks",
    "bootstrap_ci",
    "cohen_kappa",
    "factuality_correlation",
    "factuality_scores",
    "force_metrics",
    "force_metrics_frame",
    "gold_metrics",
    "length_penalized",
    "pair_table",
    "ratio_ci",
    "response_table",
    "spearman",
]
