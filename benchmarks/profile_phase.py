"""Run ONE phase of bench_throughput.py in isolation, for a sampling profiler.

Usage (py-spy does not follow the fake server's process unless told to)::

    # plain litellm loop / assay cold run
    py-spy record -r 250 -f raw -o plain.txt -- python benchmarks/profile_phase.py --phase plain
    py-spy record -r 250 -f raw -o cold.txt  -- python benchmarks/profile_phase.py --phase cold
    # cached run: a cold run fills the cache first (outside timed_region)
    py-spy record -r 250 -f raw -o cached.txt -- python benchmarks/profile_phase.py --phase cached

    python benchmarks/profile_phase.py --phase cold --cprofile cold.pstats   # cProfile instead

    python benchmarks/summarize_profile.py cold.txt --n 5000 --wall <cpu seconds printed>

The phase prints its wall time; warm-up (imports, first calls) happens before it, and the
profile marks the timed region with the function ``timed_region`` so it can be isolated.
"""

from __future__ import annotations

import os

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

import argparse  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_throughput as bt  # noqa: E402


def timed_region(fn: Any, *args: Any) -> Any:
    """Everything under this frame is the measured phase."""
    return fn(*args)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--phase", choices=["plain", "cold", "cached"], required=True)
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--latency-ms", type=float, default=20.0)
    ap.add_argument("--cprofile", default=None, help="write cProfile stats of the phase here")
    ns = ap.parse_args()

    from assay.testing import FakeOpenAIServer
    from assay.testing._process import _terminate

    n_pairs = (ns.n + 1) // 2
    workdir = Path(tempfile.mkdtemp(prefix="assay-prof-"))
    proc = None
    old = Path.cwd()
    try:
        proc, url = FakeOpenAIServer.spawn_process(
            content=bt.CONTENT, latency_s=ns.latency_ms / 1000.0, extra_args=["--max-recorded", "8"]
        )
        api_base = url + "/v1"
        os.chdir(workdir)
        pairs = bt.make_pairs(n_pairs)
        ds = workdir / "data.jsonl"
        bt.write_dataset(ds, pairs)
        spec = workdir / "spec.toml"
        bt.write_spec(
            spec, dataset=ds, api_base=api_base, concurrency=ns.concurrency, bootstrap=None
        )
        cache_dir = workdir / "cache"
        bt.warm_up(api_base, workdir, ns.concurrency)
        if ns.phase == "cached":
            # fill the cache with a cold run; it is sampled too, but outside timed_region,
            # so filter the profile on `timed_region`
            bt.run_assay(spec, cache_dir, workdir / "out-fill")
        fn: Callable[..., Any]
        args: tuple[Any, ...]
        if ns.phase == "plain":
            messages = bt.render_messages(pairs)
            fn, args = bt.run_plain, (messages, api_base, ns.concurrency)
        else:
            fn, args = bt.run_assay, (spec, cache_dir, workdir / "out")
        prof = None
        if ns.cprofile:
            import cProfile

            prof = cProfile.Profile()
            prof.enable()
        t0, c0 = time.perf_counter(), time.process_time()
        out = timed_region(fn, *args)
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        if prof is not None:
            prof.disable()
            prof.dump_stats(
                str(old / ns.cprofile) if not os.path.isabs(ns.cprofile) else ns.cprofile
            )
        info = out if isinstance(out, dict) else {"ok_failed": out}
        print(f"phase={ns.phase} n={2 * n_pairs} wall={dt:.3f}s cpu={cpu:.3f}s {info}")
    finally:
        os.chdir(old)
        if proc is not None:
            _terminate(proc)
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
