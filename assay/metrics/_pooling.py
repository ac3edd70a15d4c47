"""Pooled and per-dataset metric rows, and the seeded bootstrap settings they share.

Every metric (ForceBench and factuality alike) reports one row over every dataset pooled
(`dataset="all"`) and, when a run holds several datasets, one row per dataset. Each row's
CI draws from its own random stream, derived from the seed and the row's names, so a row
does not change when other judges, verifiers or groups join the run.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

from assay.metrics._bootstrap import bootstrap_mean_cis
from assay.metrics._resampling import check_settings

POOLED = "all"
"""`dataset` of rows computed over every dataset of the run together."""

Interval = tuple[float | None, float | None]
"""(lo, hi) of a confidence interval; (None, None) when none was computed."""
NO_INTERVAL: Interval = (None, None)

_Part = TypeVar("_Part")


@dataclass(frozen=True, slots=True)
class BootSettings:
    """How CIs are drawn: `n_boot=0` means no CI at all."""

    n_boot: int
    seed: int
    confidence: float

    def __post_init__(self) -> None:
        seed, n_boot = self.seed, self.n_boot
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
        check_settings(n_boot, self.confidence, allow_zero=True)


def stream_seed(
    seed: int, producer_id: str, group_by: str, group: str, dataset: str = POOLED
) -> list[int]:
    """Seed entropy for one (judge or verifier, dataset, group): stable across runs and
    independent of which other producers or groups are present. Pooled rows keep their
    historical seeds."""
    key = f"{producer_id}\x1f{group_by}\x1f{group}"
    if dataset != POOLED:
        key += f"\x1f{dataset}"
    digest = hashlib.sha256(key.encode()).digest()
    words = np.frombuffer(digest, dtype="<u4").tolist()
    return [seed, *words]


def pooled_and_per_dataset(
    whole: _Part, datasets: Iterable[str], restrict: Callable[[_Part, str], _Part]
) -> list[tuple[str, _Part]]:
    """`("all", whole)` first, then `(name, restrict(whole, name))` per dataset when there
    are several (with one dataset the pooled row already is that dataset's row)."""
    names = sorted(set(datasets))
    parts = [(POOLED, whole)]
    if len(names) > 1:
        parts += [(name, restrict(whole, name)) for name in names]
    return parts


def mean_intervals(
    sample: NDArray[np.float64], boot: BootSettings, seed: list[int]
) -> list[Interval]:
    """Percentile bootstrap CI of each column's mean (one paired resampling), or no CI
    for every column when `boot.n_boot == 0`."""
    if boot.n_boot == 0:
        return [NO_INTERVAL] * sample.shape[1]
    lo, hi = bootstrap_mean_cis(sample, n_boot=boot.n_boot, seed=seed, confidence=boot.confidence)
    return [(float(a), float(b)) for a, b in zip(lo, hi, strict=True)]
