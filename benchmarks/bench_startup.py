"""Start-up of `assay run`, whole process, beside a raw aiohttp loop on the same work.

Every case is a fresh process timed from spawn to exit, on the 2-request workload (one
ForceBench pair, both members judged) against the loopback server (a separate process,
`--latency-ms` per reply), so what differs is what each process does before and after its
two requests:

* raw aiohttp      -- benchmarks/_raw_client.py: Python, aiohttp, two POSTs (the ceiling)
* assay lean       -- `python -m assay run` with `transport = "openai"`, --no-cache
* assay baselines  -- the same spec with one deterministic baseline instead (no requests)
* spec error       -- a judge on an unknown provider: refused with one line, exit 2
* assay litellm    -- `transport = "litellm"`, --no-cache
* import litellm   -- `python -c "import litellm"`
* litellm loop     -- benchmarks/_litellm_client.py: Python, litellm, the same two requests
                      with `litellm.acompletion` (its first calls import more of litellm
                      and the OpenAI SDK's types: what any program using litellm pays)
* python           -- `python -c pass`: the interpreter alone

Each run writes a full run directory (records, manifest, metrics with 1000 bootstrap
resamples, the closing tables). Targets: lean and baselines <= 1.0 s, spec error
<= 0.5 s, and the litellm path no slower to start than importing litellm: what the litellm
run takes beyond the lean run <= `import litellm`'s process. Beside it, the same question
asked of litellm itself: what the litellm run takes beyond the lean run <= what the plain
litellm loop takes beyond the raw aiohttp loop (both make the same two requests, so the
difference is litellm's import and first calls against aiohttp's). Children get bytecode caching
(PYTHONPYCACHEPREFIX in the temp dir; PYTHONDONTWRITEBYTECODE unset), as an installed
package has it, and one untimed warm-up each; cases alternate across `--repeat` rounds, and
best and median are reported (wall times move with other load on the machine).

    python benchmarks/bench_startup.py [--repeat 5] [--latency-ms 20] [--json] [--update-readme]

`--update-readme` rewrites the `bench:startup` block of docs/benchmarks.md and
benchmarks/README.md. Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from _readme_blocks import Measurement, update_from_cli
from _throughput_data import CONTENT, make_pairs, render_messages, write_dataset, write_spec
from _throughput_process import HERE, child_env, raw_command, run_command, timed, write_raw_job

TARGET_RUN_S = 1.0
TARGET_ERROR_S = 0.5
CASES = (
    "raw",
    "lean",
    "baselines",
    "error",
    "litellm",
    "import_litellm",
    "litellm_loop",
    "python",
)
LABELS = {
    "raw": "raw aiohttp loop (ceiling)",
    "lean": 'assay run, lean (`transport = "openai"`)',
    "baselines": "assay run, baselines only",
    "error": "assay run, spec error (unknown provider)",
    "litellm": 'assay run, litellm (`transport = "litellm"`)',
    "import_litellm": '`python -c "import litellm"`',
    "litellm_loop": "plain litellm loop (`_litellm_client.py`)",
    "python": '`python -c "pass"`',
}
REQUESTS = {"raw": 2, "lean": 2, "litellm": 2, "litellm_loop": 2}
EXIT = {"error": 2}


def _write_inputs(workdir: Path, api_base: str) -> dict[str, Path]:
    """The dataset (one pair), the four specs and the raw loop's job file."""
    pairs = make_pairs(1)
    write_dataset(workdir / "data.jsonl", pairs)
    specs = {}
    for name, transport in (("lean", "openai"), ("litellm", "litellm")):
        specs[name] = workdir / f"{name}.toml"
        write_spec(
            specs[name],
            dataset=workdir / "data.jsonl",
            api_base=api_base,
            concurrency=8,
            bootstrap=None,
            transport=transport,
        )
    head = 'name = "bench"\n[[datasets]]\nname = "bench-data"\npath = "data.jsonl"\n'
    specs["baselines"] = workdir / "baselines.toml"
    specs["baselines"].write_text(head + '[[baselines]]\nname = "token-overlap"\n')
    specs["error"] = workdir / "error.toml"
    specs["error"].write_text(
        head + '[[judges]]\nmodels = ["nosuchprovider/x"]\nprompts = ["generic-support@1"]\n'
    )
    specs["raw"] = write_raw_job(workdir / "raw.json", api_base, render_messages(pairs), 8)
    return specs


def _command(case: str, inputs: dict[str, Path], out: Path) -> list[str]:
    if case == "raw":
        return raw_command(inputs["raw"])
    if case == "litellm_loop":
        return [sys.executable, str(HERE / "_litellm_client.py"), str(inputs["raw"])]
    if case in ("import_litellm", "python"):
        return [sys.executable, "-c", "import litellm" if case == "import_litellm" else "pass"]
    return run_command(inputs[case], out, None)


def _measure(case: str, ctx: dict[str, Any], tag: str) -> tuple[float, float]:
    """One process of `case`; its exit status and server requests are checked."""
    client, inputs, workdir = ctx["client"], ctx["inputs"], ctx["workdir"]
    before = client.stats().total
    wall, cpu, code, err = timed(
        _command(case, inputs, workdir / "out" / f"{case}-{tag}"), ctx["env"], workdir
    )
    requests = client.stats().total - before
    if code != EXIT.get(case, 0) or requests != REQUESTS.get(case, 0):
        raise SystemExit(f"{case}: exit {code}, {requests} requests\n{err}")
    return wall, cpu


def measure_all(repeat: int, latency_ms: float) -> dict[str, Any]:
    from assay.testing import FakeOpenAIServer, FakeServerClient
    from assay.testing._process import _terminate

    workdir = Path(tempfile.mkdtemp(prefix="assay-startup-"))
    proc, url = FakeOpenAIServer.spawn_process(content=CONTENT, latency_s=latency_ms / 1000)
    try:
        client = FakeServerClient(url, process=proc, timeout=30.0)
        ctx = {
            "client": client,
            "inputs": _write_inputs(workdir, url + "/v1"),
            "workdir": workdir,
            "env": child_env(workdir),
        }
        for case in CASES:  # untimed: bytecode cache, page cache
            _measure(case, ctx, "warm")
        times: dict[str, list[tuple[float, float]]] = {c: [] for c in CASES}
        for r in range(repeat):
            for case in CASES:
                times[case].append(_measure(case, ctx, str(r)))
            print(
                f"round {r + 1}/{repeat}: "
                + "  ".join(f"{c} {times[c][-1][0]:.2f}s" for c in CASES),
                flush=True,
            )
        client.close()
    finally:
        _terminate(proc)
        shutil.rmtree(workdir, ignore_errors=True)
    return {c: _summary(v) for c, v in times.items()}


def _summary(runs: list[tuple[float, float]]) -> dict[str, float]:
    walls, cpus = [w for w, _ in runs], [c for _, c in runs]
    return {
        "best_s": round(min(walls), 3),
        "median_s": round(statistics.median(walls), 3),
        "cpu_best_s": round(min(cpus), 3),
        "cpu_median_s": round(statistics.median(cpus), 3),
    }


def verdicts(res: dict[str, Any]) -> list[tuple[str, float, str, bool]]:
    """(what, measured, target text, met) on the best wall times."""
    best = {c: res[c]["best_s"] for c in CASES}
    added = best["litellm"] - best["lean"]
    litellm_own = best["litellm_loop"] - best["raw"]
    return [
        ("assay run, lean", best["lean"], f"<= {TARGET_RUN_S:g} s", best["lean"] <= TARGET_RUN_S),
        (
            "assay run, baselines only",
            best["baselines"],
            f"<= {TARGET_RUN_S:g} s",
            best["baselines"] <= TARGET_RUN_S,
        ),
        ("spec error", best["error"], f"<= {TARGET_ERROR_S:g} s", best["error"] <= TARGET_ERROR_S),
        (
            "litellm run beyond the lean run",
            added,
            f"<= import litellm ({best['import_litellm']:.2f} s)",
            added <= best["import_litellm"],
        ),
        (
            "litellm run beyond the lean run",
            added,
            f"<= litellm loop beyond raw aiohttp loop ({litellm_own:.2f} s)",
            added <= litellm_own,
        ),
    ]


def table(res: dict[str, Any], repeat: int, latency_ms: float) -> str:
    raw = res["raw"]["best_s"]
    lines = [
        f"2 requests (one ForceBench pair), server latency {latency_ms:g} ms, each case a "
        f"fresh process, best and median of {repeat}:",
        "",
        "| process | best s | median s | CPU s (median) | best / raw aiohttp |",
        "|---|---:|---:|---:|---:|",
    ]
    for case in CASES:
        s = res[case]
        lines.append(
            f"| {LABELS[case]} | {s['best_s']:.2f} | {s['median_s']:.2f} | "
            f"{s['cpu_median_s']:.2f} | {s['best_s'] / raw:.1f}× |"
        )
    lines.append("")
    cpu = {c: res[c]["cpu_median_s"] for c in CASES}
    lines.append(
        f"CPU seconds (median; steadier than wall on a loaded machine): lean "
        f"{cpu['lean']:.2f}, baselines {cpu['baselines']:.2f}, spec error {cpu['error']:.2f}, "
        f"litellm - lean {cpu['litellm'] - cpu['lean']:.2f} vs import litellm "
        f"{cpu['import_litellm']:.2f}, raw aiohttp {cpu['raw']:.2f}."
    )
    lines.append("")
    for what, value, target, ok in verdicts(res):
        lines.append(f"- {what}: {value:.2f} s (target {target}: {'met' if ok else '**not met**'})")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="timed rounds (default 5)")
    ap.add_argument("--latency-ms", type=float, default=20.0, help="fake server latency")
    ap.add_argument("--json", action="store_true", help="also print the figures as JSON")
    ap.add_argument(
        "--update-readme",
        action="store_true",
        help="rewrite the bench:startup block of docs/benchmarks.md and benchmarks/README.md",
    )
    ns = ap.parse_args(argv)
    if ns.repeat < 1:
        ap.error("--repeat >= 1")
    measured = Measurement.of_this_run("bench_startup.py", argv)
    res = measure_all(ns.repeat, ns.latency_ms)
    text = table(res, ns.repeat, ns.latency_ms)
    print()
    print(text)
    if ns.json:
        print(json.dumps(res, indent=2))
    met = all(ok for *_, ok in verdicts(res))
    if ns.update_readme:
        return update_from_cli("startup", measured, text) or (0 if met else 1)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
