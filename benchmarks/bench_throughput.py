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

Targets: assay cold >= 0.9x the plain loop's judgments/s; cold time / cached time >= 20x;
lean >= 4x the plain loop's judgments/s, <= 1/4 of its client CPU per judgment, and
>= 0.6x the raw aiohttp loop's judgments/s (issue 11).
Besides wall time it reports client CPU time per judgment, which is robust to other load
on the machine (wall figures are not). With --repeat, plain and cold runs alternate.

Usage::

    python benchmarks/bench_throughput.py [--n 5000] [--concurrency 64] [--latency-ms 20]
                                          [--repeat 1] [--json]

Everything (server process, temp directories) is cleaned up in ``finally`` blocks, and a
watchdog ends the process after ``--timeout`` seconds whatever happens.
"""

from __future__ import annotations

# Must be set before anything imports litellm (assay imports it lazily, but be explicit).
import os

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

import argparse  # noqa: E402
import asyncio  # noqa: E402
import contextlib  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from importlib.metadata import PackageNotFoundError, version  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

CONTENT = '{"label": "fully_supported", "confidence": 0.9, "rationale": "ok"}'
MODEL = "openai/bench"
PROMPT_REF = "generic-support@1"
TARGET_COLD_VS_PLAIN = 0.9
TARGET_COLD_VS_CACHED = 20.0
TARGET_LEAN_VS_PLAIN = 4.0  # throughput
TARGET_LEAN_CPU_SHARE = 0.25  # lean client CPU per judgment / the plain loop's
TARGET_LEAN_VS_RAW = 0.6  # throughput

_AXES = ["relation", "modality", "scope", "temporal", "numeric"]
_EVIDENCE = (
    "A {year} cohort study that followed {n:,} adults in {place} for {years} years found that "
    "participants who {exposure} had a {pct}% lower incidence of {outcome} than those who did "
    "not. The authors stressed that the study was observational and could not rule out "
    "confounding by diet or physical activity. (record {i:06d})"
)
_PLACES = ["Denmark", "Ohio", "Japan", "Chile", "Kenya", "Norway", "Quebec", "Bavaria"]
_EXPOSURES = [
    "drank three or more cups of coffee daily",
    "walked at least 30 minutes a day",
    "ate fish twice a week",
    "slept seven to eight hours a night",
]
_OUTCOMES = ["type 2 diabetes", "stroke", "hip fracture", "depression", "heart failure"]


# --------------------------------------------------------------------------- helpers


def _pkg(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return "n/a"


def machine_info() -> dict[str, Any]:
    return {
        "cpu_count": os.cpu_count(),
        "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "litellm": _pkg("litellm"),
        "openai": _pkg("openai"),
        "httpx": _pkg("httpx"),
        "aiohttp": _pkg("aiohttp"),
        "pydantic": _pkg("pydantic"),
        "assay": _pkg("assay"),
    }


def make_pairs(n_pairs: int, tag: str = "") -> list[dict[str, Any]]:
    """Distinct ForceBench pairs; every claim and passage carries a unique record number."""
    pairs = []
    for i in range(n_pairs):
        exposure = _EXPOSURES[i % len(_EXPOSURES)]
        outcome = _OUTCOMES[i % len(_OUTCOMES)]
        place = _PLACES[i % len(_PLACES)]
        evidence = _EVIDENCE.format(
            year=2000 + i % 24, n=1000 + (i * 37) % 9000, place=place, years=3 + i % 9,
            exposure=exposure, pct=5 + i % 30, outcome=outcome, i=i,
        )
        pairs.append({
            "id": f"bench{tag}-{i:06d}",
            "question": f"Is {exposure.split(' ', 1)[1]} linked to {outcome} risk? (#{tag}{i})",
            "evidence": evidence,
            "calibrated_claim": (
                f"In a cohort from {place}, people who {exposure} were observed to have a lower "
                f"incidence of {outcome} (record {tag}{i:06d})."
            ),
            "raised_claim": (
                f"In a cohort from {place}, {exposure.replace('drank', 'drinking')} was shown to "
                f"prevent {outcome} (record {tag}{i:06d})."
            ),
            "axis": _AXES[i % len(_AXES)],
            "severity": 1 + i % 3,
        })
    return pairs


def write_dataset(path: Path, pairs: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for p in pairs:
            fh.write(json.dumps(p) + "\n")


def write_spec(path: Path, *, dataset: Path, api_base: str, concurrency: int,
               bootstrap: int | None, name: str = "bench", transport: str = "litellm") -> None:
    lines = [
        f'name = "{name}"',
        'description = "assay throughput benchmark (fake server)"',
    ]
    if bootstrap is not None:
        lines.append(f"bootstrap = {bootstrap}")
    lines += [
        "",
        "[[datasets]]",
        f'name = "{name}-data"',
        f"path = {json.dumps(str(dataset))}",
        "",
        "[[judges]]",
        f'models = ["{MODEL}"]',
        f'prompts = ["{PROMPT_REF}"]',
        f"api_base = {json.dumps(api_base)}",
        f"max_concurrency = {concurrency}",
        'structured_output = "off"',
        f'transport = "{transport}"',
        "",
    ]
    path.write_text("\n".join(lines), encoding="utf-8")


def render_messages(pairs: list[dict[str, Any]]) -> list[list[dict[str, str]]]:
    """The exact chat messages assay sends for each pair member, in plan order."""
    from assay.prompts import PromptRegistry

    prompt = PromptRegistry().get(PROMPT_REF)
    out = []
    for p in pairs:
        for claim in (p["calibrated_claim"], p["raised_claim"]):
            msgs = prompt.render(
                {"claim": claim, "evidence": p["evidence"], "question": p["question"]}
            )
            out.append([m.model_dump() for m in msgs])
    return out


def summarize(times: list[float], n: int, cpu: list[float] | None = None,
              server_cpu: list[float | None] | None = None) -> dict[str, Any]:
    best = min(times)
    med = statistics.median(times)
    out: dict[str, Any] = {
        "judgments": n,
        "times_s": [round(t, 4) for t in times],
        "best_s": round(best, 4),
        "median_s": round(med, 4),
        "best_per_s": round(n / best, 1),
        "median_per_s": round(n / med, 1),
    }
    if cpu:
        out["client_cpu_s"] = [round(c, 3) for c in cpu]
        out["client_cpu_us_per_judgment"] = round(1e6 * min(cpu) / n, 1)
    if server_cpu and all(c is not None for c in server_cpu):
        out["server_cpu_s"] = [round(c, 3) for c in server_cpu if c is not None]
    return out


def read_judgments(run_dir: Path) -> tuple[int, Counter[str], int]:
    statuses: Counter[str] = Counter()
    hits = 0
    total = 0
    with (run_dir / "judgments.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            rec = json.loads(line)
            total += 1
            statuses[rec["status"]] += 1
            hits += bool(rec.get("cache_hit"))
    return total, statuses, hits


def proc_cpu_s(pid: int) -> float | None:
    """utime + stime of another process (Linux /proc), or None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def loadavg() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:
        return None


class Meter:
    """Wall time, this process's CPU time and the server's CPU time over a block."""

    def __init__(self, server_pid: int | None) -> None:
        self.server_pid = server_pid

    def __enter__(self) -> Meter:
        self.load_before = loadavg()
        self._srv0 = proc_cpu_s(self.server_pid) if self.server_pid else None
        self._cpu0 = time.process_time()
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self._t0
        self.cpu = time.process_time() - self._cpu0
        srv1 = proc_cpu_s(self.server_pid) if self.server_pid else None
        self.server_cpu = (srv1 - self._srv0) if srv1 is not None and self._srv0 is not None \
            else None
        self.load_after = loadavg()


class Watchdog:
    """Kills this process (and so the server, whose stdin pipe closes) after a deadline."""

    def __init__(self, seconds: float, on_fire: Any) -> None:
        self._stop = threading.Event()
        self._seconds = seconds
        self._on_fire = on_fire
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        if not self._stop.wait(self._seconds):
            sys.stderr.write(f"\nbench_throughput: watchdog fired after {self._seconds}s\n")
            sys.stderr.flush()
            with contextlib.suppress(Exception):
                self._on_fire()
            os._exit(3)

    def __enter__(self) -> Watchdog:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()


# --------------------------------------------------------------------------- phases


async def _plain_loop(messages: list[list[dict[str, str]]], api_base: str, concurrency: int,
                      total_timeout: float) -> tuple[int, int]:
    import litellm

    sem = asyncio.Semaphore(concurrency)

    async def one(msgs: list[dict[str, str]]) -> bool:
        async with sem:
            resp = await litellm.acompletion(
                model=MODEL, api_base=api_base, api_key="sk-bench", messages=msgs,
                max_retries=0, temperature=0, max_tokens=1024,
            )
            return bool(resp.choices[0].message.content == CONTENT)

    # One deadline for the whole loop (not a wait_for per call, which would add a Task per
    # call to the baseline); the script's watchdog bounds everything else.
    async with asyncio.timeout(total_timeout):
        results = await asyncio.gather(*(one(m) for m in messages), return_exceptions=True)
    ok = sum(1 for r in results if r is True)
    return ok, len(results) - ok


def run_plain(messages: list[list[dict[str, str]]], api_base: str, concurrency: int,
              total_timeout: float = 600.0) -> tuple[int, int]:
    """The baseline: returns (ok, failed) calls."""
    return asyncio.run(_plain_loop(messages, api_base, concurrency, total_timeout))


async def _raw_loop(messages: list[list[dict[str, str]]], api_base: str,
                    concurrency: int) -> tuple[int, int]:
    import aiohttp

    sem = asyncio.Semaphore(concurrency)
    url = api_base + "/chat/completions"
    headers = {"Authorization": "Bearer sk-bench"}
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector, headers=headers) as session:

        async def one(msgs: list[dict[str, str]]) -> bool:
            body = {"model": MODEL.split("/", 1)[1], "messages": msgs, "temperature": 0,
                    "max_tokens": 1024}
            async with sem, session.post(url, json=body) as resp:
                data = await resp.json()
            return bool(data["choices"][0]["message"]["content"] == CONTENT)

        results = await asyncio.gather(*(one(m) for m in messages), return_exceptions=True)
    ok = sum(1 for r in results if r is True)
    return ok, len(results) - ok


def run_raw(messages: list[list[dict[str, str]]], api_base: str,
            concurrency: int) -> tuple[int, int]:
    """The ceiling: a bare aiohttp POST loop; returns (ok, failed) calls."""
    return asyncio.run(_raw_loop(messages, api_base, concurrency))


def warm_up(api_base: str, workdir: Path, concurrency: int) -> None:
    """Import litellm/assay and make first calls on both code paths (not timed)."""
    # NB: `import assay.models` as the *first* assay import fails with a circular import
    # (assay.models -> _cache -> _types -> assay.judges -> _llm -> assay.models); importing
    # assay.runs first (as the CLI does) avoids it.
    from assay.models._hosted import litellm_module
    from assay.runs import Runner, RunOptions, load_spec

    litellm_module()  # assay's import path: sets suppress_debug_info, telemetry off
    run_plain(render_messages(make_pairs(4, tag="w")), api_base, concurrency)
    run_raw(render_messages(make_pairs(4, tag="w")), api_base, concurrency)
    # assay side: a tiny run (own dataset, cache and output dir) so assay.metrics, pandas,
    # diskcache, tenacity, jinja templates and litellm's client for assay's key are loaded.
    for transport in ("litellm", "openai"):
        d = workdir / f"warmup-{transport}"
        d.mkdir()
        write_dataset(d / "data.jsonl", make_pairs(4, tag="w"))
        write_spec(d / "spec.toml", dataset=d / "data.jsonl", api_base=api_base,
                   concurrency=concurrency, bootstrap=None, name="warmup", transport=transport)
        runner = Runner(load_spec(d / "spec.toml"), RunOptions(
            cache_dir=str(d / "cache"), progress=False, output_dir=str(d / "out")))
        runner.run()
        if runner.cache is not None:
            runner.cache.close()


def run_assay(spec_path: Path, cache_dir: Path, out_dir: Path,
              server_pid: int | None = None) -> dict[str, Any]:
    """Construct (timed separately) and run; then check judgments.jsonl (not timed)."""
    from assay.runs import Runner, RunOptions, load_spec

    t0 = time.perf_counter()
    runner = Runner(load_spec(spec_path), RunOptions(
        cache_dir=str(cache_dir), progress=False, output_dir=str(out_dir)))
    construct_s = time.perf_counter() - t0
    with Meter(server_pid) as m:
        outcome = runner.run()
    with contextlib.suppress(Exception):
        if runner.cache is not None:
            runner.cache.close()
    total, statuses, hits = read_judgments(out_dir)
    return {
        "construct_s": construct_s,
        "run_s": m.wall,
        "cpu_s": m.cpu,
        "server_cpu_s": m.server_cpu,
        "load": (m.load_before, m.load_after),
        "status": outcome.status,
        "recorded": outcome.recorded,
        "lines": total,
        "statuses": dict(statuses),
        "cache_hits": hits,
    }


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--n", type=int, default=5000, help="judgments (N/2 pairs; default 5000)")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--latency-ms", type=float, default=20.0, help="fake server latency")
    ap.add_argument("--repeat", type=int, default=1,
                    help="runs per timed phase (plain and cold alternate); default 1")
    ap.add_argument("--bootstrap", type=int, default=None,
                    help="bootstrap resamples in the spec (default: assay's default, 1000)")
    ap.add_argument("--json", action="store_true", help="also print the figures as JSON")
    ap.add_argument("--timeout", type=float, default=1800.0,
                    help="hard limit for the whole script, seconds (default 1800)")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir (prints its path)")
    ns = ap.parse_args(argv)
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
    result: dict[str, Any] = {"machine": machine_info(),
                              "date": time.strftime("%Y-%m-%d %H:%M:%S %Z")}

    def kill_server() -> None:
        if proc is not None:
            _terminate(proc)

    try:
        with Watchdog(ns.timeout, kill_server):
            proc, url = FakeOpenAIServer.spawn_process(
                content=CONTENT, latency_s=ns.latency_ms / 1000.0,
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
            write_spec(spec, dataset=ds, api_base=api_base, concurrency=ns.concurrency,
                       bootstrap=ns.bootstrap)
            lean_spec = workdir / "spec-lean.toml"
            write_spec(lean_spec, dataset=ds, api_base=api_base, concurrency=ns.concurrency,
                       bootstrap=ns.bootstrap, transport="openai")
            messages = render_messages(pairs)
            assert len(messages) == n
            chars = [sum(len(m["content"]) for m in ms) for ms in messages]
            result["config"] = {
                "judgments": n, "pairs": n_pairs, "concurrency": ns.concurrency,
                "latency_ms": ns.latency_ms, "repeat": ns.repeat,
                "bootstrap": ns.bootstrap if ns.bootstrap is not None else "default(1000)",
                "prompt": PROMPT_REF, "mean_prompt_chars": round(statistics.mean(chars)),
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
                print(f"plain loop   #{r + 1}: {m.wall:7.3f}s wall  {m.cpu:7.3f}s cpu  "
                      f"ok={ok} failed={bad} requests={reqs}  load {m.load_before}->"
                      f"{m.load_after}", flush=True)
                if bad or reqs != n:
                    raise SystemExit(f"plain loop: {bad} failed calls, {reqs} requests")
                plain.append(m)

                cache_dir = workdir / f"cache-{r}"
                before = client.stats().total
                info = run_assay(spec, cache_dir, workdir / f"out-cold-{r}", proc.pid)
                info["requests"] = client.stats().total - before
                print(f"assay cold   #{r + 1}: {info['run_s']:7.3f}s wall  {info['cpu_s']:7.3f}s "
                      f"cpu  (construct {info['construct_s']:.3f}s)  status={info['status']} "
                      f"statuses={info['statuses']} requests={info['requests']}  load "
                      f"{info['load'][0]}->{info['load'][1]}", flush=True)
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
                print(f"assay cached #{r + 1}: {info['run_s']:7.3f}s wall  {info['cpu_s']:7.3f}s "
                      f"cpu  (construct {info['construct_s']:.3f}s)  status={info['status']} "
                      f"cache_hits={info['cache_hits']} requests={info['requests']}", flush=True)
                if info["cache_hits"] != n or info["requests"] != 0 \
                        or info["statuses"] != {"ok": n}:
                    raise SystemExit(f"assay cached run: expected {n} hits, 0 requests: {info}")
                cached.append(info)

            result["plain"] = summarize([m.wall for m in plain], n, [m.cpu for m in plain],
                                        [m.server_cpu for m in plain])
            result["raw"] = summarize([m.wall for m in raw], n, [m.cpu for m in raw],
                                      [m.server_cpu for m in raw])
            result["assay_lean"] = summarize([c["run_s"] for c in lean], n,
                                             [c["cpu_s"] for c in lean],
                                             [c["server_cpu_s"] for c in lean])
            for name, runs in (("assay_cold", cold), ("assay_cached", cached)):
                result[name] = summarize([c["run_s"] for c in runs], n,
                                         [c["cpu_s"] for c in runs],
                                         [c["server_cpu_s"] for c in runs])
                result[name]["construct_s"] = [round(c["construct_s"], 4) for c in runs]
                result[name]["server_requests"] = [c["requests"] for c in runs]
                result[name]["cache_hits"] = [c["cache_hits"] for c in runs]
                result[name + "_incl_construct"] = summarize(
                    [c["run_s"] + c["construct_s"] for c in runs], n)
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
    if ns.json:
        print(json.dumps(result, indent=2))
    return 0 if result["pass"] else 1


def _raw_phase(client: Any, pid: int, messages: list[list[dict[str, str]]], api_base: str,
               concurrency: int, r: int) -> Meter:
    before = client.stats().total
    with Meter(pid) as m:
        ok, bad = run_raw(messages, api_base, concurrency)
    reqs = client.stats().total - before
    print(f"raw aiohttp  #{r + 1}: {m.wall:7.3f}s wall  {m.cpu:7.3f}s cpu  ok={ok} failed={bad} "
          f"requests={reqs}  load {m.load_before}->{m.load_after}", flush=True)
    if bad or reqs != len(messages):
        raise SystemExit(f"raw aiohttp loop: {bad} failed calls, {reqs} requests")
    return m


def _lean_phase(client: Any, pid: int, spec: Path, workdir: Path, n: int,
                r: int) -> dict[str, Any]:
    before = client.stats().total
    info = run_assay(spec, workdir / f"cache-lean-{r}", workdir / f"out-lean-{r}", pid)
    info["requests"] = client.stats().total - before
    print(f"assay lean   #{r + 1}: {info['run_s']:7.3f}s wall  {info['cpu_s']:7.3f}s cpu  "
          f"(construct {info['construct_s']:.3f}s)  status={info['status']} "
          f"statuses={info['statuses']} requests={info['requests']}  load "
          f"{info['load'][0]}->{info['load'][1]}", flush=True)
    if info["statuses"] != {"ok": n} or info["lines"] != n or info["requests"] != n:
        raise SystemExit(f"assay lean run: expected {n} ok judgments and requests, got {info}")
    return info


def report_lean(res: dict[str, Any]) -> dict[str, Any]:
    """The lean transport's three ratios (issue 11) against the plain and raw loops."""
    plain, lean, raw = res["plain"], res["assay_lean"], res["raw"]
    vs_plain = plain["best_s"] / lean["best_s"]
    vs_plain_med = plain["median_s"] / lean["median_s"]
    cpu_share = lean["client_cpu_us_per_judgment"] / plain["client_cpu_us_per_judgment"]
    vs_raw = raw["best_s"] / lean["best_s"]
    vs_raw_med = raw["median_s"] / lean["median_s"]
    checks = (vs_plain >= TARGET_LEAN_VS_PLAIN, cpu_share <= TARGET_LEAN_CPU_SHARE,
              vs_raw >= TARGET_LEAN_VS_RAW)
    verdicts = ["PASS" if ok else "FAIL" for ok in checks]
    print(f"assay_lean / plain throughput : {vs_plain:6.3f}x best, {vs_plain_med:6.3f}x "
          f"median  (target >= {TARGET_LEAN_VS_PLAIN:g})   {verdicts[0]}")
    print(f"assay_lean / plain client CPU : {cpu_share:6.3f} of the plain loop's per judgment "
          f"(target <= {TARGET_LEAN_CPU_SHARE:g})   {verdicts[1]}")
    print(f"assay_lean / raw aiohttp      : {vs_raw:6.3f}x best, {vs_raw_med:6.3f}x "
          f"median  (target >= {TARGET_LEAN_VS_RAW:g})   {verdicts[2]}")
    return {
        "assay_lean_over_plain_best": round(vs_plain, 4),
        "assay_lean_over_plain_median": round(vs_plain_med, 4),
        "assay_lean_cpu_share_of_plain": round(cpu_share, 4),
        "assay_lean_over_raw_best": round(vs_raw, 4),
        "assay_lean_over_raw_median": round(vs_raw_med, 4),
        "lean_targets": {"assay_lean_over_plain": TARGET_LEAN_VS_PLAIN,
                         "assay_lean_cpu_share_of_plain": TARGET_LEAN_CPU_SHARE,
                         "assay_lean_over_raw": TARGET_LEAN_VS_RAW},
        "pass_lean": all(checks),
    }


def report(res: dict[str, Any]) -> None:
    m, c = res["machine"], res["config"]
    print()
    print(f"date:    {res['date']}")
    print(f"machine: {m['cpu_count']} cores (affinity {m['affinity']}), {m['processor']}, "
          f"{m['implementation']} {m['python']}, {m['platform']}")
    print(f"         litellm {m['litellm']}, openai {m['openai']}, httpx {m['httpx']}, "
          f"aiohttp {m['aiohttp']}, pydantic {m['pydantic']}, assay {m['assay']}")
    print(f"config:  {c['judgments']} judgments ({c['pairs']} pairs x 2 members), concurrency "
          f"{c['concurrency']}, server latency {c['latency_ms']} ms, prompt {c['prompt']} "
          f"(~{c['mean_prompt_chars']} chars), bootstrap {c['bootstrap']}, repeat {c['repeat']}")
    print(f"         latency-bound ideal: {c['ideal_s']} s "
          f"({c['judgments']} x {c['latency_ms']} ms / {c['concurrency']})")
    print()
    hdr = (f"{'phase':<32}{'judgments':>10}{'best s':>9}{'median s':>10}{'best j/s':>10}"
           f"{'median j/s':>11}{'cpu us/j':>10}")
    print(hdr)
    print("-" * len(hdr))
    rows = [
        ("raw aiohttp loop (ceiling)", res["raw"]),
        ("plain litellm loop", res["plain"]),
        ("assay lean   (run() only)", res["assay_lean"]),
        ("assay cold   (run() only)", res["assay_cold"]),
        ("assay cold   (construct + run)", res["assay_cold_incl_construct"]),
        ("assay cached (run() only)", res["assay_cached"]),
        ("assay cached (construct + run)", res["assay_cached_incl_construct"]),
    ]
    for name, s in rows:
        cpu = s.get("client_cpu_us_per_judgment")
        cpu_txt = f"{cpu:>10.0f}" if cpu is not None else f"{'':>10}"
        print(f"{name:<32}{s['judgments']:>10}{s['best_s']:>9.3f}{s['median_s']:>10.3f}"
              f"{s['best_per_s']:>10.1f}{s['median_per_s']:>11.1f}{cpu_txt}")
    print()
    print("lean      = assay with transport = \"openai\" (pooled aiohttp), an empty cache.\n"
          "run()     = Runner(...).run(): plan, render, calls, parsing, cache, judgments.jsonl,\n"
          "            manifest, metrics (bootstrap CIs). Construct = load_spec + Runner(...)\n"
          "            (dataset load, judge build), timed outside run().\n"
          "cpu us/j  = this process's CPU time per judgment (best run); robust to other load.")
    print()
    ratio_cold = res["plain"]["best_s"] / res["assay_cold"]["best_s"]
    ratio_cold_med = res["plain"]["median_s"] / res["assay_cold"]["median_s"]
    ratio_cache = res["assay_cold"]["best_s"] / res["assay_cached"]["best_s"]
    ratio_cache_med = res["assay_cold"]["median_s"] / res["assay_cached"]["median_s"]
    cpu_ratio = (res["plain"]["client_cpu_us_per_judgment"]
                 / res["assay_cold"]["client_cpu_us_per_judgment"])
    ok1 = ratio_cold >= TARGET_COLD_VS_PLAIN
    ok2 = ratio_cache >= TARGET_COLD_VS_CACHED
    print(f"assay_cold / plain throughput : {ratio_cold:6.3f}x best, {ratio_cold_med:6.3f}x "
          f"median  (target >= {TARGET_COLD_VS_PLAIN})   {'PASS' if ok1 else 'FAIL'}")
    print(f"   same, by client CPU/judgment: {cpu_ratio:6.3f}x")
    print(f"cold time / cached time       : {ratio_cache:6.1f}x best, {ratio_cache_med:6.1f}x "
          f"median  (target >= {TARGET_COLD_VS_CACHED:g}x)   {'PASS' if ok2 else 'FAIL'}")
    lean_ratios = report_lean(res)
    print(f"server requests: plain {c['judgments']} per run; assay cold "
          f"{res['assay_cold']['server_requests']}; assay cached "
          f"{res['assay_cached']['server_requests']} (cache hits "
          f"{res['assay_cached']['cache_hits']})")
    if res["plain"].get("server_cpu_s"):
        print(f"server process CPU s per run: plain {res['plain']['server_cpu_s']}, cold "
              f"{res['assay_cold'].get('server_cpu_s')}, cached "
              f"{res['assay_cached'].get('server_cpu_s')}")
    busy = (res.get("load_avg_end") or 0) > (m["cpu_count"] or 1) + 0.5
    print(f"load average (1 min) at end: {res.get('load_avg_end')} on {m['cpu_count']} cores"
          f"{'  <-- other load present: wall figures are noisy' if busy else ''}")
    res["ratios"] = {
        "assay_cold_over_plain_best": round(ratio_cold, 4),
        "assay_cold_over_plain_median": round(ratio_cold_med, 4),
        "assay_cold_over_plain_by_cpu": round(cpu_ratio, 4),
        "cold_over_cached_best": round(ratio_cache, 2),
        "cold_over_cached_median": round(ratio_cache_med, 2),
        "targets": {"assay_cold_over_plain": TARGET_COLD_VS_PLAIN,
                    "cold_over_cached": TARGET_COLD_VS_CACHED},
        "pass_cold_over_plain": ok1,
        "pass_cold_over_cached": ok2,
    }
    res["ratios"].update(lean_ratios)
    res["pass"] = ok1 and ok2 and lean_ratios["pass_lean"]


if __name__ == "__main__":
    sys.exit(main())
