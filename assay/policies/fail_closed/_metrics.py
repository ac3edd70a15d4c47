"""Metrics of fail-closed rendering, pooled over every claim of every answer.

Gold claim labels are `supported | unsupported | contradicted`; "hallucinated" means not
supported. Displayed(strict) = VERIFIED, displayed(mixed) = VERIFIED and UNVERIFIED.
Gold-dependent metrics use the claims that have a gold label (their denominators say
how many); with no gold label anywhere they are null with `no_gold`. A claim whose
inputs failed (a failed verification, a refusing gate) is never counted as caught, and a refused
answer counts as an empty strict rendering. Intervals: the response bootstrap
on the pooled counts. Definitions: docs/reference/policies/fail-closed.md#metrics.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import BaseModel

from assay.core.decisions import ResponseOutcome
from assay.metrics._ratio_bootstrap import CI_METHOD, RatioCounts, bootstrap_intervals
from assay.policies.engine._numbers import Ratio, no_gold, ratio
from assay.policies.fail_closed._records import (
    INPUT_FAILED,
    Decision,
    FailClosedClaimRecord,
    RenderState,
)

_Count = Callable[[Decision], tuple[int, int]]


def _claims(test: Callable[[FailClosedClaimRecord], bool]) -> Callable[[Decision], int]:
    return lambda d: sum(1 for c in d.claims if test(c))


def _verified(c: FailClosedClaimRecord) -> bool:
    return c.native is RenderState.VERIFIED


def _mixed(c: FailClosedClaimRecord) -> bool:
    return c.native is not RenderState.BLOCKED


def _pair(
    num: Callable[[FailClosedClaimRecord], bool], den: Callable[[FailClosedClaimRecord], bool]
) -> _Count:
    n, d = _claims(lambda c: den(c) and num(c)), _claims(den)
    return lambda decision: (n(decision), d(decision))


def _gold(c: FailClosedClaimRecord) -> bool:
    return c.gold is not None


def _supported(c: FailClosedClaimRecord) -> bool:
    return c.gold == "supported"


def _hallucinated(c: FailClosedClaimRecord) -> bool:
    return c.gold is not None and c.gold != "supported"


def _contradicted(c: FailClosedClaimRecord) -> bool:
    return c.gold == "contradicted"


def _caught(c: FailClosedClaimRecord) -> bool:
    return not _verified(c) and c.reason not in INPUT_FAILED


GOLD_METRICS: dict[str, _Count] = {
    "vcp": _pair(_supported, lambda c: _verified(c) and _gold(c)),
    "vc": _pair(_verified, _supported),
    "uer@strict": _pair(_hallucinated, lambda c: _verified(c) and _gold(c)),
    "uer@mixed": _pair(_hallucinated, lambda c: _mixed(c) and _gold(c)),
    "cer@strict": _pair(_contradicted, lambda c: _verified(c) and _gold(c)),
    "cer@mixed": _pair(_contradicted, lambda c: _mixed(c) and _gold(c)),
    "catch_rate": _pair(_caught, _hallucinated),
}
PLAIN_METRICS: dict[str, _Count] = {
    "blocked_rate": _pair(lambda c: c.native is RenderState.BLOCKED, lambda c: True),
    "verified_rate": _pair(_verified, lambda c: True),
    "empty_strict_rate": lambda d: (int(d.response.rendered.empty), 1),
}
METRIC_NAMES = tuple(GOLD_METRICS) + tuple(PLAIN_METRICS)


class FailClosedMetrics(BaseModel):
    """Every fail-closed metric as an exact ratio, and the counts beside them."""

    metrics: dict[str, Ratio]
    n_responses: int
    n_claims: int
    n_gold: int
    n_refused: int


def metric_counts(decisions: Sequence[Decision]) -> dict[str, RatioCounts]:
    """Each metric's per-response numerator and denominator (what the bootstrap resamples)."""
    out: dict[str, RatioCounts] = {}
    for name, count in {**GOLD_METRICS, **PLAIN_METRICS}.items():
        pairs = [count(d) for d in decisions]
        out[name] = RatioCounts(numerator=[n for n, _ in pairs], denominator=[d for _, d in pairs])
    return out


def fail_closed_metrics(
    decisions: Sequence[Decision],
    *,
    resamples: int = 0,
    random_state: int = 0,
    confidence: float = 0.95,
) -> FailClosedMetrics:
    """The metrics of decided answers; with `resamples` > 0, bootstrap intervals too."""
    counts = metric_counts(decisions)
    has_gold = any(c.gold is not None for d in decisions for c in d.claims)
    intervals = (
        bootstrap_intervals(
            counts, resamples=resamples, random_state=random_state, confidence=confidence
        )
        if resamples > 0
        else {}
    )
    metrics: dict[str, Ratio] = {}
    for name, each in counts.items():
        if name in GOLD_METRICS and not has_gold:
            metrics[name] = no_gold()
            continue
        value = ratio(sum(each.numerator), sum(each.denominator))
        if name in intervals and value.value is not None:
            interval = intervals[name]
            value = value.model_copy(
                update={
                    "ci": interval.ci,
                    "ci_method": CI_METHOD,
                    "n_resamples_valid": interval.n_resamples_valid,
                }
            )
        metrics[name] = value
    return FailClosedMetrics(
        metrics=metrics,
        n_responses=len(decisions),
        n_claims=sum(len(d.claims) for d in decisions),
        n_gold=sum(1 for d in decisions for c in d.claims if c.gold is not None),
        n_refused=sum(d.response.outcome is ResponseOutcome.REFUSE for d in decisions),
    )


class SystemMetrics(BaseModel):
    """Cost figures, recorded beside the outputs, never part of them."""

    pairs_per_question_mean: float | None
    pairs_per_question_max: int | None
    certificate_bytes_mean: float | None
    certificate_bytes_max: int | None


def system_metrics(
    decisions: Sequence[Decision], certificate_lines: Sequence[str]
) -> SystemMetrics:
    """Pairs used per question and certificate sizes (UTF-8 bytes of each line)."""
    pairs = [d.response.n_pairs_used for d in decisions]
    sizes = [len(line.encode("utf-8")) for line in certificate_lines]
    return SystemMetrics(
        pairs_per_question_mean=sum(pairs) / len(pairs) if pairs else None,
        pairs_per_question_max=max(pairs, default=None),
        certificate_bytes_mean=sum(sizes) / len(sizes) if sizes else None,
        certificate_bytes_max=max(sizes, default=None),
    )


__all__ = [
    "METRIC_NAMES",
    "FailClosedMetrics",
    "SystemMetrics",
    "fail_closed_metrics",
    "metric_counts",
    "system_metrics",
]
