"""How a jury's members' verdicts on one item become the jury's: plurality (optionally
weighted) for labels and preferences, the (weighted) mean for scores.

Ties: among the labels with the greatest (weighted) count, the jury takes the one given
by the earliest member in `members` order, so a verdict is always reproducible and a
researcher can put the judge they trust most first.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence


def plurality(values: Sequence[str], weights: Sequence[float] | None = None) -> str:
    """The value with the greatest total weight (1 each by default); `values` in members
    order, a tie going to the value of the earliest member among the tied."""
    if not values:
        raise ValueError("plurality of no votes")
    ws = [1.0] * len(values) if weights is None else list(weights)
    totals: dict[str, float] = {}
    for value, weight in zip(values, ws, strict=True):
        totals[value] = totals.get(value, 0.0) + weight
    best = max(totals.values())
    tied = {v for v, t in totals.items() if math.isclose(t, best, rel_tol=1e-9, abs_tol=1e-12)}
    return next(v for v in values if v in tied)


def weighted_mean(values: Sequence[float], weights: Sequence[float] | None = None) -> float:
    """The mean of the members' scores, weighted when weights are given (all-zero
    weights among the members present: the plain mean)."""
    import numpy as np  # here: a spec names juries, and a spec error should not load numpy

    ws = None if weights is None or not any(w > 0 for w in weights) else list(weights)
    return float(np.average(np.asarray(values, dtype=float), weights=ws))


def round_half_up(value: float) -> int:
    """A mean score as the integer label nearest to it, .5 rounding up (3.5 -> 4),
    unlike Python's round (banker's rounding: 2.5 -> 2)."""
    return math.floor(value + 0.5)


def integer_labels(labels: Sequence[str | None]) -> list[int] | None:
    """The labels as integers when every one is an integer ("1".."5"), else None."""
    if not labels or any(x is None or not re.fullmatch(r"-?\d+", x) for x in labels):
        return None
    return [int(x) for x in labels if x is not None]
