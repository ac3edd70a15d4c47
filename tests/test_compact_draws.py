"""`index_chunks(compact=True)` draws int32 indices: the very values of the int64 draws
every bootstrap pins (numpy draws both from one 32-bit stream below 2**32)."""

from __future__ import annotations

import numpy as np
import pytest

from assay.metrics._resampling import index_chunks


@pytest.mark.parametrize(("n", "n_boot", "seed"), [(1, 5, 0), (7, 40, 3), (5000, 300, 11)])
def test_compact_draws_are_the_int64_draws(n: int, n_boot: int, seed: int) -> None:
    wide = list(index_chunks(n, n_boot, seed, max_rows=7))
    compact = list(index_chunks(n, n_boot, seed, max_rows=7, compact=True))
    assert [s for s, _ in wide] == [s for s, _ in compact]
    for (_, a), (_, b) in zip(wide, compact, strict=True):
        assert a.dtype == np.int64 and b.dtype == np.int32
        assert np.array_equal(a, b)
    whole = np.random.default_rng(seed).integers(0, n, size=(n_boot, n))
    assert np.array_equal(np.vstack([b for _, b in compact]), whole)
