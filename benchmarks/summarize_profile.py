"""Summarize a py-spy ``--format raw`` (collapsed stacks) profile of profile_phase.py.

Only samples under ``timed_region`` are counted. Prints (1) the share of named buckets:
each sample goes to the INNERMOST frame that matches a bucket rule (so pydantic called
from the judgments writer counts as "judgments.jsonl write", and litellm called from
assay's client counts as litellm); asyncio machinery only counts as such when no assay
or litellm frame encloses it; (2) the top functions by self and inclusive samples.

    python benchmarks/summarize_profile.py cold.txt [--n 5000] [--wall CPU_S] [--top 30]
"""

from __future__ import annotations

import argparse
import re
from collections import Counter


def _fn(qualname_tail: str, file: str) -> str:
    """A frame regex: a function whose qualname ends with ``qualname_tail`` in ``file``."""
    return rf"^([\w<>]+\.)*{qualname_tail} \(.*{re.escape(file)}:"


# (bucket, regex on a frame "func (file:line)"). Each sample goes to the innermost frame
# that matches a rule (asyncio machinery only when nothing else encloses it).
BUCKETS: list[tuple[str, str]] = [
    ("runner: JudgmentRecord build (_record)", _fn("_record", "assay/runs/stages/_judge.py")),
    ("runner: judgments.jsonl write (dump+flush)", _fn("write", "assay/runs/store/_store.py")),
    (
        "runner: manifest (environment/judge_stats/json)",
        r"^(run_manifest|session_manifest|judges_section|judge_stats) |^write_json_atomic ",
    ),
    ("runner: metrics (force_metrics + bootstrap)", _fn("_write_metrics", "_runner.py")),
    ("runner: failure budget per judgment", _fn("FailureBudget.count", "_policy.py")),
    ("runner: progress tally", _fn("Progress.advance", "_progress.py")),
    (
        "runner: plan / latest_records / JudgeItem",
        r"^(Runner\.plan|plan_judgments|pending|latest|RecordWriter\.__init__) |^JudgeItem",
    ),
    ("judge: prompt render (request_for)", _fn("request_for", "assay/judges/_llm.py")),
    (
        "client: cache_key (canonical json + sha256)",
        rf"{_fn('cache_key', 'assay/models/_cache.py')}|{_fn('ChatKeys.key', '_cache.py')}",
    ),
    ("client: diskcache get + RawResponse validate", _fn("ResponseCache.get", "_cache.py")),
    ("client: diskcache set + dump", _fn("ResponseCache.set", "_cache.py")),
    ("client: to_raw (litellm response -> RawResponse)", _fn("to_raw", "_hosted.py")),
    ("client: _kwargs (litellm arguments)", _fn("_kwargs", "_hosted.py")),
    ("client: tenacity AsyncRetrying", r"tenacity/"),
    ("litellm.acompletion (HTTP call path)", r"^acompletion \(litellm/"),
    ("judge: parse_verdict + Judgment", _fn("judgment_from_raw", "_llm.py")),
    ("client: Model.complete rest (layers, semaphore)", _fn("Model.complete", "_model.py")),
    ("judge: __call__ rest (Judgment build)", _fn("LLMJudge.__call__", "_llm.py")),
    ("runner: worker rest", _fn("worker", "_executor.py")),
    ("plain loop: one() rest", _fn("one", "bench_throughput.py")),
    (
        "asyncio event loop / selectors / wait_for",
        r"asyncio/(base_events|selector_events|events|tasks)\.py|selectors\.py",
    ),
]


def parse(path: str) -> list[tuple[list[str], int]]:
    stacks = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, count = line.rpartition(" ")
            frames = stack.split(";")
            stacks.append((frames, int(count)))
    return stacks


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("--n", type=int, default=5000, help="judgments in the phase")
    ap.add_argument(
        "--wall",
        type=float,
        default=None,
        help="seconds to spread over the samples: the phase's CPU seconds (py-spy "
        "skips idle samples by default) -- or its wall time",
    )
    ap.add_argument("--top", type=int, default=25)
    ns = ap.parse_args()

    stacks = parse(ns.profile)
    compiled = [(b, re.compile(r)) for b, r in BUCKETS]
    buckets: Counter[str] = Counter()
    selfc: Counter[str] = Counter()
    incl: Counter[str] = Counter()
    total = 0
    all_samples = sum(c for _, c in stacks)
    for frames, count in stacks:
        try:
            i = next(k for k, f in enumerate(frames) if f.startswith("timed_region "))
        except StopIteration:
            continue
        below = frames[i + 1 :]
        total += count
        chosen = "other"
        for f in reversed(below):  # innermost first: the most specific bucket wins
            hit = next((b for b, rx in compiled if rx.search(f)), None)
            if hit is None:
                continue
            if hit.startswith("asyncio"):
                # the event loop is only "overhead" if nothing more specific is outside
                chosen = hit if chosen == "other" else chosen
                continue
            chosen = hit
            break
        buckets[chosen] += count
        if below:
            selfc[_short(below[-1])] += count
        for f in set(_short(x) for x in below):
            incl[f] += count
    if not total:
        print("no samples under timed_region")
        return 1
    per = (ns.wall / total) if ns.wall else None
    print(f"{total} samples under timed_region ({all_samples} total in file)")
    hdr = f"{'bucket':<52}{'samples':>8}{'share':>8}"
    if per:
        hdr += f"{'s':>8}{'us/judgment':>13}"
    print(hdr)
    for b, c in buckets.most_common():
        line = f"{b:<52}{c:>8}{100 * c / total:>7.1f}%"
        if per:
            line += f"{c * per:>8.2f}{1e6 * c * per / ns.n:>13.0f}"
        print(line)
    print(f"\ntop {ns.top} self:")
    for f, c in selfc.most_common(ns.top):
        print(f"  {100 * c / total:5.1f}%  {f}")
    print(f"\ntop {ns.top} inclusive:")
    for f, c in incl.most_common(ns.top):
        print(f"  {100 * c / total:5.1f}%  {f}")
    return 0


def _short(frame: str) -> str:
    m = re.match(r"^(.*) \((.*?):(\d+)\)$", frame)
    if not m:
        return frame
    func, file, _ = m.groups()
    for marker in ("site-packages/", "/assay/", "/lib/python3.11/", "benchmarks/"):
        if marker in file:
            file = file.split(marker, 1)[1]
            break
    return f"{func} ({file})"


if __name__ == "__main__":
    raise SystemExit(main())
