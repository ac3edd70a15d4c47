"""Peak memory (RSS) of an assay LLM-judge run as it grows: is it flat in the run's size?

For each size N it writes a ForceBench dataset of N/2 distinct pairs (the same pairs as
bench_throughput: N judgments, calibrated + raised member), one ``[[judges]]`` block
against a loopback OpenAI-compatible server (``python -m assay.testing`` in its own
process, 0 ms latency), and runs ``Runner(spec).run()`` in a fresh child process, which
reports its own peak RSS (``resource.getrusage(RUSAGE_SELF).ru_maxrss``) after the run
has ended: judging, records, manifest and the final metrics with bootstrap CIs included.

``--transport openai`` (the default) sends the requests through assay's lean transport,
which makes 100,000 judgments feasible on 2 cores; ``--transport litellm`` measures the
litellm path. What is counted (dataset, plan, records, metrics) is the same either way.

Besides the peak it prints the RSS right after loading (spec, dataset, judges: before the
run starts) and when the final metrics start (everything judged and recorded), so the
growth can be placed.

Target: peak RSS of a 100,000-judgment run <= 300 MB and flat: the largest
size's RSS within +-15% of the smallest size's.

Usage::

    python benchmarks/bench_memory.py [--sizes 20000 100000] [--concurrency 64]
                                      [--transport openai] [--bootstrap 1000] [--json]
                                      [--update-readme]

``--update-readme`` rewrites the ``bench:memory`` blocks of docs/benchmarks.md and
benchmarks/README.md from the run's table (benchmarks/_readme_blocks.py).
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _readme_blocks import Measurement, update_from_cli  # noqa: E402
from _throughput_data import CONTENT, make_pairs, write_dataset, write_spec  # noqa: E402

TARGET_MB = 300.0
TARGET_FLAT = 0.15


def _rss_now_mb() -> float:
    """This process's resident memory now (Linux /proc; the peak elsewhere)."""
    try:
        pages = int(Path("/proc/self/statm").read_text().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(spec: Path, out: Path, cache: Path) -> dict[str, Any]:
    """Run one spec in this (fresh) process; its peak RSS, the RSS after loading (spec,
    dataset, judges) and when the final metrics start, and what it recorded."""
    from assay.runs import Runner, RunOptions, load_spec

    t0 = time.perf_counter()
    runner = Runner(
        load_spec(spec), RunOptions(output_dir=str(out), cache_dir=str(cache), progress=False)
    )
    stages = {"loaded_mb": round(_rss_now_mb(), 1)}
    write_metrics = runner._write_metrics

    def timed_metrics() -> None:  # the metrics are the run's last step
        stages["judged_mb"] = round(_rss_now_mb(), 1)
        write_metrics()

    runner._write_metrics = timed_metrics  # type: ignore[method-assign]
    outcome = runner.run()
    if runner.cache is not None:
        runner.cache.close()
    with (out / "judgments.jsonl").open("rb") as fh:
        lines = sum(1 for _ in fh)
    return {
        "status": outcome.status,
        "recorded": outcome.recorded,
        "lines": lines,
        "wall_s": round(time.perf_counter() - t0, 2),
        "cpu_s": round(time.process_time(), 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        **stages,
    }


def measure(size: int, api_base: str, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Write the dataset and spec for `size` judgments and run them in a child process."""
    d = work / f"n{size}"
    d.mkdir()
    write_dataset(d / "data.jsonl", make_pairs(size // 2, tag=f"m{size}"))
    write_spec(
        d / "spec.toml",
        dataset=d / "data.jsonl",
        api_base=api_base,
        concurrency=args.concurrency,
        bootstrap=args.bootstrap,
        name=f"mem{size}",
        transport=args.transport,
    )
    cmd = [sys.executable, __file__, "--child", str(d / "spec.toml"), str(d / "out")]
    done = subprocess.run(cmd + [str(d / "cache")], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"bench_memory: the run of {size} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["judgments"] = size
    shutil.rmtree(d, ignore_errors=True)
    return result


def report(results: list[dict[str, Any]], args: argparse.Namespace) -> str:
    """The table, the ratio of the largest to the smallest run and the targets."""
    return "\n".join([*_table(results), "", *_notes(results, args)])


def readme_figures(results: list[dict[str, Any]], args: argparse.Namespace) -> str:
    """The same as `report`, in markdown: the table, then the notes as a list."""
    notes = "\n".join(f"- {line}" for line in _notes(results, args))
    return "\n".join(_table(results)) + "\n\n" + notes


def _table(results: list[dict[str, Any]]) -> list[str]:
    rows = [
        "| judgments | peak RSS (MB) | RSS loaded (MB) | RSS judged (MB) | wall (s) "
        "| client CPU (s) | status |"
    ]
    rows.append("|---:|---:|---:|---:|---:|---:|---|")
    for r in results:
        rows.append(
            f"| {r['judgments']:,} | {r['peak_rss_mb']:.1f} | {r['loaded_mb']:.1f} "
            f"| {r.get('judged_mb', float('nan')):.1f} | {r['wall_s']:.1f} "
            f"| {r['cpu_s']:.1f} | {r['status']} ({r['lines']:,} lines) |"
        )
    return rows


def _notes(results: list[dict[str, Any]], args: argparse.Namespace) -> list[str]:
    small, large = results[0], results[-1]
    ratio = large["peak_rss_mb"] / small["peak_rss_mb"]
    flat = abs(ratio - 1) <= TARGET_FLAT
    fits = large["peak_rss_mb"] <= TARGET_MB
    return [
        f"RSS({large['judgments']:,}) / RSS({small['judgments']:,}) = {ratio:.3f} "
        f"(target 1 +- {TARGET_FLAT:.2f}: {'met' if flat else 'NOT met'})",
        f"peak RSS at {large['judgments']:,} judgments = {large['peak_rss_mb']:.1f} MB "
        f"(target <= {TARGET_MB:.0f} MB: {'met' if fits else 'NOT met'})",
        f"growth: {_slope_kb(small, large):.2f} KB per extra judgment",
        f"transport={args.transport} concurrency={args.concurrency} "
        f"bootstrap={args.bootstrap} latency=0 ms; python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs, {platform.platform()}",
    ]


def _slope_kb(small: dict[str, Any], large: dict[str, Any]) -> float:
    extra = large["judgments"] - small["judgments"]
    return 1024 * (large["peak_rss_mb"] - small["peak_rss_mb"]) / extra if extra else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 100_000])
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--transport", choices=["openai", "litellm"], default="openai")
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", nargs=3, metavar=("SPEC", "OUT", "CACHE"))
    parser.add_argument("--update-readme", action="store_true", help="rewrite bench:memory")
    args = parser.parse_args()
    if args.child:
        spec, out, cache = (Path(p) for p in args.child)
        print(json.dumps(child(spec, out, cache)))
        return 0
    from assay.testing._process import spawned

    measured = Measurement.of_this_run("bench_memory.py")

    work = Path(tempfile.mkdtemp(prefix="bench-memory-"))
    try:
        with spawned(content=CONTENT, latency_s=0.0) as server:
            results = [measure(n, server.base_url, args, work) for n in sorted(args.sizes)]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(results, indent=2) if args.json else report(results, args))
    if args.update_readme:
        return update_from_cli("memory", measured, readme_figures(results, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
