"""Metrics of claim-selective decisions: both UCCR variants with Wilson intervals,
PAU, PAU precision, F1 from counts, critical coverage and risk, action accuracy with its
5x4 confusion, `n_refused`; bootstrap intervals and paired deltas.

Every metric is pooled over all claims of all responses (micro) from integer counts, so
F1 is never the harmonic mean of rounded parts, tuning compares exact fractions, and a
bootstrap resample recomputes each metric from the resampled responses' counts. Gold-
dependent metrics read only claims that carry a gold label; with none at all they are
null with `null_reason = "no_gold"`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from assay.core.answer_fields import GOLD_ACTIONS
from assay.metrics._ratio_bootstrap import CI_METHOD, Interval, RatioCounts, bootstrap_intervals
from assay.policies.claim_selective._config import CertificateStandard
from assay.policies.claim_selective._records import (
    ClaimSelectiveClaimRecord,
    ClaimSelectiveResponseRecord,
    Decisions,
)
from assay.policies.claim_selective._rule import certificate_valid
from assay.policies.engine._numbers import Ratio, no_gold, ratio, wilson

METRIC_NAMES = (
    "pau",
    "pau_precision",
    "f1",
    "uccr_gold",
    "uccr_cert",
    "critical_coverage",
    "critical_risk",
    "action_accuracy",
)
UCCR = ("uccr_gold", "uccr_cert")
PREDICTED_ACTIONS = ("full", "partial", "conflict", "abstain", "refuse")
_GOLD_CLAIM_METRICS = frozenset(METRIC_NAMES) - {"uccr_cert", "action_accuracy"}


class ClaimCounts(BaseModel):
    """The integer counts behind every metric; responses' counts add up to the pool's.
    𝒫 expressed, 𝒢 gold-usable, 𝒦 critical; `*_gold` counts only gold-labelled claims."""

    model_config = ConfigDict(frozen=True)

    responses: int = 0
    refused: int = 0
    claims: int = 0
    labelled: int = Field(default=0, description="Claims with a gold label.")
    usable: int = Field(default=0, description="|𝒢|")
    expressed_gold: int = Field(default=0, description="|𝒫| among labelled claims")
    expressed_usable: int = Field(default=0, description="|𝒫 ∩ 𝒢|")
    gold_critical: int = Field(default=0, description="|𝒦| among labelled claims")
    expressed_critical_gold: int = Field(default=0, description="|𝒫 ∩ 𝒦| among labelled")
    expressed_critical_unusable: int = Field(default=0, description="|𝒫 ∩ 𝒦 \\ 𝒢|")
    expressed_critical: int = Field(default=0, description="|𝒫 ∩ 𝒦|, labelled or not")
    expressed_critical_invalid: int = Field(default=0, description="... with invalid certificate")
    with_gold_action: int = 0
    action_correct: int = 0

    def __add__(self, other: ClaimCounts) -> ClaimCounts:
        mine, theirs = self.model_dump(), other.model_dump()
        return ClaimCounts(**{k: v + theirs[k] for k, v in mine.items()})


def total(counts: Iterable[ClaimCounts]) -> ClaimCounts:
    out = ClaimCounts()
    for c in counts:
        out = out + c
    return out


ClaimFacts = tuple[bool, bool, bool | None, bool | None]
"""(expressed, critical, gold_usable or None when unlabelled, certificate valid)."""


def response_counts(
    claims: Sequence[ClaimFacts], action: str, gold_action: str | None
) -> ClaimCounts:
    """One response's counts from its claims' facts and its action."""
    c: dict[str, int] = dict.fromkeys(ClaimCounts.model_fields, 0)
    c["responses"], c["refused"], c["claims"] = 1, int(action == "refuse"), len(claims)
    for expressed, critical, usable, valid in claims:
        if expressed and critical:
            c["expressed_critical"] += 1
            c["expressed_critical_invalid"] += int(valid is not True)
        if usable is None:
            continue
        c["labelled"] += 1
        c["usable"] += int(usable)
        c["gold_critical"] += int(critical)
        if expressed:
            c["expressed_gold"] += 1
            c["expressed_usable"] += int(usable)
            c["expressed_critical_gold"] += int(critical)
            c["expressed_critical_unusable"] += int(critical and not usable)
    if gold_action is not None:
        c["with_gold_action"] = 1
        c["action_correct"] = int(action == gold_action)  # refuse never matches
    return ClaimCounts(**c)


def record_valid(record: ClaimSelectiveClaimRecord, standard: CertificateStandard) -> bool | None:
    """A claim record's certificate validity under `standard`."""
    return certificate_valid(
        record.native,
        record.verification_ok,
        [link.s_support for link in record.links],
        record.pooled.s_conflict if record.pooled else None,
        standard,
    )


def counts_by_response(
    decisions: Decisions, standard: CertificateStandard | None = None
) -> list[ClaimCounts]:
    """Each response's counts, in the order of `decisions.responses`."""
    standard = standard or CertificateStandard()
    claims: dict[tuple[str, str], list[ClaimSelectiveClaimRecord]] = defaultdict(list)
    for claim in decisions.claims:
        claims[(claim.dataset, claim.answer_id)].append(claim)
    return [
        response_counts(
            [
                (c.expressed, c.critical, c.gold_usable, record_valid(c, standard))
                for c in claims.get(r.key, [])
            ],
            r.native,
            r.gold_action,
        )
        for r in decisions.responses
    ]


def ratio_parts(c: ClaimCounts) -> dict[str, tuple[int, int]]:
    """(numerator, denominator) of every metric; F1 = 2|𝒫∩𝒢| / (|𝒫| + |𝒢|)."""
    return {
        "pau": (c.expressed_usable, c.usable),
        "pau_precision": (c.expressed_usable, c.expressed_gold),
        "f1": (2 * c.expressed_usable, c.expressed_gold + c.usable),
        "uccr_gold": (c.expressed_critical_unusable, c.expressed_critical_gold),
        "uccr_cert": (c.expressed_critical_invalid, c.expressed_critical),
        "critical_coverage": (c.expressed_critical_gold, c.gold_critical),
        "critical_risk": (c.expressed_critical_unusable, c.expressed_critical_gold),
        "action_accuracy": (c.action_correct, c.with_gold_action),
    }


def _lacks_gold(name: str, c: ClaimCounts) -> bool:
    if name == "action_accuracy":
        return c.responses > 0 and c.with_gold_action == 0
    if name == "uccr_gold":  # 0.0 by definition while nothing critical is expressed
        return c.labelled == 0 and c.expressed_critical > 0
    return name in _GOLD_CLAIM_METRICS and c.claims > 0 and c.labelled == 0


def claim_metrics(c: ClaimCounts) -> dict[str, Ratio]:
    """Every claim-selective metric from pooled counts; UCCR variants with their Wilson 95%."""
    out: dict[str, Ratio] = {}
    for name, (num, den) in ratio_parts(c).items():
        if _lacks_gold(name, c):
            out[name] = no_gold()
        elif name in UCCR:
            point = ratio(num, den, when_zero=0.0)
            ci = wilson(num, den)
            out[name] = point.model_copy(
                update={"ci": ci, "ci_method": "wilson" if ci is not None else None}
            )
        else:
            out[name] = ratio(num, den)
    return out


def confusion(pairs: Iterable[tuple[str, str | None]]) -> dict[str, dict[str, int]]:
    """Predicted (full, partial, conflict, abstain, refuse) x gold action counts of
    (predicted, gold) pairs; pairs without gold are left out."""
    table: dict[str, dict[str, int]] = {
        p: dict.fromkeys(GOLD_ACTIONS, 0) for p in PREDICTED_ACTIONS
    }
    for predicted, gold in pairs:
        if gold is not None:
            table[predicted][gold] += 1
    return table


class ClaimSelectiveMetrics(BaseModel):
    """`metrics.json` of one policy (or one slice of it)."""

    model_config = ConfigDict(frozen=True)

    pau: Ratio
    pau_precision: Ratio
    f1: Ratio
    uccr_gold: Ratio
    uccr_cert: Ratio
    critical_coverage: Ratio
    critical_risk: Ratio
    action_accuracy: Ratio
    confusion: dict[str, dict[str, int]]
    counts: ClaimCounts
    n_responses: int
    n_claims: int
    n_refused: int
    certificate_standard: dict[str, str]
    bootstrap: dict[str, float | int | str] | None = None
    uccr_bootstrap: dict[str, Interval] | None = Field(
        default=None,
        description="Percentile intervals of the UCCR variants (they collapse at 0, which is "
        "why their `ci` is Wilson's).",
    )

    def ratios(self) -> dict[str, Ratio]:
        return {name: getattr(self, name) for name in METRIC_NAMES}


def _with_bootstrap(
    point: dict[str, Ratio],
    per_response: Sequence[ClaimCounts],
    resamples: int,
    random_state: int,
    confidence: float,
) -> tuple[dict[str, Ratio], dict[str, Interval]]:
    parts = [ratio_parts(c) for c in per_response]
    chosen = [n for n in METRIC_NAMES if point[n].null_reason != "no_gold"]
    series = {
        n: RatioCounts(
            numerator=[p[n][0] for p in parts],
            denominator=[p[n][1] for p in parts],
            when_zero=0.0 if n in UCCR else None,
        )
        for n in chosen
    }
    intervals = bootstrap_intervals(
        series, resamples=resamples, random_state=random_state, confidence=confidence
    )
    out = dict(point)
    for name, interval in intervals.items():
        if name in UCCR:
            continue
        out[name] = point[name].model_copy(
            update={
                "ci": interval.ci,
                "ci_method": CI_METHOD,
                "n_resamples_valid": interval.n_resamples_valid,
            }
        )
    return out, {n: intervals[n] for n in UCCR if n in intervals}


def metrics_of(
    responses: Sequence[ClaimSelectiveResponseRecord],
    per_response: Sequence[ClaimCounts],
    standard: CertificateStandard,
    *,
    resamples: int = 0,
    random_state: int = 0,
    confidence: float = 0.95,
) -> ClaimSelectiveMetrics:
    """Metrics of these responses (their counts given in the same order)."""
    pooled = total(per_response)
    point = claim_metrics(pooled)
    settings: dict[str, float | int | str] | None = None
    uccr_intervals: dict[str, Interval] | None = None
    if resamples > 0:
        point, uccr_intervals = _with_bootstrap(
            point, per_response, resamples, random_state, confidence
        )
        settings = {
            "resamples": resamples,
            "random_state": random_state,
            "confidence": confidence,
            "method": CI_METHOD,
            "generator": "numpy PCG64",
        }
    return ClaimSelectiveMetrics(
        **point,
        confusion=confusion((r.native, r.gold_action) for r in responses),
        counts=pooled,
        n_responses=pooled.responses,
        n_claims=pooled.claims,
        n_refused=pooled.refused,
        certificate_standard=standard.model_dump(),
        bootstrap=settings,
        uccr_bootstrap=uccr_intervals,
    )


def evaluate(
    decisions: Decisions,
    *,
    standard: CertificateStandard | None = None,
    resamples: int = 0,
    random_state: int = 0,
    confidence: float = 0.95,
) -> ClaimSelectiveMetrics:
    """Every claim-selective metric over `decisions`, under one certificate standard (default: the
    configuration's); with `resamples`, bootstrap intervals for the non-UCCR metrics."""
    standard = standard or CertificateStandard()
    return metrics_of(
        decisions.responses,
        counts_by_response(decisions, standard),
        standard,
        resamples=resamples,
        random_state=random_state,
        confidence=confidence,
    )


__all__ = [
    "METRIC_NAMES",
    "PREDICTED_ACTIONS",
    "ClaimCounts",
    "ClaimFacts",
    "ClaimSelectiveMetrics",
    "claim_metrics",
    "confusion",
    "counts_by_response",
    "evaluate",
    "metrics_of",
    "ratio_parts",
    "record_valid",
    "response_counts",
    "total",
]
