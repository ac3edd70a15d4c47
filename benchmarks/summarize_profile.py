"""Summarize a py-spy ``--format raw`` (collapsed stacks) profile of profile_phase.py.

Only samples under ``timed_region`` are counted. Prints (1) inclusive share of named
buckets (first matching rule wins, checked from the innermost frame outwards would hide
callers, so a bucket is assigned by the OUTERMOST matching frame below timed_region),
and (2) the top functions by self and inclusive samples.

    python benchmarks/summarize_profile.py cold.txt [--n 5000] [--wall 34.7] [--top 30]
"""

from __future__ import annotations

import argparse
import re
from collections import Counter

# (bucket, regex on a frame "func (file:line)"). Checked outermost-first along the stack
# below timed_region, so e.g. pydantic called *from* _store.write lands in "record write".
BUCKETS: list[tuple[str, str]] = [
    ("runner: JudgmentRecord build (_record)", r"^_record \(.*assay/runs/_runner\.py"),
    ("runner: judgments.jsonl write", r"^write \(.*assay/runs/_store\.py"),
    ("runner: manifest (environment/judge_stats/json)", r"^(_manifest|_base_manifest|write_json_atomic) "),
    ("runner: metrics (force_metrics + bootstrap)", r"^_write_metrics "),
    ("runner: failed-count scan per judgment", r"^_failed_count "),
    ("runner: progress tally", r"^count \(.*assay/runs/_runner\.py"),
    ("runner: plan / latest_records / JudgeItem", r"^(plan|latest_records|__init__) \(.*assay/(runs|judges)/"),
    ("judge: prompt render (jinja + Message)", r"^request_for "),
    ("client: cache_key (canonical json + sha256)", r"^cache_key "),
    ("client: diskcache get + RawResponse validate", r"^get \(.*assay/models/_cache\.py"),
    ("client: diskcache set + dump", r"^set \(.*assay/models/_cache\.py"),
    ("client: litellm.completion_cost", r"^_to_raw .*|completion_cost"),
    ("client: _kwargs (model_dump of messages)", r"^_kwargs "),
    ("client: tenacity AsyncRetrying", r"tenacity/"),
    ("litellm.acompletion (HTTP call path)", r"^acompletion \(.*litellm/"),
    ("judge: parse_verdict + Judgment", r"^judgment_from_raw "),
    ("client: CallResult", r"^complete \(.*assay/models/_hosted\.py"),
    ("judge: __call__ rest", r"^__call__ \(.*assay/judges/_llm\.py"),
    ("runner: worker rest", r"^worker \(.*assay/runs/_runner\.py"),
    ("plain loop: one()", r"^one \(.*bench_throughput"),
    ("asyncio event loop / selectors", r"asyncio/(base_events|selector_events|events)\.py|selectors\.py"),
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
    ap.add_argument("--wall", type=float, default=None, help="phase wall seconds")
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
        below = frames[i + 1:]
        total += count
        chosen = "other"
        for f in below:  # outermost first
            hit = next((b for b, rx in compiled if rx.search(f)), None)
            if hit is not None:
                chosen = hit
                # the event loop is only "overhead" if nothing more specific is deeper
                if not hit.startswith("asyncio"):
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
