"""The nli-local verifier in-process vs `[executor] kind = "ray"` on a local Ray instance.

Two `assay` runs of one factuality spec (sentence decomposer, one nli-local verifier)
over the same answers, each with its own empty cache: first in-process, then with the
spec's `[executor] kind = "ray"` on a Ray instance this script starts
(`ray.init(num_cpus=--ray-cpus)`; `--actors` actors of one CPU each, so one torch
thread each). Reports each run's wall time (the Ray run's includes starting its actors,
which load the model), and checks the target: verifications.jsonl byte-identical apart
from the timing fields (latency_s, recorded_at), and the same cache entries, against the
in-process run at the actors' thread count (1). Float32 sums depend on the number of
threads, so the in-process run at torch's default thread count is compared too, for
information. Exit status 1 when the target is missed.

The model and answers are bench_nli.py's: a BERT-shaped model (hidden 256, 4 layers)
with random weights, evidence of 10-200 words, claims of 6-30 words.

Usage::

    python benchmarks/bench_ray_nli.py [--answers 64] [--actors 2] [--ray-cpus 2]
                                       [--batch-size 32] [--json | --markdown]
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import argparse  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from importlib.metadata import version  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_nli import build_model, machine, make_pairs  # noqa: E402

TIMING = re.compile(rb'"(latency_s|recorded_at)":("[^"]*"|[-0-9.e+]+)')


def write_inputs(root: Path, answers: int, batch_size: int, actors: int) -> tuple[Path, Path]:
    """answers.jsonl (one claim sentence, one evidence passage each) and two specs."""
    rows = [
        {"id": f"a{i}", "answer": claim, "evidence": [{"id": "e", "text": premise}]}
        for i, (premise, claim) in enumerate(make_pairs(answers, seed=7))
    ]
    (root / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    body = f"""name = "bench-ray-nli"
bootstrap = 0
[factuality]
datasets = [{{ path = "answers.jsonl" }}]
[[factuality.verifiers]]
kind = "nli-local"
model = "hf-nli/{root / "model"}"
batch_size = {batch_size}
"""
    (root / "local.toml").write_text(body)
    (root / "ray.toml").write_text(body + f'[executor]\nkind = "ray"\nactors = {actors}\n')
    return root / "local.toml", root / "ray.toml"


def run(
    spec: Path, out: Path, cache: Path, threads: int | None = None
) -> tuple[float, bytes, dict[str, int]]:
    import torch

    from assay.runs import RunOptions, load_spec
    from assay.runs.runner._runner import Runner

    default = torch.get_num_threads()
    torch.set_num_threads(threads or default)
    started = time.perf_counter()
    runner = Runner(
        load_spec(spec), RunOptions(output_dir=str(out), progress=False, cache_dir=str(cache))
    )
    assert runner.run().status == "complete"
    elapsed = time.perf_counter() - started
    transport = runner.factuality.verifiers[0].transport  # type: ignore[union-attr,attr-defined]
    if transport.batch_runner is not None:
        transport.batch_runner.close()
    torch.set_num_threads(default)
    records = TIMING.sub(rb'"\1":0', (out / "verifications.jsonl").read_bytes())
    return elapsed, records, dict(transport.stats)


def cache_entries(directory: Path) -> dict[str, Any]:
    import diskcache

    with diskcache.Cache(str(directory)) as cache:
        return {k: cache[k] for k in cache.iterkeys()}


def markdown(r: dict[str, Any]) -> str:
    """The table benchmarks/README.md shows, from one run's figures."""
    same = {True: "byte-identical", False: "**not** identical"}
    rows = [
        (
            "answers / verification records / pairs / model batches",
            f"{r['answers']} / {r['records_lines']} / {r['pairs']} / {r['batches']}",
        ),
        ("in-process run, 1 torch thread", f"{r['in_process_s']} s"),
        (
            f"in-process run, {r['default_threads']} torch threads (torch's default here)",
            f"{r['in_process_default_threads_s']} s",
        ),
        ("`ray.init(num_cpus=...)`", f"{r['ray_init_s']} s"),
        (
            f"Ray run, {r['actors']} actors of 1 CPU (actor start and model load included)",
            f"{r['ray_run_s']} s",
        ),
        (
            "verifications.jsonl vs the 1-thread in-process run (timing fields aside)",
            same[r["records_byte_identical"]],
        ),
        (
            "cache entries, model stats (pairs, batches, tokens)",
            "identical" if r["same_cache_entries"] and r["same_model_stats"] else "differ",
        ),
        (
            f"verifications.jsonl vs the {r['default_threads']}-thread in-process run",
            same[r["identical_to_default_threads"]],
        ),
    ]
    lines = ["| figure | value |", "|---|---:|"]
    return "\n".join(lines + [f"| {name} | {value} |" for name, value in rows])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=64)
    parser.add_argument("--actors", type=int, default=2)
    parser.add_argument("--ray-cpus", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--markdown", action="store_true", help="the benchmarks/README table")
    args = parser.parse_args()
    info = machine()
    root = Path(tempfile.mkdtemp(prefix="bench-ray-nli-"))
    import ray

    try:
        build_model(root / "model", seed=0)
        local_spec, ray_spec = write_inputs(root, args.answers, args.batch_size, args.actors)
        local = run(local_spec, root / "out-local", root / "cache-local", threads=1)
        default = run(local_spec, root / "out-default", root / "cache-default")
        started = time.perf_counter()
        ray.init(num_cpus=args.ray_cpus, include_dashboard=False, logging_level="warning")
        ray_start = time.perf_counter() - started
        remote = run(ray_spec, root / "out-ray", root / "cache-ray")
        same_cache = cache_entries(root / "cache-local") == cache_entries(root / "cache-ray")
    finally:
        ray.shutdown()
        shutil.rmtree(root, ignore_errors=True)
    result = {
        "machine": {**info, "ray": version("ray")},
        "answers": args.answers,
        "pairs": local[2]["pairs"],
        "batches": local[2]["batches"],
        "in_process_s": round(local[0], 2),
        "in_process_threads": 1,
        "in_process_default_threads_s": round(default[0], 2),
        "default_threads": info["torch_threads"],
        "ray_init_s": round(ray_start, 2),
        "ray_run_s": round(remote[0], 2),
        "actors": args.actors,
        "records_byte_identical": local[1] == remote[1],
        "records_lines": len(local[1].splitlines()),
        "identical_to_default_threads": default[1] == remote[1],
        "same_cache_entries": same_cache,
        "same_model_stats": local[2] == remote[2],
    }
    ok = bool(result["records_byte_identical"] and same_cache and result["same_model_stats"])
    if args.json:
        print(json.dumps(result, indent=2))
    elif args.markdown:
        print(markdown(result))
    else:
        for key, value in result.items():
            if key != "machine":
                print(f"{key:30} {value}")
        print(f"{'target':30} {'PASS' if ok else 'FAIL'} (byte-identical records and cache)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
