"""Area under the risk–coverage curve of a confidence ranking, with tie groups.

Not defined by the evidence-gate paper ([assay definition]): questions are ranked by a
confidence `g`, and the curve visits each distinct confidence value once, so a group of
tied questions enters at once and the area does not depend on input order. Computed as an
exact fraction; without ties it equals the usual mean of risk(top-k) over k.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from itertools import groupby


def aurc(items: Sequence[tuple[float, bool]]) -> Fraction | None:
    """`Σ_j (c_j − c_{j−1}) · r_j` over the distinct confidences v_1 > v_2 > …, where c_j
    is the share of items with confidence ≥ v_j and r_j their error rate. `items` are
    (confidence, is_error); None when empty."""
    if not items:
        return None
    total = len(items)
    ordered = sorted(items, key=lambda item: -item[0])
    area, seen, errors, previous = Fraction(0), 0, 0, Fraction(0)
    for _, group in groupby(ordered, key=lambda item: item[0]):
        members = list(group)
        seen += len(members)
        errors += sum(1 for _, is_error in members if is_error)
        coverage = Fraction(seen, total)
        area += (coverage - previous) * Fraction(errors, seen)
        previous = coverage
    return area


def aurc_optimal(items: Sequence[tuple[float, bool]]) -> Fraction | None:
    """AURC of the ideal ranking: every correct item before every error, no ties."""
    if not items:
        return None
    n_errors = sum(1 for _, is_error in items if is_error)
    n_correct = len(items) - n_errors
    ranking = [(float(len(items) - k), k >= n_correct) for k in range(len(items))]
    return aurc(ranking)


def excess_aurc(items: Sequence[tuple[float, bool]]) -> Fraction | None:
    """E_AURC = AURC − AURC_opt (0 for a perfect ranking)."""
    actual, best = aurc(items), aurc_optimal(items)
    return None if actual is None or best is None else actual - best


__all__ = ["aurc", "aurc_optimal", "excess_aurc"]
