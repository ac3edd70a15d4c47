"""bench_throughput's timed phases: the plain litellm loop, the raw aiohttp loop and the
assay runs, each measured for wall time and this process's CPU time."""

from __future__ import annotations

import os

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

import asyncio
import contextlib
import json
import statistics
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from _throughput_data import CONTENT, MODEL, make_pairs, render_messages, write_dataset, write_spec


def summarize(
    times: list[float],
    n: int,
    cpu: list[float] | None = None,
    server_cpu: list[float | None] | None = None,
) -> dict[str, Any]:
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
        self.server_cpu = (
            (srv1 - self._srv0) if srv1 is not None and self._srv0 is not None else None
        )
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


async def _plain_loop(
    messages: list[list[dict[str, str]]], api_base: str, concurrency: int, total_timeout: float
) -> tuple[int, int]:
    import litellm

    sem = asyncio.Semaphore(concurrency)

    async def one(msgs: list[dict[str, str]]) -> bool:
        async with sem:
            resp = await litellm.acompletion(
                model=MODEL,
                api_base=api_base,
                api_key="sk-bench",
                messages=msgs,
                max_retries=0,
                temperature=0,
                max_tokens=1024,
            )
            return bool(resp.choices[0].message.content == CONTENT)

    # One deadline for the whole loop (not a wait_for per call, which would add a Task per
    # call to the baseline); the script's watchdog bounds everything else.
    async with asyncio.timeout(total_timeout):
        results = await asyncio.gather(*(one(m) for m in messages), return_exceptions=True)
    ok = sum(1 for r in results if r is True)
    return ok, len(results) - ok


def run_plain(
    messages: list[list[dict[str, str]]],
    api_base: str,
    concurrency: int,
    total_timeout: float = 600.0,
) -> tuple[int, int]:
    """The baseline: returns (ok, failed) calls."""
    return asyncio.run(_plain_loop(messages, api_base, concurrency, total_timeout))


async def _raw_loop(
    messages: list[list[dict[str, str]]], api_base: str, concurrency: int
) -> tuple[int, int]:
    import aiohttp

    sem = asyncio.Semaphore(concurrency)
    url = api_base + "/chat/completions"
    headers = {"Authorization": "Bearer sk-bench"}
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector, headers=headers) as session:

        async def one(msgs: list[dict[str, str]]) -> bool:
            body = {
                "model": MODEL.split("/", 1)[1],
                "messages": msgs,
                "temperature": 0,
                "max_tokens": 1024,
            }
            async with sem, session.post(url, json=body) as resp:
                data = await resp.json()
            return bool(data["choices"][0]["message"]["content"] == CONTENT)

        results = await asyncio.gather(*(one(m) for m in messages), return_exceptions=True)
    ok = sum(1 for r in results if r is True)
    return ok, len(results) - ok


def run_raw(
    messages: list[list[dict[str, str]]], api_base: str, concurrency: int
) -> tuple[int, int]:
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
        write_spec(
            d / "spec.toml",
            dataset=d / "data.jsonl",
            api_base=api_base,
            concurrency=concurrency,
            bootstrap=None,
            name="warmup",
            transport=transport,
        )
        runner = Runner(
            load_spec(d / "spec.toml"),
            RunOptions(cache_dir=str(d / "cache"), progress=False, output_dir=str(d / "out")),
        )
        runner.run()
        if runner.cache is not None:
            runner.cache.close()


def run_assay(
    spec_path: Path, cache_dir: Path, out_dir: Path, server_pid: int | None = None
) -> dict[str, Any]:
    """Construct (timed separately) and run; then check judgments.jsonl (not timed)."""
    from assay.runs import Runner, RunOptions, load_spec

    t0 = time.perf_counter()
    runner = Runner(
        load_spec(spec_path),
        RunOptions(cache_dir=str(cache_dir), progress=False, output_dir=str(out_dir)),
    )
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


def _raw_phase(
    client: Any,
    pid: int,
    messages: list[list[dict[str, str]]],
    api_base: str,
    concurrency: int,
    r: int,
) -> Meter:
    before = client.stats().total
    with Meter(pid) as m:
        ok, bad = run_raw(messages, api_base, concurrency)
    reqs = client.stats().total - before
    print(
        f"raw aiohttp  #{r + 1}: {m.wall:7.3f}s wall  {m.cpu:7.3f}s cpu  ok={ok} failed={bad} "
        f"requests={reqs}  load {m.load_before}->{m.load_after}",
        flush=True,
    )
    if bad or reqs != len(messages):
        raise SystemExit(f"raw aiohttp loop: {bad} failed calls, {reqs} requests")
    return m


def _lean_phase(client: Any, pid: int, spec: Path, workdir: Path, n: int, r: int) -> dict[str, Any]:
    before = client.stats().total
    info = run_assay(spec, workdir / f"cache-lean-{r}", workdir / f"out-lean-{r}", pid)
    info["requests"] = client.stats().total - before
    print(
        f"assay lean   #{r + 1}: {info['run_s']:7.3f}s wall  {info['cpu_s']:7.3f}s cpu  "
        f"(construct {info['construct_s']:.3f}s)  status={info['status']} "
        f"statuses={info['statuses']} requests={info['requests']}  load "
        f"{info['load'][0]}->{info['load'][1]}",
        flush=True,
    )
    if info["statuses"] != {"ok": n} or info["lines"] != n or info["requests"] != n:
        raise SystemExit(f"assay lean run: expected {n} ok judgments and requests, got {info}")
    return info
