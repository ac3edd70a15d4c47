"""Every bootstrap of the project pinned to the bit, for a few fixed seeds and inputs.

The expected values were computed with the code before the bootstraps got one home:
the policies' response bootstrap (multinomial draw counts, percentiles on a
percent scale) and the metrics' row-index bootstraps (means, ratios of sums, item
statistics, Spearman). A refactor that changes any draw, chunk or rounding fails here.
Floats are compared through `float.hex`; arrays through the sha256 of their bytes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import numpy as np
import pytest

from assay.metrics import bootstrap_ci, item_bootstrap_ci, ratio_ci
from assay.metrics._bootstrap import bootstrap_mean_cis
from assay.metrics._item_bootstrap import item_bootstrap_cis
from assay.metrics._rank_correlation import spearman_ci
from assay.metrics._ratio_bootstrap import resample_weights
from assay.metrics._resampling import (
    draw_counts,
    index_chunks,
    percentile_interval,
    resampled_means,
)
from assay.policies import RatioCounts, bootstrap_intervals, paired_delta_interval

Pinned = object


def _hex(value: object) -> Pinned:
    """Floats as exact hex strings, containers recursively, arrays as a digest."""
    if isinstance(value, np.ndarray):
        data = np.ascontiguousarray(value)
        return f"{data.dtype}{data.shape}:{hashlib.sha256(data.tobytes()).hexdigest()[:16]}"
    if isinstance(value, float | np.floating):
        return float(value).hex()
    if isinstance(value, tuple | list):
        return [_hex(v) for v in value]
    if isinstance(value, dict):
        return {k: _hex(v) for k, v in sorted(value.items())}
    if value is None or isinstance(value, int | str):
        return value
    if hasattr(value, "model_dump"):
        return _hex(value.model_dump())
    raise TypeError(type(value))


def _counts(n: int, seed: int, when_zero: float | None) -> RatioCounts:
    rng = np.random.default_rng(seed)
    den = rng.integers(0, 3, n)
    num = np.minimum(den, rng.integers(0, 3, n))
    return RatioCounts(numerator=num.tolist(), denominator=den.tolist(), when_zero=when_zero)


def _policy_intervals(n: int, resamples: int, state: int, confidence: float) -> Pinned:
    metrics = {"null": _counts(n, 1, None), "zero": _counts(n, 2, 0.0)}
    got = bootstrap_intervals(
        metrics, resamples=resamples, random_state=state, confidence=confidence
    )
    return _hex(got)


def _policy_nulls(confidence: float) -> Pinned:
    """Three responses, one with a denominator: about 30% of the resamples are null."""
    null = RatioCounts(numerator=[1, 0, 0], denominator=[1, 0, 0])
    zero = RatioCounts(numerator=[0, 1, 0], denominator=[0, 2, 0], when_zero=0.0)
    metrics = {"null": null, "zero": zero}
    single = bootstrap_intervals(metrics, resamples=200, random_state=1, confidence=confidence)
    delta = paired_delta_interval(null, zero, resamples=200, random_state=1, confidence=confidence)
    return _hex([single, delta])


def _policy_delta(n: int, resamples: int, state: int, confidence: float) -> Pinned:
    a, b = _counts(n, 3, None), _counts(n, 4, 0.0)
    got = paired_delta_interval(
        a, b, resamples=resamples, random_state=state, confidence=confidence
    )
    return _hex(got)


def _sample(n: int, k: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).normal(size=(n, k)).round(3)
    x[:, 0] = 1.5  # a constant column: its interval collapses to the mean
    return x


def _ratio(seed: int, confidence: float) -> Pinned:
    rng = np.random.default_rng(seed)
    den = rng.integers(1, 9, 80).astype(float)
    num = den * rng.random(80)
    return _hex(ratio_ci(num, den, n_boot=900, seed=seed, confidence=confidence))


def _agreement(a: np.ndarray, b: np.ndarray) -> float | None:
    return None if a.std() == 0 or b.std() == 0 else float(np.corrcoef(a, b)[0, 1])


def _items(seed: int, confidence: float) -> Pinned:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, 40).astype(float)
    b = a + rng.integers(0, 2, 40)

    def batched(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.asarray((x == y).mean(axis=1) - 0.1 * x.mean(axis=1), dtype=np.float64)

    def several(x: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
        return {"agree": (x == y).mean(axis=1), "diff": (x - y).mean(axis=1)}

    return _hex(
        [
            item_bootstrap_ci(_agreement, a, b, n_boot=300, seed=seed, confidence=confidence),
            item_bootstrap_ci(batched, a, b, n_boot=2000, seed=seed, batched=True),
            item_bootstrap_cis(several, a, b, n_boot=500, seed=seed, confidence=confidence),
        ]
    )


def _spearman(seed: int) -> Pinned:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, 25).astype(float)
    y = x + rng.integers(0, 2, 25).astype(float)
    return _hex(spearman_ci(x, y, 700, seed, 0.9))


def _percentiles() -> Pinned:
    values = np.random.default_rng(9).normal(size=301)
    values[::7] = np.nan
    values[3] = np.inf
    return _hex([percentile_interval(values, c) for c in (0.95, 0.68, 0.9)])


def _draws() -> Pinned:
    idx = np.vstack([i for _, i in index_chunks(3000, 500, 4)])
    return _hex([idx, draw_counts(idx[:37], 3000, by_item=True), resample_weights(50, 30, 3)])


CASES: dict[str, Callable[[], Pinned]] = {
    "policy-small-95": lambda: _policy_intervals(37, 500, 0, 0.95),
    "policy-small-68": lambda: _policy_intervals(37, 500, 7, 0.68),
    "policy-chunked-90": lambda: _policy_intervals(3000, 1000, 5, 0.9),
    "policy-nulls-95": lambda: _policy_nulls(0.95),
    "policy-nulls-68": lambda: _policy_nulls(0.68),
    "policy-delta-95": lambda: _policy_delta(37, 500, 0, 0.95),
    "policy-delta-68": lambda: _policy_delta(3000, 700, 11, 0.68),
    "mean-cis-95": lambda: _hex(bootstrap_mean_cis(_sample(60, 3, 1), n_boot=700, seed=5)),
    "mean-cis-68": lambda: _hex(
        bootstrap_mean_cis(_sample(3000, 2, 2), n_boot=500, seed=[1, 2, 3], confidence=0.68)
    ),
    "mean-ci": lambda: _hex(bootstrap_ci(_sample(33, 2, 3)[:, 1], n_boot=999, seed=2)),
    "shared-means": lambda: _hex(resampled_means(_sample(400, 3, 4), 300, 6)),
    "ratio-95": lambda: _ratio(0, 0.95),
    "ratio-68": lambda: _ratio(11, 0.68),
    "items-95": lambda: _items(3, 0.95),
    "items-68": lambda: _items(4, 0.68),
    "spearman": lambda: _spearman(8),
    "percentiles": _percentiles,
    "draws": _draws,
}

EXPECTED: dict[str, Pinned] = {
    "policy-small-95": {
        "null": {"ci": ["0x1.029654f85fdd3p-2", "0x1.34d43f4d43f4cp-1"], "n_resamples_valid": 500},
        "zero": {"ci": ["0x1.2d2d2d2d2d2d3p-1", "0x1.b4b4b4b4b4b4bp-1"], "n_resamples_valid": 500},
    },
    "policy-small-68": {
        "null": {"ci": ["0x1.5b6f0ad22c974p-2", "0x1.0cccccccccccdp-1"], "n_resamples_valid": 500},
        "zero": {"ci": ["0x1.50624dd2f1aa0p-1", "0x1.9364d9364d936p-1"], "n_resamples_valid": 500},
    },
    "policy-chunked-90": {
        "null": {"ci": ["0x1.0dcfbcc184abfp-1", "0x1.1e6af380e3788p-1"], "n_resamples_valid": 1000},
        "zero": {"ci": ["0x1.13c17358d7e72p-1", "0x1.2499bc0977e80p-1"], "n_resamples_valid": 1000},
    },
    "policy-nulls-95": [
        {
            "null": {
                "ci": ["0x1.0000000000000p+0", "0x1.0000000000000p+0"],
                "n_resamples_valid": 143,
            },
            "zero": {"ci": ["0x0.0p+0", "0x1.0000000000000p-1"], "n_resamples_valid": 200},
        },
        {"ci": ["0x1.0000000000000p-1", "0x1.0000000000000p+0"], "n_resamples_valid": 143},
    ],
    "policy-nulls-68": [
        {
            "null": {
                "ci": ["0x1.0000000000000p+0", "0x1.0000000000000p+0"],
                "n_resamples_valid": 143,
            },
            "zero": {"ci": ["0x0.0p+0", "0x1.0000000000000p-1"], "n_resamples_valid": 200},
        },
        {"ci": ["0x1.0000000000000p-1", "0x1.0000000000000p+0"], "n_resamples_valid": 143},
    ],
    "policy-delta-95": {
        "ci": ["-0x1.1fe6ade4d144bp-2", "0x1.a78da2569ac8ep-3"],
        "n_resamples_valid": 500,
    },
    "policy-delta-68": {
        "ci": ["-0x1.79522249cec74p-7", "0x1.1054f04515c07p-6"],
        "n_resamples_valid": 700,
    },
    "mean-cis-95": ["float64(3,):8d47f605d77b2cf4", "float64(3,):475effcd598b3885"],
    "mean-cis-68": ["float64(2,):b6566ff471599aa1", "float64(2,):b25e0cc5dd91148b"],
    "mean-ci": ["-0x1.abab40026214ap-2", "0x1.6b1915bbcecc3p-2"],
    "shared-means": "float64(300, 3):7c9653c10642c021",
    "ratio-95": ["0x1.d617c29f68758p-2", "0x1.3ac8e91364ecdp-1"],
    "ratio-68": ["0x1.9336e3d9911f4p-2", "0x1.e3744870f54eep-2"],
    "items-95": [
        ["0x1.b8a2424eca9f4p-1", "0x1.dba597f86aca0p-1"],
        ["0x1.bd70a3d70a3d7p-3", "0x1.1851eb851eb86p-1"],
        {
            "agree": ["0x1.8000000000000p-2", "0x1.599999999999ap-1"],
            "diff": ["-0x1.4000000000000p-1", "-0x1.4cccccccccccdp-2"],
        },
    ],
    "items-68": [
        ["0x1.c85a881905740p-1", "0x1.db21bd40116bep-1"],
        ["0x1.8a3d70a3d70a4p-3", "0x1.0666666666666p-1"],
        {
            "agree": ["0x1.e666666666666p-2", "0x1.4000000000000p-1"],
            "diff": ["-0x1.0cccccccccccdp-1", "-0x1.8000000000000p-2"],
        },
    ],
    "spearman": [["0x1.575952fac8587p-1", "0x1.bc875b5686727p-1"], 0],
    "percentiles": [
        ["-0x1.085b0d9bc20c4p+1", "0x1.e319a5a937d5dp+0"],
        ["-0x1.007c165afaf9fp+0", "0x1.e9c46ff8f3725p-1"],
        ["-0x1.c5cd69315bb12p+0", "0x1.880cc80eb259ep+0"],
    ],
    "draws": [
        "int64(500, 3000):5e7754fcd94158d1",
        "int64(3000, 37):0c4b7013fecb7eff",
        "int64(30, 50):5511d41db1acd1cc",
    ],
}


@pytest.mark.parametrize("name", list(CASES))
def test_bootstrap_numbers_are_those_recorded_before_the_refactor(name: str) -> None:
    assert CASES[name]() == EXPECTED[name]
