"""Metrics of the evidence gate, each an exact `Ratio` with its null reason.

The positive class is `no_evidence`: abstaining on it is a true positive. Refused
questions are none of TP/TN/FP/FN; they stay in the denominators of accuracy,
precision, recall and specificity and never reach a numerator.

Every ratio metric is pooled from per-question contributions (numerator, denominator),
so the point value and its bootstrap interval (questions resampled) come from the
same counts. Balanced accuracy and F1 are derived from recall/specificity/precision in
every resample. Factuality credits a partial answer `alpha`; its counts are scaled by
alpha's denominator to stay integers (alpha = 0.5: numerator 7, denominator 12 = 3.5/6).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from pydantic import BaseModel, ConfigDict

from assay.core.decisions import GateOutcome
from assay.metrics._ratio_bootstrap import CI_METHOD, RatioCounts, interval_of, resampled_all
from assay.policies.engine._numbers import NO_GOLD, ZERO_DENOMINATOR, Ratio, ratio
from assay.policies.evidence_gate._aurc import aurc, aurc_optimal
from assay.policies.evidence_gate._config import (
    CitationQuality,
    EvidenceLabel,
    SupportLevel,
    support_value,
)
from assay.policies.evidence_gate._records import GateDecisionRecord

PASS, ABSTAIN, REFUSE = GateOutcome.PASS, GateOutcome.ABSTAIN, GateOutcome.REFUSE
HAS, NO = EvidenceLabel.HAS_EVIDENCE, EvidenceLabel.NO_EVIDENCE


@dataclass(frozen=True)
class GateRow:
    """What the metrics read of one decided question."""

    outcome: GateOutcome
    label: EvidenceLabel | None = None
    support: SupportLevel | None = None
    citation_quality: CitationQuality | None = None
    confidence: float = 0.0

    def __post_init__(self) -> None:
        """Plain strings become the vocabulary (metrics compare members by identity)."""
        for name, kind in (
            ("outcome", GateOutcome),
            ("label", EvidenceLabel),
            ("support", SupportLevel),
            ("citation_quality", CitationQuality),
        ):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, kind(value))

    @classmethod
    def of(cls, record: GateDecisionRecord) -> GateRow:
        return cls(
            record.outcome, record.label, record.support, record.citation_quality, record.confidence
        )


Pair = tuple[int, int]
Contribution = Callable[[GateRow], Pair]


def _label_metrics() -> dict[str, Contribution]:
    def tp(r: GateRow) -> bool:
        return r.label is NO and r.outcome is ABSTAIN

    def tn(r: GateRow) -> bool:
        return r.label is HAS and r.outcome is PASS

    def precision_den(r: GateRow) -> bool:
        return r.label is not None and r.outcome in (ABSTAIN, REFUSE)

    def passed(r: GateRow) -> bool:
        return r.label is not None and r.outcome is PASS

    def fn(r: GateRow) -> bool:
        return r.label is NO and r.outcome is PASS

    return {
        "abstention_accuracy": lambda r: (tp(r) or tn(r), r.label is not None),
        "abstention_precision": lambda r: (tp(r), precision_den(r)),
        "abstention_recall": lambda r: (tp(r), r.label is NO),
        "abstention_f1": lambda r: (2 * tp(r), precision_den(r) + (r.label is NO)),
        "specificity": lambda r: (tn(r), r.label is HAS),
        "false_negative_rate": lambda r: (fn(r), r.label is NO),
        "selective_risk_label": lambda r: (fn(r), passed(r)),
        "selective_accuracy": lambda r: (tn(r), passed(r)),
    }


def _rate_metrics(over_all: bool) -> dict[str, Contribution]:
    """Shares of the questions counted (the labelled ones; all when none is labelled)."""

    def share(outcome: GateOutcome) -> Contribution:
        def pair(r: GateRow) -> Pair:
            counted = over_all or r.label is not None
            return (counted and r.outcome is outcome, counted)

        return pair

    return {
        "coverage": share(PASS),
        "abstention_rate": share(ABSTAIN),
        "refusal_rate": share(REFUSE),
    }


def _support_metrics(alpha: Fraction) -> dict[str, Contribution]:
    scale = alpha.denominator

    def factuality(r: GateRow) -> Pair:
        if r.outcome is not PASS or r.support is None:
            return (0, 0)
        return (int(support_value(r.support, alpha) * scale), scale)

    def annotated(r: GateRow) -> bool:
        return r.outcome is PASS and r.support is not None

    return {
        "factuality": factuality,
        "selective_risk_support": lambda r: (
            annotated(r) and r.support is SupportLevel.NONE,
            annotated(r),
        ),
    }


def _citation_metrics() -> dict[str, Contribution]:
    def share(quality: CitationQuality) -> Contribution:
        return lambda r: (
            r.outcome is PASS and r.citation_quality is quality,
            r.outcome is PASS and r.citation_quality is not None,
        )

    return {f"citation_quality_{q.value.lower()}": share(q) for q in CitationQuality}


GOLD_OF = {
    **dict.fromkeys(_label_metrics(), "label"),
    **dict.fromkeys(("balanced_accuracy", "aurc", "aurc_opt", "e_aurc"), "label"),
    **dict.fromkeys(("factuality", "selective_risk_support"), "support"),
    **dict.fromkeys(("aurc_support", "aurc_opt_support", "e_aurc_support"), "support"),
    **dict.fromkeys(_citation_metrics(), "citation_quality"),
}
"""The gold field each metric needs (absent everywhere: null with `no_gold`)."""


class GateCounts(BaseModel):
    """The confusion counts (labelled questions) and the outcome mix (all questions)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n_questions: int
    n_labelled: int
    n_passed: int
    n_abstained: int
    n_refused: int
    n_refused_labelled: int
    tp: int
    tn: int
    fp: int
    fn: int

    @classmethod
    def of(cls, rows: Sequence[GateRow]) -> GateCounts:
        def count(test: Callable[[GateRow], bool]) -> int:
            return sum(1 for r in rows if test(r))

        return cls(
            n_questions=len(rows),
            n_labelled=count(lambda r: r.label is not None),
            n_passed=count(lambda r: r.outcome is PASS),
            n_abstained=count(lambda r: r.outcome is ABSTAIN),
            n_refused=count(lambda r: r.outcome is REFUSE),
            n_refused_labelled=count(lambda r: r.outcome is REFUSE and r.label is not None),
            tp=count(lambda r: r.outcome is ABSTAIN and r.label is NO),
            tn=count(lambda r: r.outcome is PASS and r.label is HAS),
            fp=count(lambda r: r.outcome is ABSTAIN and r.label is HAS),
            fn=count(lambda r: r.outcome is PASS and r.label is NO),
        )


class BootstrapSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    resamples: int
    random_state: int
    confidence: float
    method: str = CI_METHOD


class GateMetrics(BaseModel):
    """Every gate metric of one policy over one set of questions (`metrics.json`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    counts: GateCounts
    n_refused: int
    alpha: str
    metrics: dict[str, Ratio]
    bootstrap: BootstrapSettings | None = None


def _contributions(rows: Sequence[GateRow], alpha: Fraction) -> dict[str, Contribution]:
    over_all = not any(r.label is not None for r in rows)
    return {
        **_label_metrics(),
        **_rate_metrics(over_all),
        **_support_metrics(alpha),
        **_citation_metrics(),
    }


def _null_reason(name: str, rows: Sequence[GateRow]) -> str:
    gold = GOLD_OF.get(name)
    if rows and gold is not None and all(getattr(r, gold) is None for r in rows):
        return NO_GOLD
    return ZERO_DENOMINATOR


def _from_fraction(value: Fraction | None, name: str, rows: Sequence[GateRow]) -> Ratio:
    if value is None:
        return Ratio(numerator=0, denominator=0, value=None, null_reason=_null_reason(name, rows))
    return Ratio(numerator=value.numerator, denominator=value.denominator, value=float(value))


def _pooled(name: str, pairs: list[Pair], rows: Sequence[GateRow]) -> Ratio:
    numerator = sum(int(n) for n, _ in pairs)
    denominator = sum(int(d) for _, d in pairs)
    result = ratio(numerator, denominator)
    if result.value is None:
        return result.model_copy(update={"null_reason": _null_reason(name, rows)})
    return result


def _derived(metrics: dict[str, Ratio], rows: Sequence[GateRow]) -> dict[str, Ratio]:
    """F1 is null when precision or recall is; balanced accuracy = mean of recall and
    specificity (null when either is)."""
    out = dict(metrics)
    precision, recall = metrics["abstention_precision"], metrics["abstention_recall"]
    if precision.value is None or recall.value is None:
        reason = precision.null_reason or recall.null_reason
        out["abstention_f1"] = Ratio(numerator=0, denominator=0, value=None, null_reason=reason)
    sensitivity, specificity = recall.fraction, metrics["specificity"].fraction
    mean = None
    if sensitivity is not None and specificity is not None:
        mean = (sensitivity + specificity) / 2
    out["balanced_accuracy"] = _from_fraction(mean, "balanced_accuracy", rows)
    return out


def _risk_coverage(rows: Sequence[GateRow]) -> dict[str, Ratio]:
    """AURC, AURC_opt and E_AURC; label errors (`no_evidence`) and support errors
    (`support = 0`, annotated questions); refused questions are left out."""
    decided = [r for r in rows if r.outcome is not REFUSE]
    variants = {
        "": [(r.confidence, r.label is NO) for r in decided if r.label is not None],
        "_support": [
            (r.confidence, r.support is SupportLevel.NONE) for r in decided if r.support is not None
        ],
    }
    out: dict[str, Ratio] = {}
    for suffix, items in variants.items():
        actual, best = aurc(items), aurc_optimal(items)
        excess = None if actual is None or best is None else actual - best
        for name, value in (("aurc", actual), ("aurc_opt", best), ("e_aurc", excess)):
            out[name + suffix] = _from_fraction(value, name + suffix, rows)
    return out


def metric_values(rows: Sequence[GateRow], alpha: Fraction) -> dict[str, Ratio]:
    """Every metric's point value (no intervals): what tuning and sweeps compare."""
    contributions = _contributions(rows, alpha)
    pooled = {
        name: _pooled(name, [share(r) for r in rows], rows) for name, share in contributions.items()
    }
    return {**_derived(pooled, rows), **_risk_coverage(rows)}


def metric_counts(rows: Sequence[GateRow], alpha: Fraction) -> dict[str, RatioCounts]:
    """Each pooled metric's per-question numerators and denominators, in `rows` order:
    what the bootstrap resamples, and what a paired comparison of two gates (same
    questions, same order) hands to `paired_delta_interval`."""
    counts = {}
    for name, share in _contributions(rows, alpha).items():
        pairs = [share(r) for r in rows]
        counts[name] = RatioCounts(
            numerator=[int(n) for n, _ in pairs], denominator=[int(d) for _, d in pairs]
        )
    return counts


def _intervals(
    rows: Sequence[GateRow], alpha: Fraction, settings: BootstrapSettings
) -> dict[str, tuple[tuple[float, float] | None, int]]:
    """Percentile intervals of the pooled and derived metrics, all on one set of
    question resamples (AURC has none: it is a ranking statistic)."""
    values = resampled_all(
        metric_counts(rows, alpha), len(rows), settings.resamples, settings.random_state
    )
    values["abstention_f1"] = np.where(
        np.isnan(values["abstention_precision"]) | np.isnan(values["abstention_recall"]),
        np.nan,
        values["abstention_f1"],
    )
    values["balanced_accuracy"] = (values["abstention_recall"] + values["specificity"]) / 2
    out = {}
    for name, drawn in values.items():
        interval = interval_of(drawn, settings.confidence)
        out[name] = (interval.ci, interval.n_resamples_valid)
    return out


def gate_metrics(
    decisions: Sequence[GateDecisionRecord] | Sequence[GateRow],
    *,
    alpha: str = "0.5",
    resamples: int = 1000,
    random_state: int = 0,
    confidence: float = 0.95,
) -> GateMetrics:
    """Every gate metric, with bootstrap intervals unless `resamples` is 0."""
    rows = [d if isinstance(d, GateRow) else GateRow.of(d) for d in decisions]
    exact_alpha = Fraction(alpha)
    metrics = metric_values(rows, exact_alpha)
    settings = None
    if resamples > 0 and rows:
        settings = BootstrapSettings(
            resamples=resamples, random_state=random_state, confidence=confidence
        )
        for name, (ci, valid) in _intervals(rows, exact_alpha, settings).items():
            if metrics[name].value is not None:
                metrics[name] = metrics[name].model_copy(
                    update={"ci": ci, "ci_method": CI_METHOD, "n_resamples_valid": valid}
                )
    counts = GateCounts.of(rows)
    return GateMetrics(
        counts=counts,
        n_refused=counts.n_refused,
        alpha=alpha,
        metrics=dict(sorted(metrics.items())),
        bootstrap=settings,
    )


__all__ = [
    "GOLD_OF",
    "BootstrapSettings",
    "GateCounts",
    "GateMetrics",
    "GateRow",
    "gate_metrics",
    "metric_counts",
    "metric_values",
]
