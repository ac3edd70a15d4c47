"""The baseline of bench_compare.py: the paired bootstrap of a run directory's judges
written plainly with the standard library's json and numpy, no assay code.

Per pair of judges (a, b), over the items with a gold label where both gave an ok
verdict: accuracy, balanced accuracy, macro-F1 and Cohen's kappa of each (from the
confusion matrix against gold; scikit-learn's definitions), the difference a - b and its
95% percentile interval over 1,000 resamples of the items. The resamples are those
assay draws (`numpy.random.default_rng(seed).integers(0, n, (n_boot, n))` over every
item, each pair's statistic on the drawn items inside its mask), so the intervals should
equal assay's; `compare()` says how far they are apart.
"""

from __future__ import annotations

import json
import re
import time
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

METRICS = ("accuracy", "balanced_accuracy", "macro_f1", "cohen_kappa")
_CHUNK = 10  # resamples drawn at once: 8 MB of indices for 100,000 items


def _label(text: str | None) -> str | None:
    """assay's comparable label: case and separators ignored."""
    return None if text is None else re.sub(r"[\s_-]+", "_", text.strip().lower())


def read_run(run_dir: Path) -> tuple[NDArray[np.int64], dict[str, NDArray[np.int64]], int]:
    """(gold codes, judge -> label codes (-1: no ok verdict), number of labels), items in
    (dataset, item_id) order as assay orders them (the order a draw's indices refer to);
    -1 in gold where an item has no gold label."""
    with (run_dir / "items.jsonl").open() as fh:
        items = [json.loads(line) for line in fh]
    items.sort(key=lambda r: (r["dataset"], r["item_id"]))
    position = {(r["dataset"], r["item_id"]): i for i, r in enumerate(items)}
    gold_labels = [_label(r.get("gold_label")) for r in items]
    labels: dict[str, list[str | None]] = {}
    with (run_dir / "item_judgments.jsonl").open() as fh:
        for line in fh:
            r = json.loads(line)
            column = labels.get(r["judge_id"])
            if column is None:
                column = labels[r["judge_id"]] = [None] * len(items)
            ok = r["status"] == "ok"
            column[position[(r["dataset"], r["item_id"])]] = _label(r.get("label")) if ok else None
    seen = sorted({x for col in [gold_labels, *labels.values()] for x in col if x is not None})
    index = {x: i for i, x in enumerate(seen)}

    def codes(column: list[str | None]) -> NDArray[np.int64]:
        return np.array([-1 if x is None else index[x] for x in column], dtype=np.int64)

    return codes(gold_labels), {j: codes(c) for j, c in sorted(labels.items())}, len(seen)


def statistics(m: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
    """The four statistics of a stack `(b, k, k)` of [gold, predicted] confusion matrices."""
    with np.errstate(divide="ignore", invalid="ignore"):
        diag, gold_n, pred_n = np.diagonal(m, axis1=1, axis2=2), m.sum(axis=2), m.sum(axis=1)
        total = m.sum(axis=(1, 2))
        recall = np.where(gold_n > 0, diag / gold_n, 0.0)
        present = (gold_n + pred_n) > 0
        f1 = np.where(present, 2 * diag / np.where(present, gold_n + pred_n, 1), 0.0)
        observed = diag.sum(axis=1) / total
        chance = (gold_n * pred_n).sum(axis=1) / total**2
        return {
            "accuracy": observed,
            "balanced_accuracy": recall.sum(axis=1) / (gold_n > 0).sum(axis=1),
            "macro_f1": f1.sum(axis=1) / present.sum(axis=1),
            "cohen_kappa": (observed - chance) / (1 - chance),
        }


def _joint(gold: NDArray[np.int64], a: NDArray[np.int64], b: NDArray[np.int64], k: int) -> Any:
    """Each item's cell of the joint (gold, a, b) table; k**3 for items outside the mask."""
    inside = (gold >= 0) & (a >= 0) & (b >= 0)
    return np.where(inside, (gold * k + a) * k + b, k**3)


def _pair_tables(joint: NDArray[np.float64], k: int) -> tuple[Any, Any]:
    """The confusion matrices of a and of b from joint tables `(r, k**3 + 1)`."""
    cube = joint[:, : k**3].reshape(-1, k, k, k)
    return cube.sum(axis=3), cube.sum(axis=2)


def paired_bootstrap(
    gold: NDArray[np.int64], judges: dict[str, NDArray[np.int64]], k: int, n_boot: int, seed: int
) -> list[dict[str, Any]]:
    """Every pair's four differences with their percentile intervals."""
    n = len(gold)
    pairs = list(combinations(judges, 2))
    cells = [_joint(gold, judges[a], judges[b], k) for a, b in pairs]
    size = k**3 + 1
    tables = [np.empty((n_boot, size)) for _ in pairs]
    rng = np.random.default_rng(seed)
    for start in range(0, n_boot, _CHUNK):
        idx = rng.integers(0, n, size=(min(_CHUNK, n_boot - start), n))
        offsets = np.arange(len(idx))[:, np.newaxis] * size
        for table, cell in zip(tables, cells, strict=True):
            drawn = np.bincount((cell[idx] + offsets).ravel(), minlength=len(idx) * size)
            table[start : start + len(idx)] = drawn.reshape(len(idx), size)
    rows = []
    for (a, b), cell, table in zip(pairs, cells, tables, strict=True):
        point = np.bincount(cell, minlength=size)[np.newaxis, :].astype(np.float64)
        (pa, pb), (ra, rb) = _pair_tables(point, k), _pair_tables(table, k)
        sa, sb, resampled_a, resampled_b = (statistics(x) for x in (pa, pb, ra, rb))
        for metric in METRICS:
            diffs = resampled_a[metric] - resampled_b[metric]
            low, high = np.quantile(diffs[np.isfinite(diffs)], [0.025, 0.975])
            rows.append(
                {
                    "metric": metric,
                    "judge_a": a,
                    "judge_b": b,
                    "n": int((cell < k**3).sum()),
                    "diff": float(sa[metric][0] - sb[metric][0]),
                    "ci_low": float(low),
                    "ci_high": float(high),
                }  # fmt: skip
            )
    return rows


def measure(run_dir: Path, n_boot: int, seed: int = 0) -> dict[str, Any]:
    """Read and compare, each timed (wall and CPU seconds)."""
    start, cpu = time.perf_counter(), time.process_time()
    gold, judges, k = read_run(run_dir)
    read_wall, read_cpu = time.perf_counter() - start, time.process_time() - cpu
    rows = paired_bootstrap(gold, judges, k, n_boot, seed)
    return {
        "read_wall_s": read_wall,
        "read_cpu_s": read_cpu,
        "wall_s": time.perf_counter() - start,
        "cpu_s": time.process_time() - cpu,
        "comparisons": rows,
    }


def compare(assay_rows: list[dict[str, Any]], plain_rows: list[dict[str, Any]]) -> str:
    """How far apart the two implementations' differences and intervals are."""
    mine = {(r["metric"], r["judge_a"], r["judge_b"]): r for r in assay_rows}
    gaps = [
        abs(r[field] - mine[key][field])
        for r in plain_rows
        if (key := (r["metric"], r["judge_a"], r["judge_b"])) in mine
        for field in ("diff", "ci_low", "ci_high")
    ]
    matched = len(gaps) // 3
    largest = max(gaps, default=float("nan"))
    return f"{matched} of {len(plain_rows)} plain comparisons matched; largest gap {largest:.2g}"
