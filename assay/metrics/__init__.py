"""Metrics computed from run records.

One module a concept: `_record_fields` (reading records of any form), `_pooling` (pooled
and per-dataset rows, bootstrap settings), `_metric_rows` (fields every row shares);
ForceBench: `_force_pairs` (pair table), `_force_metrics` (MVR, FS); factuality:
`_claim_records`, `_claim_universe` (claims every verifier is scored on),
`_response_scores` (F(r)), `_factuality_scores` (macro/micro), `_gold_agreement`,
`_gold_correlation`; statistics: `_resampling` (the one bootstrap: draws, percentile
intervals), `_bootstrap` (means), `_ratio_bootstrap` (ratios of sums, the policies' pooled
metrics), `_rank_correlation`,
`_agreement`; comparisons: `_paired` (judges on the same items), `_paired_stats`,
`_paired_draws`, `_paired_metrics` (any per-item statistic, every judge and pair on one
draw: what `assay compare` runs), `_majority` (majority vote of `#k` samples),
`_pairwise` (A vs B verdicts in both orders); agreement statistics:
`_agreement_stats` (categorical vs gold), `_score_agreement` (numeric vs gold),
`_rater_agreement` (judges and raters), `_ordinal` (ordered labels: weighted kappa,
ordinal alpha, MAE in ranks), `_panel` (all judges, judges + raters, each
judge left out; `_panel_stats` batches its bootstrap), `_calibration` (Brier, ECE,
reliability, recalibration on a split; `_calibration_stats` the statistics),
`_self_consistency` (samples > 1), `_item_bootstrap` (CIs of any statistic).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assay._lazy import LazyNames

if TYPE_CHECKING:  # imported on first use (PEP 562): a run's final metrics need a few
    # modules, not scipy, scikit-learn and pandas that the others load
    from assay.metrics._agreement import AgreementReport, agreement, cohen_kappa, krippendorff_alpha
    from assay.metrics._agreement_stats import GoldAgreement, agreement_with_gold, confusion_matrix
    from assay.metrics._bootstrap import bootstrap_ci
    from assay.metrics._calibration import CalibrationRow, FittedCalibration, calibration_rows
    from assay.metrics._calibration_stats import (
        brier,
        ece,
        fit_isotonic,
        fit_temperature,
        reliability,
        with_temperature,
    )
    from assay.metrics._factuality_scores import FactualityReport, FactualityRow, factuality_scores
    from assay.metrics._force_metrics import (
        ForceReport,
        ForceRow,
        force_metrics,
        force_metrics_frame,
    )
    from assay.metrics._force_pairs import pair_table
    from assay.metrics._gold_agreement import GoldReport, GoldRow, gold_metrics
    from assay.metrics._gold_correlation import (
        CorrelationReport,
        CorrelationRow,
        factuality_correlation,
    )
    from assay.metrics._item_bootstrap import item_bootstrap_ci
    from assay.metrics._item_metrics import item_metrics
    from assay.metrics._item_rows import ItemJudgeRow, ItemsReport, RaterRow
    from assay.metrics._ordinal import OrdinalAgreement, ordinal_agreement
    from assay.metrics._paired import (
        PairedComparison,
        PairedReport,
        mcnemar_exact,
        outcome_matrix,
        paired_compare,
    )
    from assay.metrics._pairwise import PairwiseReport, pairwise_metrics, unswap
    from assay.metrics._panel import LeftOut, PanelRow, panel_rows
    from assay.metrics._rank_correlation import average_ranks, spearman
    from assay.metrics._rater_agreement import RaterAgreement, kappa_matrix, rater_agreement
    from assay.metrics._ratio_bootstrap import ratio_ci
    from assay.metrics._response_scores import length_penalized, response_table
    from assay.metrics._score_agreement import ScoreAgreement, agreement_with_gold_scores
    from assay.metrics._self_consistency import SelfConsistency, self_consistency

_SOURCES = {  # where each lazily imported name lives
    "_agreement": ("AgreementReport", "agreement", "cohen_kappa", "krippendorff_alpha"),
    "_agreement_stats": ("GoldAgreement", "agreement_with_gold", "confusion_matrix"),
    "_bootstrap": ("bootstrap_ci",),
    "_calibration": ("CalibrationRow", "FittedCalibration", "calibration_rows"),
    "_calibration_stats": (
        "brier",
        "ece",
        "fit_isotonic",
        "fit_temperature",
        "reliability",
        "with_temperature",
    ),
    "_factuality_scores": ("FactualityReport", "FactualityRow", "factuality_scores"),
    "_force_metrics": ("ForceReport", "ForceRow", "force_metrics", "force_metrics_frame"),
    "_force_pairs": ("pair_table",),
    "_gold_agreement": ("GoldReport", "GoldRow", "gold_metrics"),
    "_gold_correlation": ("CorrelationReport", "CorrelationRow", "factuality_correlation"),
    "_item_bootstrap": ("item_bootstrap_ci",),
    "_item_metrics": ("item_metrics",),
    "_item_rows": ("ItemJudgeRow", "ItemsReport", "RaterRow"),
    "_ordinal": ("OrdinalAgreement", "ordinal_agreement"),
    "_paired": (
        "PairedComparison",
        "PairedReport",
        "mcnemar_exact",
        "outcome_matrix",
        "paired_compare",
    ),
    "_pairwise": ("PairwiseReport", "pairwise_metrics", "unswap"),
    "_panel": ("LeftOut", "PanelRow", "panel_rows"),
    "_rank_correlation": ("average_ranks", "spearman"),
    "_rater_agreement": ("RaterAgreement", "kappa_matrix", "rater_agreement"),
    "_ratio_bootstrap": ("ratio_ci",),
    "_response_scores": ("length_penalized", "response_table"),
    "_score_agreement": ("ScoreAgreement", "agreement_with_gold_scores"),
    "_self_consistency": ("SelfConsistency", "self_consistency"),
}
_lazy = LazyNames(__name__, _SOURCES, globals())

__all__ = [
    "AgreementReport",
    "ItemJudgeRow",
    "ItemsReport",
    "RaterRow",
    "PanelRow",
    "LeftOut",
    "panel_rows",
    "CalibrationRow",
    "FittedCalibration",
    "calibration_rows",
    "brier",
    "ece",
    "reliability",
    "fit_temperature",
    "fit_isotonic",
    "with_temperature",
    "item_metrics",
    "OrdinalAgreement",
    "ordinal_agreement",
    "CorrelationReport",
    "CorrelationRow",
    "FactualityReport",
    "FactualityRow",
    "ForceReport",
    "ForceRow",
    "GoldReport",
    "GoldAgreement",
    "GoldRow",
    "RaterAgreement",
    "ScoreAgreement",
    "SelfConsistency",
    "PairedComparison",
    "PairedReport",
    "PairwiseReport",
    "agreement",
    "agreement_with_gold",
    "agreement_with_gold_scores",
    "confusion_matrix",
    "item_bootstrap_ci",
    "kappa_matrix",
    "rater_agreement",
    "self_consistency",
    "krippendorff_alpha",
    "average_ranks",
    "bootstrap_ci",
    "cohen_kappa",
    "factuality_correlation",
    "factuality_scores",
    "force_metrics",
    "force_metrics_frame",
    "gold_metrics",
    "length_penalized",
    "mcnemar_exact",
    "outcome_matrix",
    "paired_compare",
    "pairwise_metrics",
    "pair_table",
    "ratio_ci",
    "response_table",
    "spearman",
    "unswap",
]


def __getattr__(name: str) -> Any:
    """Import a metric's module on first use, so `assay run` loads what its final metrics
    use and `import assay.metrics._x` does not load every module."""
    return _lazy.get(name)


def __dir__() -> list[str]:
    return _lazy.names(__all__)
