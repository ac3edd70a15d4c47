"""One bootstrap for the project: every resample is drawn, counted and turned
into a percentile interval in `assay.metrics._resampling`, the policies' intervals too."""

from __future__ import annotations

import ast
import threading
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import assay
import assay.policies
from assay._interrupts import Interrupted, cancellable
from assay.metrics import _ratio_bootstrap
from assay.metrics._ratio_bootstrap import RatioCounts, bootstrap_intervals, resample_weights
from assay.metrics._resampling import draw_counts, index_chunks, percentile_interval

PACKAGE = Path(assay.__file__).parent
HOME = PACKAGE / "metrics" / "_resampling.py"
DRAWS = {"default_rng", "PCG64", "Generator", "integers", "quantile", "percentile"}
NOT_A_BOOTSTRAP = {
    # the intent-shuffled control permutes responses once; it resamples nothing
    PACKAGE / "policies" / "claim_selective" / "_controls.py": {"Generator", "PCG64"},
}


def _draw_calls(path: Path) -> set[str]:
    """Names of generator, draw and percentile functions a module calls."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        func = node.func if isinstance(node, ast.Call) else None
        if isinstance(func, ast.Attribute) and func.attr in DRAWS:
            found.add(func.attr)
    return found


def test_only_the_one_home_draws_resamples_or_takes_percentiles() -> None:
    others = {
        str(path.relative_to(PACKAGE)): calls
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != HOME and (calls := _draw_calls(path) - NOT_A_BOOTSTRAP.get(path, set()))
    }
    assert others == {}
    assert _draw_calls(HOME) == {"default_rng", "integers", "quantile"}
    assert not (PACKAGE / "policies" / "engine" / "_bootstrap.py").exists()


def test_the_policies_public_interval_names_are_the_metrics_ones() -> None:
    for name in ("Interval", "RatioCounts", "bootstrap_intervals", "paired_delta_interval"):
        assert getattr(assay.policies, name) is getattr(_ratio_bootstrap, name)


def test_the_policies_resample_the_rows_every_metric_bootstrap_draws() -> None:
    """Draw counts of the policies' responses are the counts of `index_chunks`' rows for
    the same seed, whatever the chunking (50 responses: one chunk of all 430 rows there,
    chunks of 200 in the policies)."""
    idx = np.vstack([rows for _, rows in index_chunks(50, 430, 3)])
    expected = np.stack([np.bincount(row, minlength=50) for row in idx])
    assert np.array_equal(resample_weights(50, 430, 3), expected)
    assert np.array_equal(draw_counts(idx, 50), expected)
    assert np.array_equal(draw_counts(idx, 50, by_item=True), expected.T)


@pytest.mark.parametrize(("n", "resamples", "seed"), [(40, 1000, 0), (300, 2000, 7)])
def test_a_policy_interval_of_a_share_is_scipys_percentile_bootstrap(
    n: int, resamples: int, seed: int
) -> None:
    """With every denominator 1 a pooled ratio is a mean: its interval is
    `scipy.stats.bootstrap(..., method="percentile")` on the same generator."""
    hits = np.random.default_rng(seed + 50).integers(0, 2, n)
    counts = RatioCounts(numerator=hits.tolist(), denominator=[1] * n)
    got = bootstrap_intervals({"m": counts}, resamples=resamples, random_state=seed)["m"]
    ref = stats.bootstrap(
        (hits.astype(float),),
        np.mean,
        n_resamples=resamples,
        method="percentile",
        confidence_level=0.95,
        rng=np.random.default_rng(seed),
        vectorized=True,
    ).confidence_interval
    assert got.ci == pytest.approx((ref.low, ref.high), abs=1e-12)
    assert got.n_resamples_valid == resamples


def test_the_percent_scale_keeps_np_percentile_arithmetic() -> None:
    """The policies' intervals were `np.percentile` (levels in percent), the metrics'
    `np.quantile`: at 0.68 the two levels differ in the last bit, and so do some
    intervals; each keeps its own."""
    values = np.random.default_rng(4).random(500)
    tail, alpha = (1 - 0.68) / 2 * 100, (1.0 - 0.68) / 2.0
    assert percentile_interval(values, 0.68, percent_scale=True) == tuple(
        np.percentile(values, [tail, 100 - tail]).tolist()
    )
    assert percentile_interval(values, 0.68) == tuple(
        np.quantile(values, [alpha, 1.0 - alpha]).tolist()
    )
    differ = 0
    for seed in range(20):
        values = np.random.default_rng(seed).random(500)
        pair = {percentile_interval(values, 0.68, percent_scale=s) for s in (True, False)}
        differ += len(pair) == 2
    assert differ > 0


def test_a_cancelled_worker_stops_at_the_next_chunk_of_any_bootstrap() -> None:
    event = threading.Event()
    event.set()
    with cancellable(event), pytest.raises(Interrupted):
        next(index_chunks(10, 100, 0))


def test_a_non_finite_value_for_a_zero_denominator_is_refused() -> None:
    """Resamples that are not finite are the null ones, in every bootstrap: a metric's
    value at a zero denominator must be finite (or None: null)."""
    with pytest.raises(ValueError, match="finite"):
        RatioCounts(numerator=[0], denominator=[0], when_zero=float("inf"))
