"""Krippendorff's alpha and Fleiss' kappa of a coded rating table for many item resamples
at once: the bootstrap of a panel's agreement without a loop over resamples.

A resample's coincidence matrix is the draw-count weighted sum of the items' own
coincidence matrices (Krippendorff 2011, "Computing Krippendorff's alpha-reliability"),
and Fleiss' kappa's observed and expected agreement are weighted sums over the items too,
so one sparse product per chunk of resamples gives every resample's value. Items with
the same labels contribute the same, so they are grouped into patterns first and a
resample is its count of each pattern (100,000 items of 4 judges: a few dozen). The ordinal
distance depends on the resample's value frequencies and is computed per resample. The
draws are `_resampling.index_chunks`', so the intervals equal those of
`item_bootstrap_ci` calling `krippendorff.alpha` / statsmodels on each resample
(tests/test_panel.py checks both, and the point values).

A code table is `(items, members)` floats: a value's index in `0..k-1`, NaN if missing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal, NamedTuple

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from assay.metrics._item_bootstrap import Interval
from assay.metrics._resampling import Seed, check_settings, index_chunks, percentile_interval

Level = Literal["nominal", "ordinal", "interval"]
Floats = NDArray[np.float64]
_MAX_DENSE = 1 << 22  # cells of the dense per-item coincidence block built at once


def value_counts(codes: Floats, k: int) -> Floats:
    """`(items, k)`: how many members gave each value to each item."""
    counts = np.zeros((codes.shape[0], k))
    rows, cols = np.nonzero(~np.isnan(codes))
    np.add.at(counts, (rows, codes[rows, cols].astype(np.int64)), 1.0)
    return counts


def item_coincidences(counts: Floats) -> sparse.csr_matrix:
    """`(items, k*k)`: each item's coincidence matrix, flattened; zero for an item with
    fewer than two values (not pairable). o_ck = (n_c n_k - [c=k] n_c) / (m - 1)."""
    n, k = counts.shape
    blocks = []
    step = max(1, _MAX_DENSE // max(k * k, 1))
    for start in range(0, n, step):
        part = counts[start : start + step]
        m = part.sum(axis=1)
        outer = part[:, :, np.newaxis] * part[:, np.newaxis, :]
        outer[:, np.arange(k), np.arange(k)] -= part
        scale = np.where(m >= 2, 1.0 / np.maximum(m - 1, 1), 0.0)
        blocks.append(sparse.csr_matrix((outer * scale[:, None, None]).reshape(len(part), k * k)))
    return sparse.csr_matrix(sparse.vstack(blocks)) if blocks else sparse.csr_matrix((0, k * k))


def _distance(level: Level, marginals: Floats, values: Floats | None) -> Floats:
    """Squared distance between values: `(k, k)`, or `(b, k, k)` for ordinal (it depends
    on the marginals `(b, k)`: ranks are mid-points of the cumulative frequencies)."""
    k = marginals.shape[-1]
    if level == "nominal":
        return 1.0 - np.eye(k)
    if level == "interval":
        if values is None:
            raise ValueError("interval alpha needs the numeric value of each code")
        return np.subtract.outer(values, values) ** 2
    mid = np.cumsum(marginals, axis=-1) - marginals / 2.0
    return (mid[:, :, np.newaxis] - mid[:, np.newaxis, :]) ** 2


def alpha_from_coincidences(o: Floats, level: Level, values: Floats | None = None) -> Floats:
    """Krippendorff's alpha of each `(k, k)` coincidence matrix of `o` `(b, k, k)`:
    1 - (n - 1) sum(o_ck d_ck) / sum(n_c n_k d_ck); NaN when undefined."""
    marginals = o.sum(axis=2)
    n = marginals.sum(axis=1)
    delta = _distance(level, marginals, values)
    observed = (o * delta).sum(axis=(1, 2))
    expected = (marginals[:, :, np.newaxis] * marginals[:, np.newaxis, :] * delta).sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1.0 - (n - 1.0) * observed / expected
    alpha[~(expected > 1e-12) | (n < 2)] = np.nan
    out: Floats = alpha
    return out


def fleiss_parts(codes: Floats, k: int) -> tuple[Floats, Floats, int]:
    """Per item (zero for items some member left unlabelled): its observed agreement
    P_i and value counts, and the number of members m."""
    m = codes.shape[1]
    counts = value_counts(codes, k)
    complete = ~np.isnan(codes).any(axis=1)
    counts[~complete] = 0.0
    agreement = ((counts**2).sum(axis=1) - m) / max(m * (m - 1), 1)
    agreement[~complete] = 0.0
    return agreement, counts, m


def fleiss_from_sums(weight: Floats, agreement: Floats, counts: Floats, m: int) -> Floats:
    """Fleiss' kappa of each resample from its weighted sums over complete items:
    `weight` (b,) items, `agreement` (b,) sum of P_i, `counts` (b, k) value counts."""
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = agreement / weight
        shares = counts / (weight * m)[:, np.newaxis]
        chance = (shares**2).sum(axis=1)
        kappa = (mean - chance) / (1.0 - chance)
    kappa[~np.isfinite(kappa)] = np.nan
    out: Floats = kappa
    return out


class CodeTable(NamedTuple):
    """One level's code table: codes `(items, members)`, the number of values, their
    numbers (interval)."""

    codes: Floats
    k: int
    values: Floats | None = None


def _patterns(tables: Mapping[Level, CodeTable]) -> tuple[NDArray[np.int64], NDArray[np.int32]]:
    """(first item of each distinct row of labels, each item's pattern): items with the
    same labels contribute the same, so a resample is summarised by pattern counts. Rows
    are folded into one integer key a column at a time (renumbered before it could
    overflow), far faster than `np.unique(axis=0)`."""
    columns = [c for t in tables.values() for c in np.nan_to_num(t.codes, nan=-1.0).T]
    base = max((t.k for t in tables.values()), default=0) + 1
    key = np.zeros(len(columns[0]) if columns else 0, dtype=np.int64)
    for column in columns:
        if key.size and int(key.max()) >= (1 << 62) // base:
            key = np.unique(key, return_inverse=True)[1].reshape(-1).astype(np.int64)
        key = key * base + (column.astype(np.int64) + 1)
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    return first.astype(np.int64), inverse.reshape(-1).astype(np.int32)  # int32: a faster take


def alpha_value(table: CodeTable, level: Level) -> float | None:
    """Krippendorff's alpha of the whole table by the batched formula (every item drawn
    once): what leave-one-out uses, as fast at 100,000 items as at 100."""
    first, pattern = _patterns({level: table})
    weights = np.bincount(pattern, minlength=len(first)).astype(np.float64)
    flat = item_coincidences(value_counts(table.codes[first], table.k))
    o = np.asarray(flat.T @ weights).reshape(1, table.k, table.k)
    value = float(alpha_from_coincidences(o, level, table.values)[0])
    return value if np.isfinite(value) else None


def _pattern_counts(pattern: NDArray[np.int32], idx: NDArray[np.int64], size: int) -> Floats:
    """`(b, size)`: how often each pattern was drawn in each resample of a chunk."""
    rows = [np.bincount(np.take(pattern, draw), minlength=size) for draw in idx]
    return np.stack(rows).astype(np.float64)


def panel_intervals(
    tables: Mapping[Level, CodeTable],
    *,
    n_boot: int,
    seed: Seed,
    confidence: float = 0.95,
) -> dict[str, Interval | None]:
    """Percentile CIs over items of alpha at each level (`krippendorff_alpha_<level>`)
    and of Fleiss' kappa of the nominal table (`fleiss_kappa`), all from the same
    resamples. The tables are the same items and members, coded per level."""
    check_settings(n_boot, confidence, allow_zero=True)
    n = next(iter(tables.values())).codes.shape[0] if tables else 0
    if n_boot == 0 or n == 0:
        return {}
    first, pattern = _patterns(tables)
    size = len(first)
    flat = {
        lv: item_coincidences(value_counts(t.codes[first], t.k)).T.tocsr()
        for lv, t in tables.items()
    }
    nominal = tables.get("nominal")
    parts = fleiss_parts(nominal.codes[first], nominal.k) if nominal else None
    complete = (~np.isnan(nominal.codes[first]).any(axis=1)).astype(float) if nominal else None
    stats = {f"krippendorff_alpha_{lv}": np.empty(n_boot) for lv in tables}
    stats |= {"fleiss_kappa": np.empty(n_boot)} if parts else {}
    for start, idx in index_chunks(n, n_boot, seed, compact=True):
        w = _pattern_counts(pattern, idx, size)  # (b, patterns)
        stop = start + w.shape[0]
        for level, table in tables.items():
            o = np.asarray(flat[level] @ w.T).T.reshape(-1, table.k, table.k)
            stats[f"krippendorff_alpha_{level}"][start:stop] = alpha_from_coincidences(
                o, level, table.values
            )
        if parts is not None and complete is not None:
            agreement, counts, m = parts
            sums = (w @ complete, w @ agreement, w @ counts)
            stats["fleiss_kappa"][start:stop] = fleiss_from_sums(*sums, m)
    return {name: percentile_interval(v, confidence) for name, v in stats.items()}


def coded(columns: Mapping[str, Sequence[str | None]], labels: Sequence[str]) -> Floats:
    """The columns (one a member, aligned by item) as an `(items, members)` code table."""
    index = {label: float(i) for i, label in enumerate(labels)}
    table = [[np.nan if v is None else index[v] for v in col] for col in columns.values()]
    return np.asarray(table, dtype=np.float64).T.reshape(-1, len(columns))
