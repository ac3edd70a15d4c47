"""Per-response factuality F(r) of one verifier, and the per-response table.

For a verifier v and a response r (definitions in docs/explanations/factuality-metrics.md)::

    scored(r)    = claims of r whose verification by v has status ok
    unscored(r)  = every other claim of r (parse_error, refusal, truncated, api_error,
                   or no verification by v at all: "missing")
    supported(r) = scored claims labelled "supported" (unsupported/contradicted are not)
    F(r)         = supported(r) / scored(r), undefined (None / NaN) when scored(r) == 0

An unscored claim is never read as supported and never enters a denominator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from assay.metrics._claim_records import (
    MISSING,
    OK,
    UNSCORED_STATUSES,
    VERDICT_LABELS,
    ClaimInput,
    SentenceInput,
    VerificationInput,
)
from assay.metrics._claim_universe import ClaimUniverse, ResponseInput, claim_universe

LengthPenalty = Literal["factscore"]
Category = Literal["scored", "unscored", "zero_claim", "undecomposed"]
FACTSCORE_GAMMA = 10

COUNT_FIELDS = (
    "n_supported",
    "n_unsupported",
    "n_contradicted",
    "n_parse_error",
    "n_refusal",
    "n_truncated",
    "n_api_error",
    "n_missing",
)
"""Claims of a response by verdict label, then by unscored status."""
_SLOT = {k: i for i, k in enumerate((*VERDICT_LABELS, *UNSCORED_STATUSES))}

RESPONSE_COLUMNS = [
    "verifier_id",
    "dataset",
    "answer_id",
    "category",
    "zero_claim",
    "n_sentences",
    "n_sentences_failed",
    "n_claims",
    "n_scored",
    "n_unscored",
    *COUNT_FIELDS,
    "factuality",
]
"""Columns of `response_table`; `factuality_length_penalized` follows when requested."""


@dataclass(slots=True)
class ResponseCounts:
    """Per-response arrays for one verifier, responses in `ClaimUniverse.responses` order."""

    counts: NDArray[np.int64]  # (R, 8): columns as COUNT_FIELDS
    n_claims: NDArray[np.int64]
    n_sentences: NDArray[np.int64]
    n_sentences_failed: NDArray[np.int64]

    @property
    def n_supported(self) -> NDArray[np.int64]:
        return self.counts[:, 0]

    @property
    def n_scored(self) -> NDArray[np.int64]:
        scored: NDArray[np.int64] = self.counts[:, :3].sum(axis=1)
        return scored

    def factuality(self) -> NDArray[np.float64]:
        """F(r) = supported / scored; NaN where scored == 0."""
        scored = self.n_scored.astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            f: NDArray[np.float64] = np.where(scored > 0, self.n_supported / scored, np.nan)
        return f

    def categories(self) -> NDArray[np.object_]:
        cat = np.full(len(self.n_claims), "scored", dtype=object)
        no_claims = self.n_claims == 0
        cat[no_claims & (self.n_sentences_failed == 0)] = "zero_claim"
        cat[no_claims & (self.n_sentences_failed > 0)] = "undecomposed"
        cat[~no_claims & (self.n_scored == 0)] = "unscored"
        return cat

    def totals(self) -> dict[str, int]:
        """Each of `COUNT_FIELDS` summed over the responses."""
        return {name: int(self.counts[:, j].sum()) for j, name in enumerate(COUNT_FIELDS)}


def response_counts(u: ClaimUniverse, verifier_id: str) -> ResponseCounts:
    per_claim = u.verdicts.get(verifier_id, {})
    counts = np.zeros((len(u.responses), len(COUNT_FIELDS)), dtype=np.int64)
    missing = _SLOT[MISSING]
    for i, rk in enumerate(u.responses):
        row = counts[i]
        for ck in u.claims.get(rk, ()):
            v = per_claim.get(ck)
            if v is None:
                row[missing] += 1
            elif v.status == OK and v.label is not None:
                row[_SLOT[v.label]] += 1
            else:
                row[_SLOT[v.status]] += 1
        row[missing] += u.n_unrecorded.get(rk, 0)
    n_sent = np.array([u.n_sentences.get(rk, 0) for rk in u.responses], dtype=np.int64)
    n_failed = np.array([u.n_sentences_failed.get(rk, 0) for rk in u.responses], dtype=np.int64)
    return ResponseCounts(
        counts=counts, n_claims=counts.sum(axis=1), n_sentences=n_sent, n_sentences_failed=n_failed
    )


def check_length_penalty(length_penalty: str | None, gamma: float) -> None:
    if length_penalty not in (None, "factscore"):
        raise ValueError(f"length_penalty must be None or 'factscore', got {length_penalty!r}")
    if isinstance(gamma, bool) or not isinstance(gamma, int | float) or not gamma > 0:
        raise ValueError(f"gamma must be a positive number, got {gamma!r}")


def length_penalized(
    factuality: ArrayLike, n_claims: ArrayLike, *, gamma: float = FACTSCORE_GAMMA
) -> NDArray[np.float64]:
    """FActScore's length penalty: F'(r) = F(r) * exp(1 - gamma / n_claims) if n_claims < gamma.

    `n_claims` is the response's decomposition count (scored or not). F'(r) is NaN where
    F(r) is NaN or `n_claims == 0`; equal to F(r) when `n_claims >= gamma`.
    """
    f = np.asarray(factuality, dtype=np.float64)
    n = np.asarray(n_claims, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(n < gamma, np.exp(1.0 - gamma / n), 1.0)
    out: NDArray[np.float64] = np.where(n > 0, f * factor, np.nan)
    return out


def predicted_factuality(
    t: ResponseCounts, length_penalty: str | None, gamma: float
) -> NDArray[np.float64]:
    """F(r), or F'(r) with the FActScore length penalty."""
    f = t.factuality()
    return f if length_penalty is None else length_penalized(f, t.n_claims, gamma=gamma)


def response_table(
    verifications: VerificationInput,
    sentences: SentenceInput | None = None,
    claims: ClaimInput | None = None,
    *,
    responses: ResponseInput | None = None,
    length_penalty: LengthPenalty | None = None,
    gamma: float = FACTSCORE_GAMMA,
) -> pd.DataFrame:
    """One row per verifier x response, sorted by (verifier_id, dataset, answer_id).

    Columns (`RESPONSE_COLUMNS`): verifier_id, dataset, answer_id; `category`: "scored"
    (F defined), "unscored" (claims, none scored), "zero_claim" (no claims and no failed
    sentence), "undecomposed" (no claims, a sentence failed); `zero_claim` (bool);
    n_sentences / n_sentences_failed (nullable Int64, NA without `sentences`); n_claims,
    n_scored, n_unscored and the counts by label and by unscored status; `factuality`
    (NaN where undefined). With `length_penalty="factscore"` a further column
    `factuality_length_penalized` holds F'(r).

    `responses` optionally lists (dataset, answer_id) pairs to include even with no
    records at all (an answer with no sentences is a 0-claim response).
    """
    check_length_penalty(length_penalty, gamma)
    u = claim_universe(verifications, sentences, claims, responses)
    columns = list(RESPONSE_COLUMNS)
    if length_penalty is not None:
        columns.append("factuality_length_penalized")
    if not u.verdicts:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns}, columns=columns)
    frames = [
        pd.DataFrame(_response_columns(u, vid, length_penalty, gamma), columns=columns)
        for vid in sorted(u.verdicts)
    ]
    return pd.concat(frames, ignore_index=True)


def _response_columns(
    u: ClaimUniverse, verifier_id: str, length_penalty: str | None, gamma: float
) -> dict[str, Any]:
    t = response_counts(u, verifier_id)
    n = len(u.responses)
    cat = t.categories()
    no_counts = [pd.NA] * n
    sentence_counts = (t.n_sentences, t.n_sentences_failed) if u.has_sentences else (no_counts,) * 2
    data: dict[str, Any] = {
        "verifier_id": pd.Series([verifier_id] * n, dtype=object),
        "dataset": pd.Series([rk[0] for rk in u.responses], dtype=object),
        "answer_id": pd.Series([rk[1] for rk in u.responses], dtype=object),
        "category": pd.Series(cat, dtype=object),
        "zero_claim": pd.Series(cat == "zero_claim", dtype=bool),
        "n_sentences": pd.Series(sentence_counts[0], dtype="Int64"),
        "n_sentences_failed": pd.Series(sentence_counts[1], dtype="Int64"),
        "n_claims": pd.Series(t.n_claims, dtype="int64"),
        "n_scored": pd.Series(t.n_scored, dtype="int64"),
        "n_unscored": pd.Series(t.n_claims - t.n_scored, dtype="int64"),
    }
    for j, name in enumerate(COUNT_FIELDS):
        data[name] = pd.Series(t.counts[:, j], dtype="int64")
    data["factuality"] = pd.Series(t.factuality(), dtype="float64")
    if length_penalty is not None:
        data["factuality_length_penalized"] = pd.Series(
            predicted_factuality(t, length_penalty, gamma), dtype="float64"
        )
    return data
