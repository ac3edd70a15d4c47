"""Pairwise (A vs B) judge metrics from verdicts given in both presentation orders.

Each item is judged twice: with response A in the first slot (`first_order`) and with
response B in the first slot (`swapped_order`). Both are *slot* verdicts (`A` = the
response shown first, `B` = the one shown second, `tie`); a swapped verdict is mapped
back to the underlying responses before anything is counted.

- `win_rate_a`, `win_rate_b`, `tie_rate`: share of the 2n verdicts (both orders) that
  prefer A, prefer B, or call a tie, so a judge's slot preference cancels out.
- `position_consistency`: share of items whose two verdicts agree after un-swapping.
- `position_bias`: over the inconsistent items, the share of their verdicts that chose
  the first slot (1: always the first slot; 0: always the second). None when every item
  is consistent.
- `accuracy`: share of the verdicts, over items with a gold preference, equal to it.

CIs: percentile bootstrap over items (rates on one shared draw; `position_bias` over
the inconsistent items, `accuracy` over the items with gold).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field

from assay.metrics._bootstrap import bootstrap_ci
from assay.metrics._metric_rows import estimate_fields
from assay.metrics._pooling import NO_INTERVAL, BootSettings, Interval, mean_intervals

Preference = Literal["A", "B", "tie"]
_CHOICES = ("A", "B", "tie")
_UNSWAPPED: dict[str, Preference] = {"A": "B", "B": "A", "tie": "tie"}
_RATES = ("win_rate_a", "win_rate_b", "tie_rate", "position_consistency")


class PairwiseReport(BaseModel):
    """Pairwise metrics of one judge, each with its bootstrap CI (`_lo`, `_hi`)."""

    model_config = ConfigDict(frozen=True)

    n: int = Field(description="Items judged in both orders.")
    n_inconsistent: int
    n_gold: int = Field(description="Items with a gold preference.")
    win_rate_a: float
    win_rate_a_lo: float | None
    win_rate_a_hi: float | None
    win_rate_b: float
    win_rate_b_lo: float | None
    win_rate_b_hi: float | None
    tie_rate: float
    tie_rate_lo: float | None
    tie_rate_hi: float | None
    position_consistency: float
    position_consistency_lo: float | None
    position_consistency_hi: float | None
    position_bias: float | None
    position_bias_lo: float | None
    position_bias_hi: float | None
    accuracy: float | None
    accuracy_lo: float | None
    accuracy_hi: float | None
    n_boot: int
    seed: int
    confidence: float


def unswap(verdict: str) -> Preference:
    """A slot verdict given with B shown first, as a preference between A and B."""
    return _UNSWAPPED[_checked(verdict)]


def _checked(verdict: str) -> str:
    if verdict not in _CHOICES:
        raise ValueError(f"a pairwise verdict must be one of {_CHOICES}, got {verdict!r}")
    return verdict


def _codes(verdicts: Sequence[str]) -> NDArray[np.int8]:
    return np.array([_CHOICES.index(_checked(v)) for v in verdicts], dtype=np.int8)


def _subset_interval(values: NDArray[np.float64], boot: BootSettings) -> Interval:
    if boot.n_boot == 0 or values.size == 0:
        return NO_INTERVAL
    return bootstrap_ci(values, n_boot=boot.n_boot, seed=boot.seed, confidence=boot.confidence)


def _mean_or_none(values: NDArray[np.float64]) -> float | None:
    return float(values.mean()) if values.size else None


def pairwise_metrics(
    first_order: Sequence[str],
    swapped_order: Sequence[str],
    gold: Sequence[str | None] | None = None,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> PairwiseReport:
    """Win/tie rates, position consistency and bias, and gold accuracy of one judge.

    `first_order[i]` is the slot verdict on item i with A shown first, `swapped_order[i]`
    the slot verdict with B shown first; `gold[i]` is `A`, `B`, `tie` or None.
    """
    boot = BootSettings(n_boot=n_boot, seed=seed, confidence=confidence)
    if len(first_order) != len(swapped_order) or not first_order:
        raise ValueError("need the same, non-zero number of verdicts in both orders")
    slot_1, slot_2 = _codes(first_order), _codes(swapped_order)
    pref_1 = slot_1
    pref_2 = np.array([1, 0, 2], dtype=np.int8)[slot_2]  # un-swap: slot A held response B
    per_item = np.column_stack(
        [((pref_1 == c).astype(np.float64) + (pref_2 == c)) / 2 for c in range(3)]
        + [(pref_1 == pref_2).astype(np.float64)]
    )
    fields: dict[str, object] = {}
    for name, point, interval in zip(
        _RATES, per_item.mean(axis=0), mean_intervals(per_item, boot, [seed]), strict=True
    ):
        fields |= estimate_fields(name, float(point), interval)
    inconsistent = pref_1 != pref_2
    first_slot = ((slot_1 == 0).astype(np.float64) + (slot_2 == 0)) / 2
    bias_sample = first_slot[inconsistent]
    fields |= estimate_fields(
        "position_bias", _mean_or_none(bias_sample), _subset_interval(bias_sample, boot)
    )
    fields |= _accuracy_fields(pref_1, pref_2, gold, boot)
    return PairwiseReport.model_validate(
        {**fields, "n": len(first_order), "n_inconsistent": int(inconsistent.sum()),
         "n_boot": n_boot, "seed": seed, "confidence": confidence}
    )  # fmt: skip


def _accuracy_fields(
    pref_1: NDArray[np.int8],
    pref_2: NDArray[np.int8],
    gold: Sequence[str | None] | None,
    boot: BootSettings,
) -> dict[str, object]:
    """`accuracy` (+ CI) and `n_gold` over the items that have a gold preference."""
    if gold is None:
        gold = [None] * pref_1.size
    if len(gold) != pref_1.size:
        raise ValueError("need one gold preference (or None) per item")
    has_gold = np.array([g is not None for g in gold], dtype=np.bool_)
    codes = np.array([_CHOICES.index(_checked(g)) if g is not None else -1 for g in gold])
    hits = ((pref_1 == codes).astype(np.float64) + (pref_2 == codes)) / 2
    sample = hits[has_gold]
    return {
        "n_gold": int(has_gold.sum()),
        **estimate_fields("accuracy", _mean_or_none(sample), _subset_interval(sample, boot)),
    }
