"""The plain json + numpy baseline of benchmarks/bench_compare.py computes what
`assay compare` computes: the same differences and intervals on the same resamples."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import _plain_compare as plain  # noqa: E402
import bench_compare  # noqa: E402

from assay.compare import compare_runs  # noqa: E402


def test_plain_baseline_equals_compare_runs(tmp_path: Path) -> None:
    run = tmp_path / "run"
    bench_compare.write_items_run(run, 600, 3, scores=False, seed=4)
    report = compare_runs([run], n_boot=60, seed=2)
    mine = [c.model_dump() for c in report.comparisons]
    theirs = plain.measure(run, 60, seed=2)["comparisons"]
    assert len(theirs) == 3 * 4  # three pairs, four statistics
    assert plain.compare(mine, theirs).startswith("12 of 12 plain comparisons matched")
    by_key = {(r["metric"], r["judge_a"], r["judge_b"]): r for r in mine}
    for row in theirs:
        other = by_key[(row["metric"], row["judge_a"], row["judge_b"])]
        assert row["n"] == other["n"]
        for field in ("diff", "ci_low", "ci_high"):
            assert abs(row[field] - other[field]) < 1e-12, (row, field)
