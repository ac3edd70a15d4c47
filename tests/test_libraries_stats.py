"""Agreement statistics come from scikit-learn / krippendorff; the seeded bootstrap and the
Spearman correlation agree with scipy.stats.

The bootstrap stays assay's own: scipy.stats.bootstrap(method="percentile") draws the same
row indices from the same generator, so it is the same estimator, but keeping our code
keeps run directories' recorded CIs bit-identical (scipy's mean/percentile arithmetic
differs in the last bits, ~1e-16) and keeps the draws the ratio bootstrap reproduces.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
from scipy import stats

from assay.metrics import bootstrap_ci, cohen_kappa, spearman
from assay.metrics._agreement import krippendorff_alpha
from assay.metrics._bootstrap import bootstrap_mean_cis

# A: S S S S S U U U C C / B: S S S U C U U S C U (tests/test_metrics_factuality.py)
A = list("SSSSSUUUCC")
B = list("SSSUCUUSCU")


def _textbook_kappa(a: list[str], b: list[str]) -> float:
    """assay 0.1's formula: (p_o - p_e) / (1 - p_e) from the marginal frequencies."""
    n = len(a)
    p_o = sum(x == y for x, y in zip(a, b, strict=True)) / n
    p_e = sum((a.count(c) / n) * (b.count(c) / n) for c in set(a) | set(b))
    return (p_o - p_e) / (1 - p_e)


def test_kappa_from_sklearn_matches_the_previous_formula() -> None:
    assert cohen_kappa(A, B) == pytest.approx(0.375, abs=1e-12)
    rng = np.random.default_rng(3)
    for _ in range(200):
        n = int(rng.integers(2, 40))
        a = list(rng.choice(list("xyz"), size=n, p=[0.6, 0.3, 0.1]))
        b = [x if rng.random() < 0.6 else str(rng.choice(list("xyz"))) for x in a]
        if len(set(a) | set(b)) == 1:
            assert cohen_kappa(a, b) is None
            continue
        assert cohen_kappa(a, b) == pytest.approx(_textbook_kappa(a, b), abs=1e-12)


def test_krippendorff_alpha_hand_computed() -> None:
    # coincidences o = C + C^T: S [6 2 1], U [2 4 1], C [1 1 2]; n_c = 9, 7, 4; n = 20
    # D_o = 8 / 20; D_e = (20^2 - (81 + 49 + 16)) / (20 * 19) = 254 / 380
    # alpha = 1 - D_o / D_e = 1 - 152 / 254 = 102 / 254
    assert krippendorff_alpha(A, B) == pytest.approx(102 / 254, abs=1e-12)
    assert krippendorff_alpha(A, A) == pytest.approx(1.0)
    assert krippendorff_alpha(["a", "a"], ["a", "a"]) is None  # one label: undefined
    assert krippendorff_alpha([], []) is None
    with pytest.raises(ValueError, match="length"):
        krippendorff_alpha(["a"], [])


@pytest.mark.parametrize(
    ("n", "k", "n_boot", "seed"),
    [(50, 1, 1000, 0), (7, 3, 999, 5), (200, 2, 2000, 1), (3000, 2, 2000, 2)],  # last: chunked
)
def test_bootstrap_matches_scipy_percentile_bootstrap(
    n: int, k: int, n_boot: int, seed: int
) -> None:
    x = np.random.default_rng(seed + 100).normal(size=(n, k)).round(2)
    lo, hi = bootstrap_mean_cis(x, n_boot=n_boot, seed=seed, confidence=0.9)
    ref = stats.bootstrap(
        (x.T,),
        np.mean,
        n_resamples=n_boot,
        method="percentile",
        confidence_level=0.9,
        rng=np.random.default_rng(seed),
        axis=-1,
        vectorized=True,
    ).confidence_interval
    assert np.allclose(lo, ref.low, rtol=0, atol=1e-12)
    assert np.allclose(hi, ref.high, rtol=0, atol=1e-12)
    if k == 1:
        assert bootstrap_ci(x[:, 0], n_boot=n_boot, seed=seed, confidence=0.9) == pytest.approx(
            (float(ref.low[0]), float(ref.high[0])), abs=1e-12
        )


def test_spearman_matches_scipy() -> None:
    rng = np.random.default_rng(11)
    for _ in range(100):
        n = int(rng.integers(3, 30))
        x = rng.integers(0, 4, size=n).astype(float)  # many ties
        y = x + rng.integers(0, 3, size=n)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # constant input: scipy says nan, we say None
            expected = stats.spearmanr(x, y).statistic
        got = spearman(x, y)
        if np.isnan(expected):
            assert got is None
        else:
            assert got == pytest.approx(expected, abs=1e-12)


def test_importing_metrics_does_not_load_sklearn_or_krippendorff() -> None:
    code = (
        "import sys, assay.metrics\n"
        "heavy = [m for m in ('sklearn', 'krippendorff') if m in sys.modules]\n"
        "print(heavy); sys.exit(1 if heavy else 0)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
