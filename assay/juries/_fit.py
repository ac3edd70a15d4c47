"""Weights of a weighted jury, fitted on the items of one split (`fit_on`).

- Labels (and pairwise preferences): each member's weight is the log-odds of its
  accuracy on the fit split, `max(0, ln((K - 1) p / (1 - p)))`, the optimal weights of a
  weighted majority vote of independent voters (Nitzan & Paroush 1982; Shapley & Grofman
  1984), with K the number of distinct labels seen and `p = (correct + 1) / (n + 2)`
  (add-one smoothing, so a member right on every fit item gets a finite weight). A
  member no better than chance weighs 0.
- Scores (a dataset with gold scores and no gold labels): inverse mean squared error
  against the gold score, the inverse-variance weights of unbiased estimates.

Weights are normalised to sum to 1; when every member weighs 0 they are equal.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def log_odds_weights(
    votes: Mapping[str, Sequence[str | None]], gold: Sequence[str | None]
) -> dict[str, float]:
    """Member -> weight from its accuracy against `gold` (aligned lists, None: absent)."""
    seen = {g for g in gold if g is not None}
    seen |= {v for column in votes.values() for v in column if v is not None}
    k = max(2, len(seen))
    raw: dict[str, float] = {}
    for member, column in votes.items():
        pairs = [(v, g) for v, g in zip(column, gold, strict=True) if v is not None and g]
        correct = sum(v == g for v, g in pairs)
        p = (correct + 1) / (len(pairs) + 2)
        raw[member] = max(0.0, math.log((k - 1) * p / (1 - p)))
    return normalised(raw)


def inverse_mse_weights(
    values: Mapping[str, Sequence[float | None]], gold: Sequence[float | None]
) -> dict[str, float]:
    """Member -> weight 1 / MSE of its scores against the gold scores."""
    raw: dict[str, float] = {}
    for member, column in values.items():
        errors = [
            (v - g) ** 2
            for v, g in zip(column, gold, strict=True)
            if v is not None and g is not None
        ]
        raw[member] = 1.0 / max(sum(errors) / len(errors), 1e-12) if errors else 0.0
    return normalised(raw)


def normalised(raw: Mapping[str, float]) -> dict[str, float]:
    """Weights summing to 1 (rounded to 6 digits for the records); equal when all are 0."""
    total = sum(raw.values())
    if total <= 0:
        return {m: round(1 / len(raw), 6) for m in raw}
    return {m: round(w / total, 6) for m, w in raw.items()}
