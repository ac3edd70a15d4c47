"""Whole-process phases of bench_throughput (and the process helpers bench_startup uses):
`python -m assay run SPEC` and the raw aiohttp loop (benchmarks/_raw_client.py), each a
fresh process timed from spawn to exit, start-up, records, manifest and metrics included.

Targets: the lean run >= 0.6x the raw aiohttp loop's throughput; a fully cached
re-run >= 30x faster than the cold litellm run.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _throughput_data import CONTENT, MODEL

HERE = Path(__file__).resolve().parent
TARGET_LEAN_VS_RAW = 0.6
TARGET_COLD_VS_CACHED = 30.0
LABELS = {
    "raw": "raw aiohttp loop (`_raw_client.py`)",
    "lean": 'assay run, lean (`transport = "openai"`), empty cache',
    "cold": 'assay run, litellm (`transport = "litellm"`), empty cache',
    "cached": "assay run, litellm spec again, every judgment cached",
}


def child_env(workdir: Path) -> dict[str, str]:
    """The children's environment: bytecode cached in the temp dir (as an installed
    package has it, whatever PYTHONDONTWRITEBYTECODE says), litellm's local cost map."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(
        PYTHONPYCACHEPREFIX=str(workdir / "pycache"),
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        ASSAY_CACHE_DIR=str(workdir / "cache"),
        HF_HUB_OFFLINE="1",
    )
    return env


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, int, str]:
    """Wall and CPU seconds (the child's user + system) of one process, its exit status
    and the tail of its stderr."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.returncode, proc.stderr[-600:]


def write_raw_job(
    path: Path, api_base: str, messages: list[list[dict[str, str]]], concurrency: int
) -> Path:
    """_raw_client.py's job file: the same messages assay sends, the expected content."""
    job = {
        "url": api_base + "/chat/completions",
        "model": MODEL.split("/", 1)[1],
        "content": CONTENT,
        "concurrency": concurrency,
        "messages": messages,
    }
    path.write_text(json.dumps(job), encoding="utf-8")
    return path


def raw_command(job: Path) -> list[str]:
    return [sys.executable, str(HERE / "_raw_client.py"), str(job)]


def run_command(spec: Path, out: Path, cache: Path | None) -> list[str]:
    cmd = [sys.executable, "-m", "assay", "run", str(spec), "--no-progress"]
    cmd += ["--output-dir", str(out)]
    return cmd + (["--cache-dir", str(cache)] if cache else ["--no-cache"])


def summary(runs: list[tuple[float, float]], n: int) -> dict[str, float]:
    walls, cpus = [w for w, _ in runs], [c for _, c in runs]
    best, median = min(walls), statistics.median(walls)
    return {
        "best_s": round(best, 3),
        "median_s": round(median, 3),
        "best_per_s": round(n / best, 1),
        "median_per_s": round(n / median, 1),
        "cpu_median_s": round(statistics.median(cpus), 3),
    }


def _one(ctx: dict[str, Any], cmd: list[str], requests: int, what: str) -> tuple[float, float]:
    before = ctx["client"].stats().total
    wall, cpu, code, err = timed(cmd, ctx["env"], ctx["workdir"])
    seen = ctx["client"].stats().total - before
    print(f"process {what:<7}: {wall:7.3f}s wall  {cpu:7.3f}s cpu  requests={seen}", flush=True)
    if code != 0 or seen != requests:
        raise SystemExit(
            f"whole-process {what}: exit {code}, {seen} requests (want {requests})\n{err}"
        )
    return wall, cpu


def process_phases(
    ctx: dict[str, Any], specs: dict[str, Path], n: int, repeat: int
) -> dict[str, Any]:
    """raw, lean, cold (a fresh cache) and cached (the same spec again on that cache)
    alternate `repeat` times, so each ratio's two sides are measured side by side in time
    on a machine whose speed drifts. `ctx`: client, workdir, env, raw_job."""
    workdir = ctx["workdir"]
    runs: dict[str, list[tuple[float, float]]] = {k: [] for k in LABELS}
    for r in range(repeat):
        runs["raw"].append(_one(ctx, raw_command(ctx["raw_job"]), n, "raw"))
        lean = run_command(specs["lean"], workdir / f"pout-lean-{r}", workdir / f"pcache-lean-{r}")
        runs["lean"].append(_one(ctx, lean, n, "lean"))
        cache = workdir / f"pcache-cold-{r}"
        cold = run_command(specs["cold"], workdir / f"pout-cold-{r}", cache)
        runs["cold"].append(_one(ctx, cold, n, "cold"))
        cached = run_command(specs["cold"], workdir / f"pout-cached-{r}", cache)
        runs["cached"].append(_one(ctx, cached, 0, "cached"))
    return {k: summary(v, n) for k, v in runs.items()}


def process_ratios(res: dict[str, Any]) -> dict[str, Any]:
    """Lean / raw throughput and cold / cached time, best and median, against the targets."""
    raw, lean, cold, cached = (res[k] for k in ("raw", "lean", "cold", "cached"))
    out = {
        "lean_over_raw_best": round(raw["best_s"] / lean["best_s"], 3),
        "lean_over_raw_median": round(raw["median_s"] / lean["median_s"], 3),
        "cold_over_cached_best": round(cold["best_s"] / cached["best_s"], 2),
        "cold_over_cached_median": round(cold["median_s"] / cached["median_s"], 2),
        # CPU seconds (median), steadier than wall on a loaded machine: for information
        "lean_over_raw_cpu": round(raw["cpu_median_s"] / lean["cpu_median_s"], 3),
        "cold_over_cached_cpu": round(cold["cpu_median_s"] / cached["cpu_median_s"], 2),
    }
    out["pass_lean_over_raw"] = out["lean_over_raw_best"] >= TARGET_LEAN_VS_RAW
    out["pass_cold_over_cached"] = out["cold_over_cached_best"] >= TARGET_COLD_VS_CACHED
    return out


def _verdict(ok: bool) -> str:
    return "met" if ok else "**not met**"


def readme_process(res: dict[str, Any], n: int, repeat: int) -> str:
    """The whole-process phases as a markdown block, with the two ratios."""
    lines = [
        f"{n:,} judgments, each phase a fresh process (start-up, records, manifest and "
        f"metrics included), best and median of {repeat}:",
        "",
        "| process | best s | best judgments/s | median judgments/s | CPU s (median) |",
        "|---|---:|---:|---:|---:|",
    ]
    for key, label in LABELS.items():
        s = res[key]
        lines.append(
            f"| {label} | {s['best_s']:.2f} | {s['best_per_s']:,.0f} | "
            f"{s['median_per_s']:,.0f} | {s['cpu_median_s']:.2f} |"
        )
    r = res["ratios"]
    lines += [
        "",
        f"Lean / raw aiohttp throughput: **{r['lean_over_raw_best']:.2f}×** best, "
        f"{r['lean_over_raw_median']:.2f}× median (target {TARGET_LEAN_VS_RAW:g}×: "
        f"{_verdict(r['pass_lean_over_raw'])}); cold litellm / cached time: "
        f"**{r['cold_over_cached_best']:.1f}×** best, {r['cold_over_cached_median']:.1f}× "
        f"median (target {TARGET_COLD_VS_CACHED:g}×: {_verdict(r['pass_cold_over_cached'])}). "
        f"The same ratios by the processes' CPU seconds (median): lean / raw "
        f"{r['lean_over_raw_cpu']:.2f}×, cold / cached {r['cold_over_cached_cpu']:.1f}×.",
    ]
    return "\n".join(lines)


def print_process(res: dict[str, Any]) -> None:
    print()
    print(f"{'whole process':<58}{'best s':>9}{'median s':>10}{'best j/s':>10}{'cpu s':>8}")
    for key, label in LABELS.items():
        s = res[key]
        print(
            f"{label:<58}{s['best_s']:>9.3f}{s['median_s']:>10.3f}{s['best_per_s']:>10.1f}"
            f"{s['cpu_median_s']:>8.2f}"
        )
    r = res["ratios"]
    print(
        f"whole process: lean / raw aiohttp {r['lean_over_raw_best']:.3f}x best "
        f"(target >= {TARGET_LEAN_VS_RAW:g})   {'PASS' if r['pass_lean_over_raw'] else 'FAIL'}"
    )
    print(
        f"whole process: cold litellm / cached {r['cold_over_cached_best']:.1f}x best "
        f"(target >= {TARGET_COLD_VS_CACHED:g}x)   "
        f"{'PASS' if r['pass_cold_over_cached'] else 'FAIL'}"
    )
    print(
        f"by CPU seconds (median): lean / raw {r['lean_over_raw_cpu']:.3f}x, cold / cached "
        f"{r['cold_over_cached_cpu']:.1f}x"
    )
