"""One draw of `n` items evaluates every paired statistic on its own subset (mask).

The row draws are those of `_resampling.index_chunks`. A chunk of resamples becomes the
draw count of every item in every resample; the items are split into classes by which
masks hold them and every sum statistic's feature columns are split by class (the same
non-zeros), so one sparse product a chunk gives every statistic's sums on every mask
(float32 for integer features whose sums stay exact, float64 for the rest). With more
mask classes than `MAX_CLASSES`, each (part, mask) gets its own masked copy instead.
Index statistics get the drawn indices and their mask.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any, Generic, TypeAlias, TypeVar

import numpy as np
from numpy.typing import NDArray
from scipy import sparse

from assay.metrics._paired_stats import (
    EXACT,
    Floats,
    IndexStatistic,
    Mask,
    PairedStatistic,
    SumStatistic,
)
from assay.metrics._pooling import BootSettings
from assay.metrics._resampling import draw_counts, index_chunks

_Key = TypeVar("_Key", bound=Hashable)
MAX_CLASSES = 256
"""More mask classes than this: each (part, mask) gets its own masked features."""
_MAX_PATTERN_CELLS = 1 << 24
"""Items x non-zeros a row at most for looking for repeated feature rows."""
_MAX_TOTALS = 1 << 20
"""Resampled sums held before the statistics are finished (`(resamples, columns)`)."""


Cell: TypeAlias = tuple[PairedStatistic, Mask]
"""A statistic and the items (mask over all `n`) it is evaluated on."""


def _classes(masks: list[Mask], n: int) -> tuple[NDArray[np.int64], int]:
    """Items grouped by which masks hold them: (class of each item, number of classes)."""
    if not masks:
        return np.zeros(n, dtype=np.int64), 1
    member = np.column_stack(masks)
    if member.shape[1] <= 62:
        codes = member.astype(np.int64) @ (np.int64(1) << np.arange(member.shape[1]))
        _, inverse = np.unique(codes, return_inverse=True)
    else:
        _, inverse = np.unique(member, axis=0, return_inverse=True)
    classes = inverse.ravel().astype(np.int64)
    return classes, int(classes.max(initial=0)) + 1


def _split(features: Any, classes: NDArray[np.int64], n_classes: int) -> Any:
    """`(n, n_classes * m)`: each row's columns moved to its class's block."""
    coo = sparse.coo_matrix(features)
    m = coo.shape[1]
    columns = classes[coo.row] * m + coo.col
    return sparse.csr_matrix((coo.data, (coo.row, columns)), shape=(coo.shape[0], n_classes * m))


def _exact_in_float32(features: Any, n: int) -> bool:
    """Integer features whose sums over any resample stay exact in float32 (one-hot,
    0/1 outcomes, claim counts): summed at twice the speed of float64."""
    data = sparse.csr_matrix(features).data
    if data.size == 0:
        return True
    return bool(np.all(data == np.round(data))) and float(np.abs(data).max()) * n < EXACT


def _row_patterns(rows: Any) -> tuple[NDArray[np.int64], NDArray[np.int64]] | None:
    """(first row of each distinct row, each row's pattern) of a CSR matrix, or None when
    distinct rows are too many to be worth it (over a quarter of the rows)."""
    rows = sparse.csr_matrix(rows)
    rows.sum_duplicates()
    rows.sort_indices()
    n = rows.shape[0]
    lengths = np.diff(rows.indptr)
    width = int(lengths.max(initial=0))
    if n < 64 or width == 0 or width * n > _MAX_PATTERN_CELLS:
        return None
    keys = np.full((n, 2 * width), -1, dtype=np.int32)  # column, then value bits
    owner = np.repeat(np.arange(n, dtype=np.int32), lengths)
    position = np.arange(rows.nnz, dtype=np.int32) - rows.indptr[:-1].astype(np.int32)[owner]
    keys[owner, position] = rows.indices
    keys[owner, width + position] = rows.data.astype(np.float32).view(np.int32)
    whole = keys.view(np.dtype((np.void, keys.itemsize * 2 * width))).ravel()
    _, first, inverse = np.unique(whole, return_index=True, return_inverse=True)
    if len(first) * 4 > n:
        return None
    return first.astype(np.int64), inverse.ravel().astype(np.int64)


class _Stack:
    """Feature blocks stacked side by side, transposed for one product a chunk. Integer
    features (float32) are summed per pattern: items with the same feature row add the
    same, so a resample is how often each pattern was drawn (a categorical comparison has
    hundreds of patterns for 100,000 items); the sums are exact either way."""

    def __init__(self, blocks: Mapping[Hashable, Any], dtype: type[np.floating[Any]]) -> None:
        self.dtype = dtype
        self.slices: dict[Hashable, slice] = {}
        start = 0
        for block, features in blocks.items():
            self.slices[block] = slice(start, start + features.shape[1])
            start += features.shape[1]
        self.width = start
        stacked = [sparse.csr_matrix(b, dtype=dtype) for b in blocks.values()]
        rows = sparse.hstack(stacked, format="csr") if stacked else None
        found = _row_patterns(rows) if rows is not None and dtype == np.float32 else None
        self.pattern = None if found is None else found[1]
        if found is not None and rows is not None:
            rows = rows[found[0]]
        self.transposed = None if rows is None else rows.T.tocsr()

    def totals(self, idx: NDArray[np.int64], n: int) -> Floats | None:
        """`(b, columns)` sums over the items drawn in each resample (`idx`: `(b, n)`)."""
        if self.transposed is None:
            return None
        if self.pattern is None:
            weights = draw_counts(idx, n, by_item=True)
        else:
            size = self.transposed.shape[1]
            offsets = np.arange(len(idx), dtype=np.int64)[:, np.newaxis] * size
            drawn = np.bincount((self.pattern[idx] + offsets).ravel(), minlength=len(idx) * size)
            weights = drawn.reshape(len(idx), size).T
        return np.asarray(self.transposed @ weights.astype(self.dtype), dtype=np.float64).T


class _Layout:
    """Where each part of each sum statistic finds its sums on the statistic's mask."""

    def __init__(self, cells: Mapping[Any, Cell], n: int) -> None:
        sums = {k: c for k, c in cells.items() if isinstance(c[0], SumStatistic)}
        masks = list({m.tobytes(): m for _, m in sums.values()}.values())
        classes, self.n_classes = _classes(masks, n)
        self.split = self.n_classes <= MAX_CLASSES
        blocks: dict[Hashable, Any] = {}
        self.blocks_of: dict[Any, list[Hashable]] = {}
        self.classes_in: dict[Any, Mask] = {}
        for key, (stat, mask) in sums.items():
            assert isinstance(stat, SumStatistic)
            if self.split:
                self.classes_in[key] = np.bincount(classes[mask], minlength=self.n_classes) > 0
            self.blocks_of[key] = []
            for family, features in stat.parts:
                block = family if self.split else (family, mask.tobytes())
                if block not in blocks:
                    blocks[block] = (
                        _split(features, classes, self.n_classes)
                        if self.split
                        else sparse.csr_matrix(features).multiply(mask[:, None])
                    )
                self.blocks_of[key].append(block)
        exact = {b: f for b, f in blocks.items() if _exact_in_float32(f, n)}
        real = {b: f for b, f in blocks.items() if b not in exact}
        self.stacks = (_Stack(exact, np.float32), _Stack(real, np.float64))

    def totals(self, idx: NDArray[np.int64], n: int) -> list[Floats | None]:
        """Sums of every block over the items drawn in each resample of `idx`."""
        return [stack.totals(idx, n) for stack in self.stacks]

    @property
    def width(self) -> int:
        return sum(stack.width for stack in self.stacks)

    def _block(self, block: Hashable, totals: list[Floats | None]) -> Floats:
        for stack, values in zip(self.stacks, totals, strict=True):
            if block in stack.slices:
                assert values is not None
                return values[:, stack.slices[block]]
        raise KeyError(block)

    def sums_of(self, key: Any, totals: list[Floats | None]) -> Floats:
        """The statistic's sums on its mask, its parts' columns side by side."""
        columns = [self._on_mask(key, self._block(b, totals)) for b in self.blocks_of[key]]
        return columns[0] if len(columns) == 1 else np.hstack(columns)

    def _on_mask(self, key: Any, block: Floats) -> Floats:
        """A block's sums over the classes inside the statistic's mask."""
        if not self.split:
            return block
        by_class = block.reshape(len(block), self.n_classes, -1)
        picked: Floats = by_class[:, self.classes_in[key], :].sum(axis=1)
        return picked


def _finished(
    cells: Mapping[_Key, Cell], layout: _Layout, totals: list[Floats | None]
) -> dict[_Key, Floats]:
    """Every sum statistic's values from its blocks' sums (one row a resample)."""
    return {
        key: stat.finish(layout.sums_of(key, totals))
        for key, (stat, _) in cells.items()
        if isinstance(stat, SumStatistic)
    }


def _indexed(cells: Mapping[_Key, Cell], idx: NDArray[np.int64]) -> dict[_Key, Floats]:
    """Every index statistic's values from the drawn items."""
    return {
        key: stat.batched(idx, mask, *stat.columns)
        for key, (stat, mask) in cells.items()
        if isinstance(stat, IndexStatistic)
    }


class _Pending(Generic[_Key]):
    """Chunks' sums held until `_MAX_TOTALS` cells, then finished together: one call of
    each statistic's `finish` for hundreds of resamples instead of one a chunk."""

    def __init__(self, cells: Mapping[_Key, Cell], layout: _Layout, n_boot: int) -> None:
        self.cells, self.layout = cells, layout
        self.values = {k: np.empty(n_boot, dtype=np.float64) for k in cells}
        self.span = max(1, _MAX_TOTALS // max(layout.width, 1))
        self.start, self.rows = 0, 0
        self.held: list[list[Floats | None]] = []

    def add(self, start: int, idx: NDArray[np.int64], n: int) -> None:
        for key, chunk in _indexed(self.cells, idx).items():
            self.values[key][start : start + len(idx)] = chunk
        if not self.held:
            self.start = start
        self.held.append(self.layout.totals(idx, n))
        self.rows += len(idx)
        if self.rows >= self.span:
            self.flush()

    def flush(self) -> None:
        if not self.held:
            return
        totals = [
            None if parts[0] is None else np.vstack([p for p in parts if p is not None])
            for parts in zip(*self.held, strict=True)
        ]
        for key, chunk in _finished(self.cells, self.layout, totals).items():
            self.values[key][self.start : self.start + len(chunk)] = chunk
        self.held, self.rows = [], 0


def resample_statistics(
    cells: Mapping[_Key, Cell], n: int, boot: BootSettings
) -> tuple[dict[_Key, float], dict[_Key, Floats]]:
    """(point value, `n_boot` resampled values) of every statistic on its mask, all from
    one draw of the `n` items. Values are NaN where a statistic is undefined."""
    if n < 1:
        raise ValueError("cannot resample an empty item set")
    layout = _Layout(cells, n)
    identity = np.arange(n, dtype=np.int64)[np.newaxis, :]
    whole = _finished(cells, layout, layout.totals(identity, n)) | _indexed(cells, identity)
    points = {k: float(whole[k][0]) for k in cells}
    pending: _Pending[_Key] = _Pending(cells, layout, boot.n_boot)
    for start, idx in index_chunks(n, boot.n_boot, boot.seed, compact=True):
        pending.add(start, idx, n)
    pending.flush()
    return points, pending.values
