"""Judge comparison at scale: 100,000 synthetic items x 4 judges, 1,000 paired resamples.

Default: writes a synthetic items run directory (manifest.json, items.jsonl with gold
labels, item_judgments.jsonl: 4 judges = 2 models x 2 prompt versions, each right with
its own probability through a shared item difficulty, ~2% failed judgments), then, in a
fresh process, times `assay.compare.compare_runs` on it (reading the records included,
imports excluded) and reports that process's peak RSS; then the whole CLI command
`assay compare RUN -f json -o FILE` in another process. `--scores` adds gold scores and
judge scores on a 1-5 scale (MAE, Pearson, Spearman compared too). Beside it, in a
third process, the plain baseline (benchmarks/_plain_compare.py: the standard library's
json and numpy, no assay code) computes the same paired bootstrap of accuracy, balanced
accuracy, macro-F1 and Cohen's kappa differences on the same resamples; the figures are
printed side by side with the ratio assay / plain, and how far the two sets of intervals
are apart. Targets: <= 5 s, <= 1 GB on 2 cores.

`--library` runs the earlier, library-level measurement instead: `paired_compare` on
in-memory outcome frames (no run directory).

`--update-readme` runs all three (labels, `--scores`, `--library`) and rewrites the
`bench:compare` blocks of docs/benchmarks.md and benchmarks/README.md with their figures
(benchmarks/_readme_blocks.py).

    python benchmarks/bench_compare.py [--items 100000] [--judges 4] [--n-boot 1000]
        [--scores] [--library] [--keep DIR] [--update-readme]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _plain_compare  # noqa: E402
from _readme_blocks import Measurement, update_from_cli  # noqa: E402

TARGET_S = 5.0
TARGET_RSS_MB = 1024.0
LABELS = ("supported", "partially_supported", "unsupported")


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


def peak_rss_mb(who: int = resource.RUSAGE_SELF) -> float:
    """Peak resident set size (ru_maxrss: KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(who).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 2**10


def _judge_ids(judges: int) -> list[tuple[str, str, int]]:
    """(judge id, model, prompt version): models x prompt versions, as a spec makes them."""
    out = []
    for j in range(judges):
        model, version = f"openai/model-{'ab'[j // 2 % 2]}{j // 4 or ''}", j % 2 + 1
        out.append((f"{model}::judge@{version}", model, version))
    return out


RATIONALE = "The evidence states the claim's finding, with its population and effect size."


def _record_template() -> dict[str, object]:
    """Every field of an `ItemJudgmentRecord` as the run stage writes it (usage, latency,
    provenance, raw output), so the reader parses lines of the real size."""
    from assay.core.records import ItemJudgmentRecord

    record = ItemJudgmentRecord(
        dataset="bench", item_id="", judge_id="", status="ok", prompt_id="judge",
        prompt_sha256="0" * 64, parser_version="1", attempts=1, latency_s=0.8123,
        usage={"prompt_tokens": 412, "completion_tokens": 31, "total_tokens": 443,
               "cost_usd": 7.2e-05},
        finish_reason="stop", recorded_at="2026-11-26T05:00:00Z",
    )  # fmt: skip
    return record.model_dump(mode="json")


def _judgment_rows(
    rng: np.random.Generator, gold: np.ndarray, difficulty: np.ndarray, j: int, scores: bool
) -> list[dict[str, object]]:
    """Judge j's records: right with its own skill, ~2% parse errors, Likert scores."""
    items = len(gold)
    judge_id, model, version = _judge_ids(j + 1)[j]
    right = rng.random(items) < 1 / (1 + np.exp(difficulty - (0.5 + j / 4)))
    label = np.where(right, gold, rng.integers(0, len(LABELS), items))
    failed = rng.random(items) < 0.02
    likert = np.clip(np.round(2 * label + 1 + rng.normal(0, 1.0 - 0.1 * j, items)), 1, 5)
    template = _record_template()
    rows = []
    for i in range(items):
        row = dict(template, item_id=f"item-{i}", judge_id=judge_id, model=model,
                   prompt_version=version, model_returned=model)  # fmt: skip
        if failed[i]:
            row.update(status="parse_error", error="no label in the answer")
        else:
            answer: dict[str, object] = {"label": LABELS[label[i]], "rationale": RATIONALE}
            if scores:
                answer["score"] = int(likert[i])
                row.update(raw_score=likert[i], score=(likert[i] - 1) / 4)
            row.update(label=answer["label"], parsed=answer, raw_output=json.dumps(answer))
        rows.append(row)
    return rows


def write_items_run(run_dir: Path, items: int, judges: int, *, scores: bool, seed: int) -> None:
    """A run directory as the items stage writes it: manifest, items with gold labels
    (and gold scores: the mean of two raters on a 1-5 scale), judgments."""
    rng = np.random.default_rng(seed)
    run_dir.mkdir(parents=True)
    (run_dir / "manifest.json").write_text(json.dumps({"name": "bench-compare"}))
    gold = rng.integers(0, len(LABELS), items)
    gold_score = np.clip(np.round((2 * gold + 1 + rng.normal(0, 0.7, items)) * 2) / 2, 1, 5)
    difficulty = rng.normal(0.0, 1.0, items)
    with (run_dir / "items.jsonl").open("w") as fh:
        for i in range(items):
            row = {"dataset": "bench", "item_id": f"item-{i}", "gold_label": LABELS[gold[i]]}
            if scores:
                row["gold_score"] = float(gold_score[i])
            fh.write(json.dumps(row) + "\n")
    with (run_dir / "item_judgments.jsonl").open("w") as fh:
        for j in range(judges):
            for row in _judgment_rows(rng, gold, difficulty, j, scores):
                fh.write(json.dumps(row, separators=(",", ":")) + "\n")


def measure_compare(run_dir: Path, n_boot: int) -> None:
    """Child process: import, then time `compare_runs` alone; print one JSON line. The
    modules it imports on first use (the run-directory reader, scipy.stats, statsmodels,
    scikit-learn: ~1 s) are imported first: imports are excluded, as for the baseline."""
    import scipy.stats  # noqa: F401
    import sklearn.metrics  # noqa: F401
    import statsmodels.stats.multitest  # noqa: F401

    import assay.runs.store._rundir  # noqa: F401
    from assay.compare import compare_runs

    start, cpu = time.perf_counter(), time.process_time()
    report = compare_runs([run_dir], n_boot=n_boot, seed=0)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    rows = [c.model_dump() for c in report.comparisons]
    print(json.dumps({"wall_s": wall, "cpu_s": cpu, "rss_mb": peak_rss_mb(), "comparisons": rows}))


def measure_plain(run_dir: Path, n_boot: int) -> None:
    """Child process: the plain json + numpy baseline; print one JSON line."""
    print(json.dumps(_plain_compare.measure(run_dir, n_boot)))


def _child(args: list[str]) -> tuple[str, float, float]:
    """(stdout, wall seconds, peak RSS in MB) of one child process (`os.wait4`: its own
    rusage, not the maximum over every child so far)."""
    with tempfile.TemporaryFile("w+") as out:
        start = time.perf_counter()
        proc = subprocess.Popen(args, stdout=out)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if status != 0:
            raise SystemExit(f"{' '.join(args)} failed (wait status {status})")
        out.seek(0)
        text = out.read()
    peak = usage.ru_maxrss / (2**20 if sys.platform == "darwin" else 2**10)
    return text, wall, peak


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def run_dirs_benchmark(args: argparse.Namespace) -> dict[str, Any]:
    """Prints the comparisons and the figures; returns the figures."""
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-compare-"))
    run_dir = work / "run"
    try:
        start = time.perf_counter()
        write_items_run(run_dir, args.items, args.judges, scores=args.scores, seed=0)
        size = sum(p.stat().st_size for p in run_dir.iterdir()) / 1e6
        print(f"wrote {run_dir} ({size:.0f} MB) in {time.perf_counter() - start:.1f} s")
        me = [sys.executable, __file__, "--measure", str(run_dir), "--n-boot", str(args.n_boot)]
        text, _, rss = _child(me)
        measured = json.loads(text.strip().splitlines()[-1])
        frame = pd.DataFrame(measured["comparisons"])
        print(frame.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
        cli = [sys.executable, "-m", "assay", "compare", str(run_dir), "-f", "json",
               "--n-boot", str(args.n_boot), "-o", str(work / "comparisons.json")]  # fmt: skip
        _, cli_wall, cli_rss = _child(cli)
        plain_text, _, plain_rss = _child([*me[:2], "--plain", *me[3:]])
        plain = json.loads(plain_text.strip().splitlines()[-1])
        plain["rss_mb"] = plain_rss
        print(
            f"\n{args.items:,} items x {args.judges} judges ({args.items * args.judges:,} "
            f"judgments), {len(frame)} comparisons, {args.n_boot:,} paired resamples"
        )
        _side_by_side(measured | {"rss_mb": rss}, plain)
        print(_plain_compare.compare(measured["comparisons"], plain["comparisons"]))
        print(f"assay compare CLI  {cli_wall:6.2f} s, {cli_rss:.0f} MB peak (start-up included)")
        return {"comparisons": len(frame), "wall_s": measured["wall_s"], "cpu_s": measured["cpu_s"],
                "rss_mb": rss, "cli_wall_s": cli_wall, "cli_rss_mb": cli_rss,
                "plain_wall_s": plain["wall_s"], "plain_cpu_s": plain["cpu_s"],
                "plain_rss_mb": plain_rss}  # fmt: skip
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def _side_by_side(assay: dict[str, Any], plain: dict[str, Any]) -> None:
    """assay's compare_runs and the plain baseline, figure by figure, and their ratio."""
    print(f"{'':28}{'wall':>9}{'CPU':>9}{'peak RSS':>11}")
    print(
        f"{'assay compare_runs':28}{assay['wall_s']:8.2f}s{assay['cpu_s']:8.2f}s"
        f"{assay['rss_mb']:8.0f} MB   (target <= {TARGET_S:.0f} s, <= {TARGET_RSS_MB:.0f} MB)"
    )
    print(
        f"{'plain json + numpy':28}{plain['wall_s']:8.2f}s{plain['cpu_s']:8.2f}s"
        f"{plain['rss_mb']:8.0f} MB   (of which reading: {plain['read_wall_s']:.2f} s)"
    )
    keys = ("wall_s", "cpu_s", "rss_mb")
    ratio = [assay[k] / plain[k] if plain[k] else float("nan") for k in keys]
    print(f"{'assay / plain':28}{ratio[0]:8.2f}x{ratio[1]:8.2f}x{ratio[2]:8.2f}x")
    print(f"load average (1, 5, 15 min) now: {_load()}")


def library_benchmark(args: argparse.Namespace) -> dict[str, Any]:
    """Prints the comparisons and the figures; returns the figures."""
    from assay.metrics import paired_compare

    correct, scores = synthetic_outcomes(args.items, args.judges, seed=0)
    metrics = {"accuracy": correct, **({"score": scores} if args.scores else {})}
    rss_before = peak_rss_mb()
    start, cpu = time.perf_counter(), time.process_time()
    report = paired_compare(metrics, n_boot=args.n_boot, seed=0)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(report.to_frame().to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(
        f"\n{args.items:,} items x {args.judges} judges, {len(metrics)} metric(s), "
        f"{len(report.rows)} comparisons, {args.n_boot:,} paired resamples"
    )
    print(f"wall time  {wall:6.2f} s   (target <= {TARGET_S:.0f} s)")
    print(
        f"peak RSS   {peak_rss_mb():6.0f} MB  (target <= {TARGET_RSS_MB:.0f} MB; "
        f"{rss_before:.0f} MB before comparing, synthetic frames included)"
    )
    return {"comparisons": len(report.rows), "wall_s": wall, "cpu_s": cpu, "rss_mb": peak_rss_mb()}


ROWS = (
    ("`compare_runs` on a run directory, labels", {"scores": False, "library": False}),
    ("the same with 1–5 scores (`--scores`)", {"scores": True, "library": False}),
    ("`paired_compare` on in-memory frames (`--library`)", {"scores": False, "library": True}),
)


def readme_figures(args: argparse.Namespace, figures: list[dict[str, Any]]) -> str:
    """One table row per measurement, then whether `compare_runs` met its targets."""
    lines = [
        f"{args.items:,} items × {args.judges} judges, {args.n_boot:,} paired resamples shared "
        "by every comparison:",
        "",
        "| measurement | comparisons | wall | CPU | peak RSS | `assay compare` CLI, start-up "
        "included | plain json + numpy: wall, CPU, peak RSS | assay / plain, wall |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (label, _), fig in zip(ROWS, figures, strict=True):
        cli = (
            f"{fig['cli_wall_s']:.2f} s, {fig['cli_rss_mb']:.0f} MB" if "cli_wall_s" in fig else "–"
        )
        plain, ratio = "–", "–"
        if "plain_wall_s" in fig:
            plain = (
                f"{fig['plain_wall_s']:.2f} s, {fig['plain_cpu_s']:.2f} s, "
                f"{fig['plain_rss_mb']:.0f} MB"
            )
            ratio = f"{fig['wall_s'] / fig['plain_wall_s']:.2f}×"
        lines.append(
            f"| {label} | {fig['comparisons']} | {fig['wall_s']:.2f} s | {fig['cpu_s']:.2f} s "
            f"| {fig['rss_mb']:.0f} MB | {cli} | {plain} | {ratio} |"
        )
    runs = [f for (_, flags), f in zip(ROWS, figures, strict=True) if not flags["library"]]
    met = all(f["wall_s"] <= TARGET_S and f["rss_mb"] <= TARGET_RSS_MB for f in runs)
    lines += [
        "",
        f"Targets for `compare_runs` (≤ {TARGET_S:.0f} s, ≤ 1 GB): {'met' if met else 'NOT met'}. "
        "The plain baseline (benchmarks/_plain_compare.py) reads the run with `json` and "
        "computes the 24 label comparisons only (no per-judge CIs, McNemar, kappa matrix, "
        "confusions or panels) on the same resamples.",
    ]
    return "\n".join(lines)


def update_readme(args: argparse.Namespace) -> int:
    """Run the three measurements, then write their figures into docs/benchmarks.md and
    benchmarks/README.md."""
    measured = Measurement.of_this_run("bench_compare.py")
    figures: dict[int, dict[str, Any]] = {}
    # The library run first: its peak RSS is this process's, before writing run directories.
    for i in sorted(range(len(ROWS)), key=lambda i: not ROWS[i][1]["library"]):
        run = argparse.Namespace(**{**vars(args), **ROWS[i][1]})
        print(f"\n== {ROWS[i][0]}", flush=True)
        figures[i] = library_benchmark(run) if run.library else run_dirs_benchmark(run)
    ordered = [figures[i] for i in range(len(ROWS))]
    return update_from_cli("compare", measured, readme_figures(args, ordered))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--judges", type=int, default=4)
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--scores", action="store_true", help="also compare scores")
    parser.add_argument("--library", action="store_true", help="paired_compare on frames")
    parser.add_argument("--keep", help="write the run directory here and keep it")
    parser.add_argument("--update-readme", action="store_true", help="rewrite bench:compare")
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--plain", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        measure_compare(Path(args.measure), args.n_boot)
    elif args.plain:
        measure_plain(Path(args.plain), args.n_boot)
    elif args.update_readme:
        if args.keep:
            parser.error("--keep keeps one run directory; --update-readme writes two")
        return update_readme(args)
    elif args.library:
        library_benchmark(args)
    else:
        run_dirs_benchmark(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
