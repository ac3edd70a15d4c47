"""How well a verifier's per-response factuality ranks responses like gold factuality does.

Spearman's rho between F(r) (or F'(r)) and gold factuality, over the responses where both
are defined, with a bootstrap CI from resampled response pairs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict
from typing import Literal, TypeAlias

import numpy as np
from numpy.typing import NDArray
from pydantic import Field

from assay.metrics._claim_records import (
    SUPPORTED,
    ClaimInput,
    ResponseKey,
    SentenceInput,
    VerificationInput,
)
from assay.metrics._claim_universe import ClaimUniverse, claim_universe
from assay.metrics._gold_agreement import positive_labels
from assay.metrics._metric_rows import RowsReport, VerifierRow
from assay.metrics._pooling import BootSettings, pooled_and_per_dataset, stream_seed
from assay.metrics._rank_correlation import spearman, spearman_ci
from assay.metrics._record_fields import is_missing
from assay.metrics._response_scores import (
    FACTSCORE_GAMMA,
    LengthPenalty,
    check_length_penalty,
    predicted_factuality,
    response_counts,
)

GoldFactuality: TypeAlias = Mapping[str, float] | Mapping[tuple[str, str], float]
"""Gold factuality by answer_id, or by (dataset, answer_id)."""


class CorrelationRow(VerifierRow):
    """Spearman's rho between a verifier's F(r) and gold factuality, over responses."""

    n: int = Field(description="Responses with both predicted and gold factuality defined.")
    n_predicted: int = Field(description="Responses with predicted factuality defined.")
    n_gold: int = Field(description="Responses with gold factuality defined.")
    spearman: float | None = Field(description="None when n < 2 or a side is constant.")
    spearman_lo: float | None = Field(description="Lower CI bound of spearman.")
    spearman_hi: float | None = Field(description="Upper CI bound of spearman.")
    n_boot_degenerate: int = Field(
        description="Resamples with a constant side (no rho), left out of the CI."
    )


class CorrelationReport(RowsReport[CorrelationRow]):
    """One `CorrelationRow` per verifier (sorted), the gold used, and the settings."""

    gold_source: Literal["given", "claims"] = Field(
        description="given: the dataset's; claims: from gold claim labels."
    )
    predicted: Literal["factuality", "factuality_length_penalized"] = Field(
        description="Which F(r) is correlated: plain or length-penalized."
    )
    n_boot: int = Field(description="Bootstrap resamples behind the CIs (0: no CI).")
    seed: int = Field(description="Seed of the resampling.")
    confidence: float = Field(description="Confidence level of the CIs.")


def factuality_correlation(
    verifications: VerificationInput,
    gold_factuality: GoldFactuality | None = None,
    *,
    sentences: SentenceInput | None = None,
    claims: ClaimInput | None = None,
    positive: str | Iterable[str] = (SUPPORTED,),
    length_penalty: LengthPenalty | None = None,
    gamma: float = FACTSCORE_GAMMA,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> CorrelationReport:
    """Spearman's rho (average ranks for ties) between F(r) and gold factuality per verifier.

    Gold factuality is `gold_factuality[answer_id]` (or `[(dataset, answer_id)]`), or, when
    not given, the fraction of a response's gold-labelled claims whose label is in
    `positive`. Only responses where both are defined count. The CI is a percentile
    bootstrap over those responses (pairs resampled, ranks recomputed per resample).
    With `length_penalty="factscore"` the predicted value is F'(r) instead of F(r).
    """
    boot = BootSettings(n_boot, seed, confidence)
    check_length_penalty(length_penalty, gamma)
    pos = positive_labels(positive)
    u = claim_universe(verifications, sentences, claims, with_gold=gold_factuality is None)
    rows: list[CorrelationRow] = []
    for name, part in pooled_and_per_dataset(u, u.datasets(), ClaimUniverse.subset):
        gold = _gold_of_responses(part, gold_factuality, pos)
        for vid in sorted(u.verdicts):
            pred = predicted_factuality(response_counts(part, vid), length_penalty, gamma)
            rows.append(_correlation_row(part, vid, name, pred, gold, boot))
    return CorrelationReport(
        rows=rows,
        gold_source="claims" if gold_factuality is None else "given",
        predicted="factuality" if length_penalty is None else "factuality_length_penalized",
        **asdict(boot),
    )


def _gold_of_responses(
    u: ClaimUniverse, given: GoldFactuality | None, pos: frozenset[str]
) -> NDArray[np.float64]:
    """Gold factuality per response of `u` (NaN where unknown): given, or from claim labels."""
    gold = _claims_gold(u, pos) if given is None else _given_gold(u, given)
    if not np.isfinite(gold[~np.isnan(gold)]).all():
        raise ValueError("gold factuality contains infinite values")
    return gold


def _given_gold(u: ClaimUniverse, gold: GoldFactuality) -> NDArray[np.float64]:
    by_answer: dict[str, list[ResponseKey]] = {}
    for rk in u.responses:
        by_answer.setdefault(rk[1], []).append(rk)
    values = {rk: np.nan for rk in u.responses}
    for key, value in gold.items():
        if isinstance(key, tuple):
            targets = [key] if key in values else []
        else:
            targets = by_answer.get(str(key), [])
            if len(targets) > 1:
                raise ValueError(
                    f"answer_id {key!r} occurs in several datasets "
                    f"{sorted(d for d, _ in targets)}; key gold_factuality by (dataset, answer_id)"
                )
        for rk in targets:
            values[rk] = np.nan if is_missing(value) else float(value)
    return np.array([values[rk] for rk in u.responses], dtype=np.float64)


def _claims_gold(u: ClaimUniverse, pos: frozenset[str]) -> NDArray[np.float64]:
    total: dict[ResponseKey, int] = {}
    good: dict[ResponseKey, int] = {}
    for ck, label in u.gold.items():
        rk = (ck[0], ck[1])
        total[rk] = total.get(rk, 0) + 1
        good[rk] = good.get(rk, 0) + int(label in pos)
    return np.array(
        [good[rk] / total[rk] if rk in total else np.nan for rk in u.responses], dtype=np.float64
    )


def _correlation_row(
    u: ClaimUniverse,
    vid: str,
    dataset: str,
    pred: NDArray[np.float64],
    gold: NDArray[np.float64],
    boot: BootSettings,
) -> CorrelationRow:
    both = ~np.isnan(pred) & ~np.isnan(gold)
    x, y = pred[both], gold[both]
    rho = spearman(x, y)
    ci: tuple[float, float] | None = None
    degenerate = 0
    if rho is not None and boot.n_boot > 0:
        stream = stream_seed(boot.seed, vid, "factuality", "spearman", dataset)
        ci, degenerate = spearman_ci(x, y, boot.n_boot, stream, boot.confidence)
    return CorrelationRow(
        verifier_id=vid,
        **u.meta[vid].row_fields(),
        dataset=dataset,
        n=int(both.sum()),
        n_predicted=int((~np.isnan(pred)).sum()),
        n_gold=int((~np.isnan(gold)).sum()),
        spearman=rho,
        spearman_lo=None if ci is None else ci[0],
        spearman_hi=None if ci is None else ci[1],
        n_boot_degenerate=degenerate,
    )
