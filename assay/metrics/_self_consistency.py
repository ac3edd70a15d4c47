"""Self-consistency of a judge sampled several times on each item (`samples > 1`).

Per item: modal agreement (share of its samples equal to the most frequent label), label
entropy in bits (of the item's label frequencies) and the majority-vote label. Means are
over items with at least one sample; missing samples (None / NaN) are skipped.

Ties in the majority vote go to the label listed first in `order`; without an order,
labels are sorted as strings, so a tie goes to the smallest label. The vote therefore
never depends on the order in which samples arrived.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field

from assay.metrics._item_bootstrap import Interval, item_bootstrap_ci
from assay.metrics._resampling import Seed


def label_counts(
    samples: Sequence[Sequence[Any]], order: Sequence[Any] | None = None
) -> tuple[list[Any], NDArray[np.int64]]:
    """(labels, counts) with counts[item, label] = how many samples gave that label."""
    rows = [[v for v in item if not pd.isna(v)] for item in samples]
    seen = {v for row in rows for v in row}
    labels = list(order) if order is not None else sorted(seen, key=str)
    unknown = seen - set(labels)
    if unknown:
        raise ValueError(f"labels {sorted(unknown, key=str)} are not in order {labels}")
    index = {label: i for i, label in enumerate(labels)}
    item_of = np.repeat(np.arange(len(rows)), [len(row) for row in rows])
    codes = np.fromiter((index[v] for row in rows for v in row), dtype=np.int64)
    counts = np.zeros((len(rows), len(labels)), dtype=np.int64)
    np.add.at(counts, (item_of, codes), 1)
    return labels, counts


def modal_shares(counts: NDArray[np.int64]) -> NDArray[np.float64]:
    """Per item: largest label count / samples (NaN for an item without samples)."""
    total = counts.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, counts.max(axis=1, initial=0) / total, np.nan)


def entropies(counts: NDArray[np.int64]) -> NDArray[np.float64]:
    """Per item: Shannon entropy (bits) of its label frequencies (NaN without samples)."""
    total = counts.sum(axis=1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = counts / total
        terms = np.where(counts > 0, -p * np.log2(np.where(counts > 0, p, 1.0)), 0.0)
    return np.where(total[:, 0] > 0, terms.sum(axis=1), np.nan)


class SelfConsistency(BaseModel):
    """How often repeated samples of one judge agree, and its majority-vote labels."""

    model_config = ConfigDict(frozen=True)

    n_items: int = Field(description="Items with at least one sample.")
    modal_agreement: float | None = Field(description="Mean share of samples equal to the mode.")
    label_entropy: float | None = Field(description="Mean entropy of sample labels, in bits.")
    majority: list[Any] = Field(description="Majority-vote label per item (None: no samples).")
    ci: dict[str, Interval | None] = Field(
        default_factory=dict, description="statistic -> percentile bootstrap CI over items."
    )


def _mean(values: NDArray[np.float64]) -> float | None:
    return float(values.mean()) if len(values) else None


def self_consistency(
    samples: Sequence[Sequence[Any]],
    *,
    order: Sequence[Any] | None = None,
    n_boot: int = 0,
    seed: Seed = 0,
    confidence: float = 0.95,
) -> SelfConsistency:
    """Modal agreement, label entropy and majority vote of each item's sampled labels.

    `samples[i]` are item i's labels (lengths may differ). The tie-break of the vote is
    in the module docstring.
    """
    labels, counts = label_counts(samples, order)
    has = counts.sum(axis=1) > 0
    winner = counts.argmax(axis=1) if labels else np.zeros(len(counts), dtype=np.int64)
    majority = [labels[w] if ok else None for w, ok in zip(winner.tolist(), has, strict=True)]
    shares, bits = modal_shares(counts)[has], entropies(counts)[has]
    ci: dict[str, Interval | None] = {}
    if n_boot:
        for name, column in (("modal_agreement", shares), ("label_entropy", bits)):
            ci[name] = item_bootstrap_ci(
                lambda x: x.mean(axis=-1),
                column,
                n_boot=n_boot,
                seed=seed,
                confidence=confidence,
                batched=True,
            )
    return SelfConsistency(
        n_items=int(has.sum()),
        modal_agreement=_mean(shares),
        label_entropy=_mean(bits),
        majority=majority,
        ci=ci,
    )
