"""Throughput of an assay LLM-judge run against a plain litellm loop, over real HTTP.

What it measures (all against the same fake OpenAI-compatible server, run in a separate
process with a fixed per-request latency, so the client's CPU is what differs):

* plain loop   -- ``litellm.acompletion`` for N distinct prompts, ``asyncio.gather``
                  bounded by ``asyncio.Semaphore(concurrency)``. The prompts are the
                  exact messages assay sends (``generic-support@1`` rendered for every
                  pair member), rendered before the clock starts.
* assay cold   -- ``Runner(spec, options).run()`` on a temp ForceBench dataset of N/2
                  distinct pairs (N judgments: calibrated + raised member), one
                  ``[[judges]]`` block, ``max_concurrency = concurrency``, an empty cache.
                  Timed end to end (rendering, calls, parsing, cache writes,
                  judgments.jsonl, manifest, metrics with bootstrap CIs). Runner
                  construction (spec + dataset loading, judge building) is timed
                  separately and reported both ways.
* assay cached -- the same spec again into a new output directory with the same cache
                  directory: every judgment must be a cache hit and the server must see
                  0 requests.
* assay lean   -- assay cold with ``transport = "openai"`` in the judges block (the lean
                  pooled-aiohttp transport), its own empty cache.
* raw aiohttp  -- the ceiling: one ``aiohttp.ClientSession``, a ``Semaphore(concurrency)``
                  and ``session.post(json=...)`` of the same messages, the JSON body read
                  and its content checked; nothing else.

Then the same work as whole processes (benchmarks/_throughput_process.py; skip with
``--no-process``): ``python -m assay run`` lean and litellm-cold, the cached re-run, and the
raw loop as its own process (benchmarks/_raw_client.py), start-up included.

Targets: assay cold >= 0.95x the plain loop's judgments/s; cold time / cached time >= 30x;
lean >= 4x the plain loop's judgments/s, <= 1/4 of its client CPU per judgment, and
>= 0.6x the raw aiohttp loop's judgments/s; whole process, lean >= 0.6x the raw loop and
cold litellm / cached >= 30x.
Besides wall time it reports client CPU time per judgment, which is robust to other load
on the machine (wall figures are not). With --repeat, plain and cold runs alternate.

Usage::

    python benchmarks/bench_throughput.py [--n 5000] [--concurrency 64] [--latency-ms 20]
                                          [--repeat 1] [--json] [--update-readme]

``--update-readme`` rewrites the ``bench:throughput``, ``bench:throughput-lean`` and
``bench:throughput-process`` blocks of
docs/benchmarks.md and benchmarks/README.md from the run's measured figures
(benchmarks/_readme_blocks.py).

Everything (server process, temp directories) is cleaned up in ``finally`` blocks, and a
watchdog ends the process after ``--timeout`` seconds whatever happens.
"""

from __future__ import annotations

# Must be set before anything imports litellm (assay imports it lazily, but be explicit).
import os

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

import argparse  # noqa: E402
import contextlib  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from _readme_blocks import Measurement, update_from_cli  # noqa: E402
from _throughput_data import (  # noqa: E402
    CONTENT,
    PROMPT_REF,
    machine_info,
    make_pairs,
    render_messages,
    write_dataset,
    write_spec,
)
from _throughput_phases import (  # noqa: E402
    Meter,
    Watchdog,
    _lean_phase,
    _raw_phase,
    loadavg,
    run_assay,
    run_plain,
    summarize,
    warm_up,
)
from _throughput_process import (  # noqa: E402
    child_env,
    print_process,
    process_phases,
    process_ratios,
    readme_process,
    write_raw_job,
)
from _throughput_report import readme_lean, readme_ratios, readme_table, report  # noqa: E402

__all__ = [
    "CONTENT",
    "make_pairs",
    "machine_info",
    "render_messages",
    "run_assay",
    "run_plain",
    "warm_up",
    "write_dataset",
    "write_spec",
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--n", type=int, default=5000, help="judgments (N/2 pairs; default 5000)")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--latency-ms", type=float, default=20.0, help="fake server latency")
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="runs per timed phase (plain and cold alternate); default 1",
    )
    ap.add_argument(
        "--bootstrap",
        type=int,
        default=None,
        help="bootstrap resamples in the spec (default: assay's default, 1000)",
    )
    ap.add_argument("--json", action="store_true", help="also print the figures as JSON")
    ap.add_argument(
        "--timeout",
        type=float,
        default=1800.0,
        help="hard limit for the whole script, seconds (default 1800)",
    )
    ap.add_argument("--keep", action="store_true", help="keep the temp dir (prints its path)")
    ap.add_argument(
        "--no-process",
        action="store_true",
        help="skip the whole-process phases (`python -m assay run` and the raw loop)",
    )
    ap.add_argument(
        "--update-readme",
        action="store_true",
        help="rewrite the bench:throughput blocks of docs/benchmarks.md and "
        "benchmarks/README.md from this run",
    )
    ns = ap.parse_args(argv)
    measured = Measurement.of_this_run("bench_throughput.py", argv)
    if ns.n < 2 or ns.concurrency < 1 or ns.repeat < 1:
        ap.error("--n >= 2, --concurrency >= 1, --repeat >= 1")

    n_pairs = (ns.n + 1) // 2
    n = 2 * n_pairs
    from assay.testing import FakeOpenAIServer, FakeServerClient
    from assay.testing._process import _terminate

    workdir = Path(tempfile.mkdtemp(prefix="assay-bench-"))
    proc = None
    client = None
    old_cwd = Path.cwd()
    result: dict[str, Any] = {
        "machine": machine_info(),
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }

    def kill_server() -> None:
        if proc is not None:
            _terminate(proc)

    try:
        with Watchdog(ns.timeout, kill_server):
            proc, url = FakeOpenAIServer.spawn_process(
                content=CONTENT,
                latency_s=ns.latency_ms / 1000.0,
                extra_args=["--max-recorded", "8"],  # counters stay exact; less server work
            )
            client = FakeServerClient(url, process=proc, timeout=30.0)
            api_base = url + "/v1"
            # The run manifest records the git state of the cwd; run from the temp dir so
            # the benchmark never invokes git inside the project checkout.
            os.chdir(workdir)

            pairs = make_pairs(n_pairs)
            ds = workdir / "data.jsonl"
            write_dataset(ds, pairs)
            spec = workdir / "spec.toml"
            write_spec(
                spec,
                dataset=ds,
                api_base=api_base,
                concurrency=ns.concurrency,
                bootstrap=ns.bootstrap,
            )
            lean_spec = workdir / "spec-lean.toml"
            write_spec(
                lean_spec,
                dataset=ds,
                api_base=api_base,
                concurrency=ns.concurrency,
                bootstrap=ns.bootstrap,
                transport="openai",
            )
            messages = render_messages(pairs)
            assert len(messages) == n
            chars = [sum(len(m["content"]) for m in ms) for ms in messages]
            result["config"] = {
                "judgments": n,
                "pairs": n_pairs,
                "concurrency": ns.concurrency,
                "latency_ms": ns.latency_ms,
                "repeat": ns.repeat,
                "bootstrap": ns.bootstrap if ns.bootstrap is not None else "default(1000)",
                "prompt": PROMPT_REF,
                "mean_prompt_chars": round(statistics.mean(chars)),
                "ideal_s": round(n * ns.latency_ms / 1000.0 / ns.concurrency, 3),
            }

            print(f"warming up (server {url}, load avg {loadavg()}) ...", flush=True)
            warm_up(api_base, workdir, ns.concurrency)

            # ---- plain loop and assay cold, alternating (a fresh cache dir per cold run)
            plain: list[Meter] = []
            raw: list[Meter] = []
            cold: list[dict[str, Any]] = []
            lean: list[dict[str, Any]] = []
            cache_dir = workdir / "cache-0"
            for r in range(ns.repeat):
                before = client.stats().total
                with Meter(proc.pid) as m:
                    ok, bad = run_plain(messages, api_base, ns.concurrency)
                reqs = client.stats().total - before
                print(
                    f"plain loop   #{r + 1}: {m.wall:7.3f}s wall  {m.cpu:7.3f}s cpu  "
                    f"ok={ok} failed={bad} requests={reqs}  load {m.load_before}->"
                    f"{m.load_after}",
                    flush=True,
                )
                if bad or reqs != n:
                    raise SystemExit(f"plain loop: {bad} failed calls, {reqs} requests")
                plain.append(m)

                cache_dir = workdir / f"cache-{r}"
                before = client.stats().total
                info = run_assay(spec, cache_dir, workdir / f"out-cold-{r}", proc.pid)
                info["requests"] = client.stats().total - before
                print(
                    f"assay cold   #{r + 1}: {info['run_s']:7.3f}s wall  {info['cpu_s']:7.3f}s "
                    f"cpu  (construct {info['construct_s']:.3f}s)  status={info['status']} "
                    f"statuses={info['statuses']} requests={info['requests']}  load "
                    f"{info['load'][0]}->{info['load'][1]}",
                    flush=True,
                )
                if info["statuses"] != {"ok": n} or info["lines"] != n:
                    raise SystemExit(f"assay cold run: expected {n} ok judgments, got {info}")
                cold.append(info)
                raw.append(_raw_phase(client, proc.pid, messages, api_base, ns.concurrency, r))
                lean.append(_lean_phase(client, proc.pid, lean_spec, workdir, n, r))

            # ---- assay cached (cache dir of the last cold run, new output dirs)
            cached: list[dict[str, Any]] = []
            for r in range(ns.repeat):
                before = client.stats().total
                info = run_assay(spec, cache_dir, workdir / f"out-cached-{r}", proc.pid)
                info["requests"] = client.stats().total - before
                print(
                    f"assay cached #{r + 1}: {info['run_s']:7.3f}s wall  {info['cpu_s']:7.3f}s "
                    f"cpu  (construct {info['construct_s']:.3f}s)  status={info['status']} "
                    f"cache_hits={info['cache_hits']} requests={info['requests']}",
                    flush=True,
                )
                if (
                    info["cache_hits"] != n
                    or info["requests"] != 0
                    or info["statuses"] != {"ok": n}
                ):
                    raise SystemExit(f"assay cached run: expected {n} hits, 0 requests: {info}")
                cached.append(info)

            result["plain"] = summarize(
                [m.wall for m in plain], n, [m.cpu for m in plain], [m.server_cpu for m in plain]
            )
            result["raw"] = summarize(
                [m.wall for m in raw], n, [m.cpu for m in raw], [m.server_cpu for m in raw]
            )
            result["assay_lean"] = summarize(
                [c["run_s"] for c in lean],
                n,
                [c["cpu_s"] for c in lean],
                [c["server_cpu_s"] for c in lean],
            )
            for name, runs in (("assay_cold", cold), ("assay_cached", cached)):
                result[name] = summarize(
                    [c["run_s"] for c in runs],
                    n,
                    [c["cpu_s"] for c in runs],
                    [c["server_cpu_s"] for c in runs],
                )
                result[name]["construct_s"] = [round(c["construct_s"], 4) for c in runs]
                result[name]["server_requests"] = [c["requests"] for c in runs]
                result[name]["cache_hits"] = [c["cache_hits"] for c in runs]
                result[name + "_incl_construct"] = summarize(
                    [c["run_s"] + c["construct_s"] for c in runs], n
                )
            if not ns.no_process:  # the same work, each phase a fresh process
                ctx = {"client": client, "workdir": workdir, "env": child_env(workdir)}
                ctx["raw_job"] = write_raw_job(
                    workdir / "raw.json", api_base, messages, ns.concurrency
                )
                specs = {"lean": lean_spec, "cold": spec}
                result["process"] = process_phases(ctx, specs, n, ns.repeat)
                result["process"]["ratios"] = process_ratios(result["process"])
            result["load_avg_end"] = loadavg()
    finally:
        os.chdir(old_cwd)
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()
        kill_server()
        if ns.keep:
            print(f"kept {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)

    report(result)
    if "process" in result:
        print_process(result["process"])
        ratios = result["process"]["ratios"]
        result["pass"] &= ratios["pass_lean_over_raw"] and ratios["pass_cold_over_cached"]
    if ns.json:
        print(json.dumps(result, indent=2))
    if ns.update_readme:
        return update_readme(result, measured) or (0 if result["pass"] else 1)
    return 0 if result["pass"] else 1


def update_readme(result: dict[str, Any], measured: Measurement) -> int:
    """The Benchmarks block (all phases) and the lean client's block, from one run."""
    figures = readme_table(result) + "\n\n" + readme_ratios(result)
    code = update_from_cli("throughput", measured, figures) or update_from_cli(
        "throughput-lean", measured, readme_lean(result)
    )
    if code or "process" not in result:
        return code
    c = result["config"]
    text = readme_process(result["process"], c["judgments"], c["repeat"])
    return update_from_cli("throughput-process", measured, text)


if __name__ == "__main__":
    sys.exit(main())
