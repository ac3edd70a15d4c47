"""`assay view` at scale: a 110,000-judgment items run, served to its first page and filtered.

Writes a synthetic items run directory (a manifest as `assay run` writes it, items.jsonl
with gold, item_judgments.jsonl: 4 judges over 25,000 items, a tenth of them pairwise
and judged in both orders, ~2% parse errors, ~1 KB raw outputs, every record through
`ItemJudgmentRecord`), then measures the real thing in a fresh process:
`python -m assay view RUN --port P --read-only`, timed from the process start to the
first page of `/api/runs/{id}/judgments` served, with the session token it prints
(cold: imports, the server's start and the index build included; the time to the
printed URL is shown apart), then each filter and sort below on the warm index (the
median and the slowest of `--repeat` requests, each one HTTP round trip), and the
server's peak RSS (VmHWM of /proc/PID/status). Targets: first page <= 1 s, filter or
sort <= 300 ms, RSS <= 400 MB; exits 1 when one is missed.

Before the `assay view` command exists (`--library`, or automatically when `python -m
assay view --help` fails), the same queries go to `assay.view.index.ViewIndex` in a
fresh process instead, and the table says so.

    python benchmarks/bench_view.py [--items 25000] [--judges 4] [--repeat 5]
        [--library] [--keep DIR] [--json] [--update-readme]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _readme_blocks import Measurement, update_from_cli  # noqa: E402

if TYPE_CHECKING:
    import numpy as np

TARGET_FIRST_S = 1.0
TARGET_QUERY_S = 0.3
TARGET_RSS_MB = 400.0
LABELS = ("supported", "partially_supported", "unsupported")
PREFERENCES = ("A", "B", "tie")
NEEDLE = "contradicts the cited trial"  # in ~1% of raw outputs: what the search finds
WORDS = ("the", "evidence", "states", "effect", "population", "cohort", "trial", "dose",
         "outcome", "risk", "ratio", "interval", "patients", "reported", "significant",
         "baseline", "follow", "up", "randomised", "placebo", "adverse", "events")  # fmt: skip
# (name, URL query): the warm measurements, in order.
FILTERS: tuple[tuple[str, str], ...] = (
    ("status = parse_error", "status=parse_error"),
    ("one judge", "judge=openai/model-b::judge@2"),
    ("outcome = wrong", "outcome=wrong"),
    ("judges disagree", "disagreeing=true"),
    ("search raw outputs", "search=" + NEEDLE.replace(" ", "+")),
    ("sort by latency, descending", "sort=latency_s&desc=true"),
    ("page 50", "page=50"),
    ("two judges differ + wrong", "differ=openai/model-a::judge@1&differ=openai/model-b::judge@2"
     "&outcome=wrong"),
)  # fmt: skip


def _judges(n: int) -> list[tuple[str, str, int]]:
    """(judge id, model, prompt version): models x prompt versions, as a spec makes them."""
    out = []
    for j in range(n):
        model, version = f"openai/model-{'ab'[j // 2 % 2]}{j // 4 or ''}", j % 2 + 1
        out.append((f"{model}::judge@{version}", model, version))
    return out


def _raw(rng: np.random.Generator, answer: dict[str, Any]) -> str:
    """A ~1 KB model answer: the JSON verdict and a rationale of varied words."""
    words = " ".join(rng.choice(WORDS, 140))
    if rng.random() < 0.01:
        words += " and it " + NEEDLE
    return json.dumps({**answer, "rationale": words})


def _record(rng: np.random.Generator, base: dict[str, Any], right: bool, gold: str) -> str:
    from assay.core.records import ItemJudgmentRecord

    row = dict(base, latency_s=float(rng.gamma(2.0, 0.4)), attempts=1 + int(rng.random() < 0.05))
    row["cache_hit"] = bool(rng.random() < 0.1)
    if rng.random() < 0.02:
        row.update(status="parse_error", error="no label in the answer", raw_output="I think")
    elif row.get("order"):
        pref = gold if right else str(rng.choice(PREFERENCES))
        label = {"A": "a", "B": "b", "tie": "tie"}[pref]
        if row["order"] == "ba" and pref != "tie":
            label = "b" if label == "a" else "a"
        row.update(status="ok", label=label, preference=pref, raw_output=_raw(rng, {"v": label}))
    else:
        label = gold if right else str(rng.choice(LABELS))
        row.update(status="ok", label=label, raw_output=_raw(rng, {"label": label}))
    return ItemJudgmentRecord.model_validate(row).model_dump_json() + "\n"


def _manifest(items: int, judges: list[tuple[str, str, int]], n_judgments: int) -> dict[str, Any]:
    per = n_judgments // len(judges)
    stats = {"planned": per, "recorded": per, "cost_usd": round(per * 7.2e-05, 6)}
    return {
        "manifest_version": 3, "run_id": "bench-view-0001", "name": "bench-view",
        "created_at": "2026-11-26T05:00:00Z", "updated_at": "2026-11-26T06:00:00Z",
        "status": "complete", "planned_judgments": n_judgments,
        "recorded_judgments": n_judgments,
        "datasets": [{"name": "bench", "path": "bench.jsonl", "rows": items}],
        "judges": [{"id": i, "model": m, "prompt": f"judge@{v}", "stats": stats}
                   for i, m, v in judges],
    }  # fmt: skip


def write_run(run_dir: Path, items: int, judges: int, seed: int = 0) -> int:
    """The run directory; returns the number of judgments written."""
    import numpy as np  # here: the measuring child process does not pay for it

    rng = np.random.default_rng(seed)
    ids = _judges(judges)
    pairwise = rng.random(items) < 0.1
    gold = [str(rng.choice(PREFERENCES)) if p else str(rng.choice(LABELS)) for p in pairwise]
    run_dir.mkdir(parents=True)
    with (run_dir / "items.jsonl").open("w") as fh:
        for i in range(items):
            key = "gold_preference" if pairwise[i] else "gold_label"
            row = {"dataset": "bench", "item_id": f"item-{i:06d}", "pairwise": bool(pairwise[i])}
            fh.write(json.dumps({**row, key: gold[i]}) + "\n")
    n = 0
    with (run_dir / "item_judgments.jsonl").open("w") as fh:
        for j, (judge_id, model, version) in enumerate(ids):
            base = {"dataset": "bench", "judge_id": judge_id, "model": model,
                    "prompt_id": "judge", "prompt_version": version,
                    "usage": {"prompt_tokens": 412, "completion_tokens": 31,
                              "total_tokens": 443, "cost_usd": 7.2e-05},
                    "recorded_at": "2026-11-26T05:00:00Z"}  # fmt: skip
            for i in range(items):
                right = bool(rng.random() < 0.6 + 0.08 * j)
                for order in ("ab", "ba") if pairwise[i] else (None,):
                    item = dict(base, item_id=f"item-{i:06d}", order=order)
                    fh.write(_record(rng, item, right, gold[i]))
                    n += 1
    manifest = _manifest(items, ids, n)
    (run_dir / "manifest.json").write_text(json.dumps(manifest, indent=2))
    return n


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def vm_hwm_mb(pid: int) -> float:
    """Peak resident set size of a live process (VmHWM), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _get(url: str, token: str, timeout: float = 60.0) -> dict[str, Any]:
    """One JSON GET with the session token; an HTTP error status stops the benchmark."""
    request = urllib.request.Request(url, headers={"X-Assay-Token": token})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:
            body: dict[str, Any] = json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        raise SystemExit(f"GET {url}: HTTP {exc.code}: {exc.read().decode()[:300]}") from None
    return body


def _token(proc: subprocess.Popen[str]) -> str:
    """The session token from the URL `assay view` prints once it listens."""
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "token=" not in line:
        err = proc.stderr.read() if proc.stderr else ""
        raise SystemExit(f"assay view printed {line.strip()!r}: {err.strip()}")
    return line.split("token=", 1)[1].split()[0]


def has_view_command() -> bool:
    """Whether `python -m assay view` exists yet (the server's part of the work)."""
    done = subprocess.run(
        [sys.executable, "-m", "assay", "view", "--help"], capture_output=True, timeout=120
    )
    return done.returncode == 0


@contextmanager
def _server(run_dir: Path, port: int) -> Iterator[subprocess.Popen[str]]:
    args = [sys.executable, "-m", "assay", "view", str(run_dir), "--port", str(port)]
    proc = subprocess.Popen([*args, "--read-only"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def measure_http(run_dir: Path, repeat: int) -> dict[str, Any]:
    """Start `assay view`, poll until the first page is served, then time each filter."""
    from assay.view.index import run_id

    port = _free_port()
    base = f"http://127.0.0.1:{port}/api/runs/{run_id(run_dir)}/judgments"
    start = time.perf_counter()
    with _server(run_dir, port) as proc:
        token = _token(proc)  # printed once the socket listens: no polling needed
        listening = time.perf_counter() - start
        rss_listening = vm_hwm_mb(proc.pid)
        first = _get(base, token)
        cold = time.perf_counter() - start
        steps = [_timed(partial(_get, f"{base}?{q}", token), repeat) for _, q in FILTERS]
        rss = vm_hwm_mb(proc.pid)
    return {"mode": "http", "first_s": cold, "listen_s": listening, "total": first["total"],
            "steps": steps, "rss_mb": rss, "rss_listening_mb": rss_listening}  # fmt: skip


def _timed(call: Callable[[], dict[str, Any]], repeat: int) -> dict[str, Any]:
    times, total = [], 0
    for _ in range(repeat):
        t = time.perf_counter()
        total = call()["total"]
        times.append(time.perf_counter() - t)
    return {"median_s": statistics.median(times), "max_s": max(times), "total": total}


def child_library(run_dir: Path, repeat: int) -> None:
    """Child process (`--child`): ViewIndex alone, as the server would use it."""
    from urllib.parse import parse_qs

    from assay.view.index import JudgmentQuery, ViewIndex, run_id

    def query(text: str) -> dict[str, Any]:
        fields: dict[str, Any] = {}
        for name, values in parse_qs(text).items():
            many = JudgmentQuery.model_fields[name].annotation == list[str]
            fields[name] = values if many else values[0]
        page = index.query(run_id(run_dir), JudgmentQuery.model_validate(fields))
        page.model_dump_json()  # what the server would send
        return {"total": page.total}

    index = ViewIndex([run_dir])
    index.runs()
    first = query("")
    print(json.dumps({"first": time.time(), "total": first["total"]}), flush=True)
    steps = [_timed(partial(query, q), repeat) for _, q in FILTERS]
    print(json.dumps({"steps": steps, "rss_mb": vm_hwm_mb(os.getpid())}), flush=True)
    index.close()


def measure_library(run_dir: Path, repeat: int) -> dict[str, Any]:
    args = [sys.executable, __file__, "--child", str(run_dir), "--repeat", str(repeat)]
    start = time.time()
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the measuring process failed: {done.stderr.strip()}")
    first, rest = (json.loads(line) for line in done.stdout.splitlines()[:2])
    return {"mode": "library", "first_s": first["first"] - start, "total": first["total"],
            "steps": rest["steps"], "rss_mb": rest["rss_mb"]}  # fmt: skip


def ok(met: bool) -> str:
    return "met" if met else "**NOT met**"


def table(fig: dict[str, Any], n_judgments: int, items: int) -> str:
    """The figures, target beside each, as markdown."""
    how = (
        "`python -m assay view RUN --read-only`, HTTP"
        if fig["mode"] == "http"
        else "`ViewIndex` in a fresh process (no `assay view` command yet)"
    )
    lines = [
        f"{n_judgments:,} judgments ({items:,} items, a tenth pairwise), measured through {how}:",
        "",
        "| measurement | rows matched | median | slowest | target | |",
        "|---|---:|---:|---:|---:|---|",
        f"| start → first page (cold, index built) | {fig['total']:,} | {fig['first_s']:.3f} s "
        f"| – | ≤ {TARGET_FIRST_S:.0f} s | {ok(fig['first_s'] <= TARGET_FIRST_S)} |",
    ]
    if "listen_s" in fig:
        lines.append(f"| of which start → URL printed (listening) | | {fig['listen_s']:.3f} s "
                     "| – | | |")  # fmt: skip
    for (name, _), step in zip(FILTERS, fig["steps"], strict=True):
        met = step["max_s"] <= TARGET_QUERY_S
        lines.append(
            f"| {name} | {step['total']:,} | {step['median_s'] * 1000:.0f} ms "
            f"| {step['max_s'] * 1000:.0f} ms | ≤ {TARGET_QUERY_S * 1000:.0f} ms | {ok(met)} |"
        )
    lines.append(
        f"| peak RSS (VmHWM) | | {fig['rss_mb']:.0f} MB | | ≤ {TARGET_RSS_MB:.0f} MB "
        f"| {ok(fig['rss_mb'] <= TARGET_RSS_MB)} |"
    )
    if "rss_listening_mb" in fig:
        lines.append(f"| of which before the first request (listening) | | "
                     f"{fig['rss_listening_mb']:.0f} MB | | | |")  # fmt: skip
    return "\n".join(lines)


def all_met(fig: dict[str, Any]) -> bool:
    return (
        fig["first_s"] <= TARGET_FIRST_S
        and all(s["max_s"] <= TARGET_QUERY_S for s in fig["steps"])
        and fig["rss_mb"] <= TARGET_RSS_MB
    )


def run(args: argparse.Namespace) -> int:
    measured = Measurement.of_this_run("bench_view.py")
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-view-"))
    run_dir = work / "run"
    try:
        t = time.perf_counter()
        n = write_run(run_dir, args.items, args.judges)
        size = (run_dir / "item_judgments.jsonl").stat().st_size / 2**20
        print(f"wrote {n:,} judgments ({size:.0f} MB) in {time.perf_counter() - t:.1f} s",
              flush=True)  # fmt: skip
        http = not args.library and has_view_command()
        fig = measure_http(run_dir, args.repeat) if http else measure_library(run_dir, args.repeat)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    text = table(fig, n, args.items)
    print(json.dumps({**fig, "judgments": n}) if args.json else text)
    status = 0 if all_met(fig) else 1
    if args.update_readme:
        status = update_from_cli("view", measured, text) or status
    return status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=25_000)
    parser.add_argument("--judges", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=5, help="requests per filter")
    parser.add_argument("--library", action="store_true", help="ViewIndex, not the server")
    parser.add_argument("--keep", help="write the run directory here and keep it")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--update-readme", action="store_true", help="rewrite bench:view")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_library(Path(args.child), args.repeat)
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
