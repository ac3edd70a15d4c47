"""Dataset-level factuality of each verifier: macro and micro F, with bootstrap CIs.

macro = mean F(r) over responses with F defined; micro = sum(supported) / sum(scored)
(F(r) as defined in `_response_scores`). The two are never merged.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy as np
from pydantic import Field

from assay.metrics._claim_records import ClaimInput, SentenceInput, VerificationInput
from assay.metrics._claim_universe import ClaimUniverse, ResponseInput, claim_universe
from assay.metrics._metric_rows import (
    BootstrapFields,
    RowsReport,
    VerifierRow,
    estimate_fields,
    safe_div,
)
from assay.metrics._pooling import (
    NO_INTERVAL,
    BootSettings,
    Interval,
    mean_intervals,
    pooled_and_per_dataset,
    stream_seed,
)
from assay.metrics._ratio_bootstrap import ratio_ci
from assay.metrics._response_scores import (
    FACTSCORE_GAMMA,
    LengthPenalty,
    ResponseCounts,
    check_length_penalty,
    length_penalized,
    response_counts,
)

_NO_ESTIMATES = ("macro", "macro_lo", "macro_hi", "micro", "micro_lo", "micro_hi")
"""Fields left None when no response has F defined."""


class FactualityRow(VerifierRow):
    """Dataset-level factuality of one verifier. `macro` and `micro` are never merged."""

    n_responses: int = Field(description="Every response seen in any input.")
    n_responses_scored: int = Field(description="Responses with F defined (>= 1 scored claim).")
    n_zero_claim: int = Field(description="No claims, no failed sentence.")
    zero_claim_rate: float = Field(description="n_zero_claim / n_responses.")
    n_responses_unscored: int = Field(description="Has claims, none scored by this verifier.")
    n_responses_undecomposed: int = Field(description="No claims, >= 1 failed sentence.")
    n_responses_with_failed_sentences: int | None = Field(
        default=None, description="Responses with a failed sentence."
    )
    n_claims: int = Field(description="Claims of every response.")
    n_scored: int = Field(description="Claims this verifier scored.")
    n_unscored: int = Field(description="Claims it did not score (failed or missing).")
    n_supported: int = Field(description="Claims verified supported.")
    n_unsupported: int = Field(description="Claims verified unsupported.")
    n_contradicted: int = Field(description="Claims verified contradicted.")
    n_parse_error: int = Field(description="Claims whose verification ended parse_error.")
    n_refusal: int = Field(description="Claims whose verification ended refusal.")
    n_truncated: int = Field(description="Claims whose verification ended truncated.")
    n_api_error: int = Field(description="Claims whose verification ended api_error.")
    n_missing: int = Field(description="Claims this verifier has no record for.")
    claims_per_response: float | None = Field(description="n_claims / n_responses.")
    n_sentences: int | None = Field(default=None, description="Sentences decomposed, if known.")
    n_sentences_ok: int | None = Field(default=None, description="Sentences decomposed ok.")
    n_sentences_failed: int | None = Field(
        default=None, description="Sentences whose decomposition failed."
    )
    claims_per_sentence: float | None = Field(
        default=None,
        description="n_claims / n_sentences_ok; None without sentences or when some "
        "response's claims could not be mapped to its sentences.",
    )
    macro: float | None = Field(description="Mean of F(r) over responses with F defined.")
    macro_lo: float | None = Field(description="Lower CI bound of macro.")
    macro_hi: float | None = Field(description="Upper CI bound of macro.")
    micro: float | None = Field(description="sum(supported) / sum(scored) over all responses.")
    micro_lo: float | None = Field(description="Lower CI bound of micro.")
    micro_hi: float | None = Field(description="Upper CI bound of micro.")
    macro_length_penalized: float | None = Field(
        default=None, description="Mean of F'(r) (FActScore penalty); None unless requested."
    )
    macro_length_penalized_lo: float | None = Field(
        default=None, description="Lower CI bound of macro_length_penalized."
    )
    macro_length_penalized_hi: float | None = Field(
        default=None, description="Upper CI bound of macro_length_penalized."
    )


class FactualityReport(BootstrapFields, RowsReport[FactualityRow]):
    """One `FactualityRow` per verifier (sorted), plus the settings used."""

    length_penalty: LengthPenalty | None = Field(
        default=None, description="The length penalty applied, if any."
    )
    gamma: float = Field(default=FACTSCORE_GAMMA, description="FActScore's penalty constant.")


def factuality_scores(
    verifications: VerificationInput,
    sentences: SentenceInput | None = None,
    claims: ClaimInput | None = None,
    *,
    responses: ResponseInput | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    length_penalty: LengthPenalty | None = None,
    gamma: float = FACTSCORE_GAMMA,
) -> FactualityReport:
    """Macro and micro factuality per verifier, with seeded percentile bootstrap CIs.

    macro = mean F(r) over responses with F defined; micro = sum(supported) / sum(scored).
    Both CIs resample responses (those with >= 1 scored claim; the others add nothing to
    either sum) with the same draws; micro is recomputed as a ratio of sums per resample.
    Each verifier has its own random stream derived from `seed` and its id.

    `length_penalty="factscore"` adds `macro_length_penalized`: the mean of
    F'(r) = F(r) * exp(1 - gamma / n_claims(r)) for n_claims(r) < gamma (else F(r)), over
    the same responses. Pass `sentences` to count 0-claim responses and sentence failures,
    `claims` to count claims no verifier has a record for, `responses` for answers with no
    records at all.
    """
    boot = BootSettings(n_boot, seed, confidence)
    check_length_penalty(length_penalty, gamma)
    u = claim_universe(verifications, sentences, claims, responses)
    rows = [
        _factuality_row(part, vid, name, boot, length_penalty, gamma)
        for name, part in pooled_and_per_dataset(u, u.datasets(), ClaimUniverse.subset)
        for vid in sorted(u.verdicts)
    ]
    return FactualityReport(rows=rows, **asdict(boot), length_penalty=length_penalty, gamma=gamma)


def _factuality_row(
    u: ClaimUniverse,
    vid: str,
    dataset: str,
    boot: BootSettings,
    length_penalty: str | None,
    gamma: float,
) -> FactualityRow:
    t = response_counts(u, vid)
    stream = stream_seed(boot.seed, vid, "factuality", "responses", dataset)
    return FactualityRow(
        verifier_id=vid,
        **u.meta[vid].row_fields(),
        dataset=dataset,
        **_response_fields(t),
        **_sentence_fields(u, t),
        **_factuality_estimates(t, boot, stream, length_penalty, gamma),
    )


def _response_fields(t: ResponseCounts) -> dict[str, Any]:
    """Responses by category, and claims by verdict label and unscored status."""
    cat = t.categories()
    n_responses = len(cat)
    n_claims = int(t.n_claims.sum())
    n_scored = int(t.n_scored.sum())
    n_zero = int((cat == "zero_claim").sum())
    return {
        "n_responses": n_responses,
        "n_responses_scored": int((t.n_scored > 0).sum()),
        "n_zero_claim": n_zero,
        "zero_claim_rate": n_zero / n_responses if n_responses else 0.0,
        "n_responses_unscored": int((cat == "unscored").sum()),
        "n_responses_undecomposed": int((cat == "undecomposed").sum()),
        "n_claims": n_claims,
        "n_scored": n_scored,
        "n_unscored": n_claims - n_scored,
        **t.totals(),
        "claims_per_response": safe_div(n_claims, n_responses),
    }


def _sentence_fields(u: ClaimUniverse, t: ResponseCounts) -> dict[str, Any]:
    """Sentence counts; none (the row's defaults) when no sentences were given."""
    if not u.has_sentences:
        return {}
    n_sentences = int(t.n_sentences.sum())
    n_failed = int(t.n_sentences_failed.sum())
    n_ok = n_sentences - n_failed
    mapped = not any(rk in u.unsplit for rk in u.responses)
    return {
        "n_responses_with_failed_sentences": int((t.n_sentences_failed > 0).sum()),
        "n_sentences": n_sentences,
        "n_sentences_ok": n_ok,
        "n_sentences_failed": n_failed,
        "claims_per_sentence": safe_div(int(t.n_claims.sum()), n_ok) if mapped else None,
    }


def _factuality_estimates(
    t: ResponseCounts,
    boot: BootSettings,
    stream: list[int],
    length_penalty: str | None,
    gamma: float,
) -> dict[str, Any]:
    """macro, micro (and the length-penalised macro) with their CIs, from one resampling
    of the responses whose F is defined."""
    f = t.factuality()
    defined = ~np.isnan(f)
    if not defined.any():
        return dict.fromkeys(_NO_ESTIMATES)
    columns = [f[defined]]
    if length_penalty is not None:
        columns.append(length_penalized(f, t.n_claims, gamma=gamma)[defined])
    sample = np.column_stack(columns)
    means = sample.mean(axis=0)
    intervals = mean_intervals(sample, boot, stream)
    micro_ci: Interval = NO_INTERVAL
    if boot.n_boot > 0:
        micro_ci = ratio_ci(
            t.n_supported[defined],
            t.n_scored[defined],
            n_boot=boot.n_boot,
            seed=stream,
            confidence=boot.confidence,
        )
    fields = {
        **estimate_fields("macro", float(means[0]), intervals[0]),
        **estimate_fields("micro", int(t.n_supported.sum()) / int(t.n_scored.sum()), micro_ci),
    }
    if length_penalty is not None:
        fields.update(estimate_fields("macro_length_penalized", float(means[1]), intervals[1]))
    return fields
