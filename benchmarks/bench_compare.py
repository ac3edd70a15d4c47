"""Paired comparison at scale: 100,000 synthetic judgments x 4 judges, 1,000 resamples.

Builds a long `(item_id, judge, value)` frame of per-item 0/1 outcomes (each judge right
with its own probability, correlated through a shared item difficulty) and, with
`--scores`, a second metric of real-valued per-item scores; then runs
`assay.metrics.paired_compare` over all 6 judge pairs (McNemar for the 0/1 metric,
bootstrap p for scores, Holm across all). Prints wall time and peak RSS beside the
targets (<= 10 s, <= 1 GB).

    python benchmarks/bench_compare.py [--items 100000] [--judges 4] [--n-boot 1000] [--scores]
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

import numpy as np
import pandas as pd

from assay.metrics import paired_compare

TARGET_S = 10.0
TARGET_RSS_MB = 1024.0


def synthetic_outcomes(items: int, judges: int, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Long frames of 0/1 correctness and of scores, one row per (item, judge)."""
    rng = np.random.default_rng(seed)
    difficulty = rng.normal(0.0, 1.0, items)
    skill = np.linspace(0.4, 1.0, judges)
    logits = skill[np.newaxis, :] - difficulty[:, np.newaxis] + rng.normal(0, 0.5, (items, judges))
    correct = (rng.random((items, judges)) < 1 / (1 + np.exp(-logits))).astype(np.float64)
    ids = np.repeat(np.array([f"item-{i}" for i in range(items)]), judges)
    names = np.tile(np.array([f"judge-{j}" for j in range(judges)]), items)

    def long(values: np.ndarray) -> pd.DataFrame:
        return pd.DataFrame({"item_id": ids, "judge": names, "value": values.ravel()})

    return long(correct), long(logits)


def peak_rss_mb() -> float:
    """Peak resident set size of this process (ru_maxrss: KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--judges", type=int, default=4)
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--scores", action="store_true", help="also compare a score metric")
    args = parser.parse_args()

    correct, scores = synthetic_outcomes(args.items, args.judges, seed=0)
    metrics = {"accuracy": correct, **({"score": scores} if args.scores else {})}
    rss_before = peak_rss_mb()
    start = time.perf_counter()
    report = paired_compare(metrics, n_boot=args.n_boot, seed=0)
    wall = time.perf_counter() - start
    rss = peak_rss_mb()

    print(report.to_frame().to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(
        f"\n{args.items:,} items x {args.judges} judges, {len(metrics)} metric(s), "
        f"{len(report.rows)} comparisons, {args.n_boot:,} paired resamples"
    )
    print(f"wall time  {wall:6.2f} s   (target <= {TARGET_S:.0f} s)")
    print(
        f"peak RSS   {rss:6.0f} MB  (target <= {TARGET_RSS_MB:.0f} MB; "
        f"{rss_before:.0f} MB before comparing, synthetic frames included)"
    )


if __name__ == "__main__":
    main()
