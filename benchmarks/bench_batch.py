"""Batch mode (`mode = "batch"`) at scale, through the loopback server's
files and batches endpoints.

Phases, each against the same in-process `FakeOpenAIServer` (its batch endpoints answer
every line as its chat endpoint would; the answer's label is a function of the request,
so every record can be checked against the request it came from):

* cold       -- `Runner(spec).run()` on N judgments (N/2 distinct pairs x 2 members,
                `generic-support@1`, `mode = "batch"`) with an empty cache: the batch
                file written and uploaded, one batch created, polled, the output file
                downloaded and mapped to N records and cache entries.
* cached     -- the same spec into a new output directory with the same cache: N cache
                hits, no upload, no batch, no chat request.
* killed     -- `python -m assay run` in a subprocess, a fresh cache and output directory,
                batches held in progress by the server; SIGKILL once it has polled twice.
* resumed    -- the same run resumed in-process: it must poll the recorded batch id
                (batches created in the killed+resumed pair: exactly 1) and record N.

Checks (exit 1 when one fails): N records each, every key once, every label the one the
server answered for that request, cold/resumed records not cache hits, cached ones all
hits, no chat request in any phase, one batch and one upload per batch run.

Usage::

    python benchmarks/bench_batch.py [--n 10000] [--poll-s 0.2] [--json] [--timeout 900]
                                     [--update-readme]

`--update-readme` rewrites the `bench:batch` blocks of docs/benchmarks.md and
benchmarks/README.md from the output (benchmarks/_readme_blocks.py).
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from datetime import UTC, datetime  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _readme_blocks import Measurement, preformatted, update_from_cli  # noqa: E402
from _throughput_data import machine_info, make_pairs, write_dataset  # noqa: E402

from assay.runs import Runner, RunOptions, iter_records, load_spec  # noqa: E402
from assay.testing import FakeOpenAIServer, reply  # noqa: E402
from assay.testing._behaviors import Behavior, _message_text  # noqa: E402

LABELS = ["fully_supported", "partially_supported", "unsupported", "contradicted", "irrelevant"]
MODEL = "openai/gpt-4o-mini"
_RECORD = re.compile(r"\(record (\d{6})\)")


def label_for(pair_index: int, member: str) -> str:
    """The label the server answers for one pair member (also what the check expects)."""
    digest = hashlib.sha256(f"{pair_index}:{member}".encode()).digest()
    return LABELS[digest[0] % len(LABELS)]


def answer(body: dict[str, Any]) -> Behavior:
    """The server's answer: a label fixed by the request's claim (record number, member)."""
    text = _message_text(body)
    claim = text.rsplit("Claim", 1)[-1]
    found = _RECORD.search(claim)
    index = int(found.group(1)) if found else -1
    member = "raised" if "shown to" in claim else "calibrated"
    content = json.dumps({"label": label_for(index, member), "confidence": 0.9, "rationale": "b"})
    return reply(content)


def write_spec(path: Path, dataset: Path, api_base: str, poll_s: float) -> None:
    path.write_text(
        "\n".join(
            [
                'name = "bench-batch"',
                "bootstrap = 0",
                "[[datasets]]",
                'name = "bench-data"',
                f"path = {json.dumps(str(dataset))}",
                "[[judges]]",
                f'models = ["{MODEL}"]',
                'prompts = ["generic-support@1"]',
                f"api_base = {json.dumps(api_base)}",
                'structured_output = "off"',
                'transport = "openai"',
                'mode = "batch"',
                f"batch_poll_s = {poll_s}",
                "",
            ]
        ),
        encoding="utf-8",
    )


def check(out: Path, n: int, *, cached: bool) -> list[str]:
    """What is wrong with a run directory's records (empty: all correct)."""
    problems: list[str] = []
    records = list(iter_records(out / "judgments.jsonl"))
    keys = {(r.judge_id, r.pair_id, r.member.value) for r in records}
    if len(records) != n or len(keys) != n:
        problems.append(f"{out.name}: {len(records)} records, {len(keys)} distinct, want {n}")
    wrong = [
        r
        for r in records
        if r.status.value != "ok" or r.label != label_for(int(r.pair_id[-6:]), r.member.value)
    ]
    if wrong:
        problems.append(f"{out.name}: {len(wrong)} records with another label than answered")
    if any(r.cache_hit != cached for r in records):
        problems.append(f"{out.name}: cache_hit is not {cached} on every record")
    return problems


class Counts:
    """Server counters at one moment, to report each phase's own."""

    def __init__(self, server: FakeOpenAIServer) -> None:
        b = server.batches
        self.values = (b.created, b.uploads, b.polls, server.stats.total)

    def since(self, before: Counts) -> dict[str, int]:
        names = ("batches_created", "uploads", "polls", "chat_requests")
        return {k: a - b for k, a, b in zip(names, self.values, before.values, strict=True)}


def run_phase(spec: Path, out: Path, cache: Path) -> float:
    options = RunOptions(output_dir=str(out), progress=False, cache_dir=str(cache))
    runner = Runner(load_spec(spec), options)
    started = time.perf_counter()
    outcome = runner.run()
    if outcome.status != "complete":
        raise SystemExit(f"run {out} ended {outcome.status}: {outcome.message}")
    return time.perf_counter() - started


def kill_while_polling(server: FakeOpenAIServer, spec: Path, out: Path, cache: Path) -> float:
    """The CLI in a subprocess, SIGKILLed once it has polled twice; seconds it ran."""
    server.batches.hold = True
    polls = server.batches.polls
    argv = ["run", str(spec), "--output-dir", str(out), "--cache-dir", str(cache)]
    started = time.perf_counter()
    child = subprocess.Popen(
        [sys.executable, "-m", "assay", *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ),
    )
    try:
        while server.batches.polls < polls + 2:
            if child.poll() is not None:
                raise SystemExit(f"the run to kill ended first (exit {child.returncode})")
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(30)
        server.batches.hold = False
    return time.perf_counter() - started


def measure(n: int, poll_s: float, tmp: Path) -> dict[str, Any]:
    dataset = tmp / "pairs.jsonl"
    write_dataset(dataset, make_pairs(n // 2))
    phases: list[dict[str, Any]] = []
    problems: list[str] = []
    with FakeOpenAIServer(responder=answer) as server:
        server.batches.polls_to_finish = 3  # in progress for two polls, done at the third
        spec = tmp / "batch.toml"
        write_spec(spec, dataset, server.base_url, poll_s)
        plan = [
            ("cold batch run", "cold", "cache", False),
            ("re-run, fully cached", "cached", "cache", True),
        ]
        for label, out, cache, cached in plan:
            before = Counts(server)
            wall = run_phase(spec, tmp / out, tmp / cache)
            phases.append({"phase": label, "wall_s": wall, **Counts(server).since(before)})
            problems += check(tmp / out, n, cached=cached)
        before = Counts(server)
        killed = kill_while_polling(server, spec, tmp / "killed", tmp / "cache2")
        phases.append(
            {
                "phase": "killed while polling (SIGKILL)",
                "wall_s": killed,
                **Counts(server).since(before),
            }
        )
        middle = Counts(server)
        wall = run_phase(spec, tmp / "killed", tmp / "cache2")
        phases.append(
            {
                "phase": "resumed: polls the recorded batch",
                "wall_s": wall,
                **Counts(server).since(middle),
            }
        )
        problems += check(tmp / "killed", n, cached=False)
        pair = Counts(server).since(before)
    expect = {"cold batch run": (1, 1), "re-run, fully cached": (0, 0)}
    for row in phases:
        want = expect.get(row["phase"])
        if want is not None and (row["batches_created"], row["uploads"]) != want:
            problems.append(f"{row['phase']}: {row['batches_created']} batches, want {want[0]}")
        if row["chat_requests"]:
            problems.append(f"{row['phase']}: {row['chat_requests']} online chat requests")
    if (pair["batches_created"], pair["uploads"]) != (1, 1):
        problems.append(f"killed + resumed created {pair['batches_created']} batches, want 1")
    batch_file = next((tmp / "cold" / "batches").glob("*.jsonl"))
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "machine": machine_info(),
        "n": n,
        "poll_s": poll_s,
        "batch_file_mb": batch_file.stat().st_size / 1e6,
        "load_average": os.getloadavg(),
        "phases": phases,
        "problems": problems,
    }


def render(result: dict[str, Any]) -> str:
    m = result["machine"]
    lines = [
        f"date:    {result['date']}",
        f"machine: {m['cpu_count']} cores (affinity {m['affinity']}), {m['processor']}, "
        f"CPython {m['python']}, aiohttp {m['aiohttp']}, assay {m['assay']}",
        "load:    {:.1f} {:.1f} {:.1f} (1/5/15 min, at the end)".format(*result["load_average"]),
        f"config:  {result['n']} judgments ({result['n'] // 2} pairs x 2 members), "
        f"generic-support@1, batch_poll_s {result['poll_s']}, "
        f"batch file {result['batch_file_mb']:.1f} MB",
        "",
        f"{'phase':<36}{'wall s':>8}{'batches':>9}{'uploads':>9}{'polls':>7}{'online':>8}",
        "-" * 77,
    ]
    for row in result["phases"]:
        lines.append(
            f"{row['phase']:<36}{row['wall_s']:>8.2f}{row['batches_created']:>9}"
            f"{row['uploads']:>9}{row['polls']:>7}{row['chat_requests']:>8}"
        )
    lines.append("")
    verdict = "PASS" if not result["problems"] else "FAIL: " + "; ".join(result["problems"])
    lines.append(f"records: {result['n']} per run directory, labels as answered: {verdict}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000, help="judgments per run (even)")
    parser.add_argument("--poll-s", type=float, default=0.2, help="batch_poll_s of the spec")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--timeout", type=float, default=900.0, help="watchdog, seconds")
    parser.add_argument("--update-readme", action="store_true")
    args = parser.parse_args()
    measured = Measurement.of_this_run("bench_batch.py")
    watchdog = threading.Timer(args.timeout, lambda: os._exit(3))
    watchdog.daemon = True
    watchdog.start()
    tmp = Path(tempfile.mkdtemp(prefix="bench-batch-"))
    try:
        result = measure(args.n, args.poll_s, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    text = render(result)
    print(json.dumps(result, indent=2) if args.json else text)
    if args.update_readme:
        return update_from_cli("batch", measured, preformatted(text)) or (
            1 if result["problems"] else 0
        )
    return 1 if result["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
