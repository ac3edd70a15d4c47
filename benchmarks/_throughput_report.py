"""bench_throughput's report: the table and the ratios against the project's targets,
printed, and the same figures as a markdown block for docs/benchmarks.md and
benchmarks/README.md (--update-readme)."""

from __future__ import annotations

from typing import Any

TARGET_COLD_VS_PLAIN = 0.95  # the project's speed target
TARGET_COLD_VS_CACHED = 30.0  # the project's speed target
TARGET_LEAN_VS_PLAIN = 4.0  # throughput
TARGET_LEAN_CPU_SHARE = 0.25  # lean client CPU per judgment / the plain loop's
TARGET_LEAN_VS_RAW = 0.6  # throughput


def report_lean(res: dict[str, Any]) -> dict[str, Any]:
    """The lean transport's three ratios against the plain and raw loops."""
    plain, lean, raw = res["plain"], res["assay_lean"], res["raw"]
    vs_plain = plain["best_s"] / lean["best_s"]
    vs_plain_med = plain["median_s"] / lean["median_s"]
    cpu_share = lean["client_cpu_us_per_judgment"] / plain["client_cpu_us_per_judgment"]
    vs_raw = raw["best_s"] / lean["best_s"]
    vs_raw_med = raw["median_s"] / lean["median_s"]
    checks = (
        vs_plain >= TARGET_LEAN_VS_PLAIN,
        cpu_share <= TARGET_LEAN_CPU_SHARE,
        vs_raw >= TARGET_LEAN_VS_RAW,
    )
    verdicts = ["PASS" if ok else "FAIL" for ok in checks]
    print(
        f"assay_lean / plain throughput : {vs_plain:6.3f}x best, {vs_plain_med:6.3f}x "
        f"median  (target >= {TARGET_LEAN_VS_PLAIN:g})   {verdicts[0]}"
    )
    print(
        f"assay_lean / plain client CPU : {cpu_share:6.3f} of the plain loop's per judgment "
        f"(target <= {TARGET_LEAN_CPU_SHARE:g})   {verdicts[1]}"
    )
    print(
        f"assay_lean / raw aiohttp      : {vs_raw:6.3f}x best, {vs_raw_med:6.3f}x "
        f"median  (target >= {TARGET_LEAN_VS_RAW:g})   {verdicts[2]}"
    )
    return {
        "assay_lean_over_plain_best": round(vs_plain, 4),
        "assay_lean_over_plain_median": round(vs_plain_med, 4),
        "assay_lean_cpu_share_of_plain": round(cpu_share, 4),
        "assay_lean_over_raw_best": round(vs_raw, 4),
        "assay_lean_over_raw_median": round(vs_raw_med, 4),
        "lean_targets": {
            "assay_lean_over_plain": TARGET_LEAN_VS_PLAIN,
            "assay_lean_cpu_share_of_plain": TARGET_LEAN_CPU_SHARE,
            "assay_lean_over_raw": TARGET_LEAN_VS_RAW,
        },
        "pass_lean": all(checks),
    }


def report(res: dict[str, Any]) -> None:
    m, c = res["machine"], res["config"]
    print()
    print(f"date:    {res['date']}")
    print(
        f"machine: {m['cpu_count']} cores (affinity {m['affinity']}), {m['processor']}, "
        f"{m['implementation']} {m['python']}, {m['platform']}"
    )
    print(
        f"         litellm {m['litellm']}, openai {m['openai']}, httpx {m['httpx']}, "
        f"aiohttp {m['aiohttp']}, pydantic {m['pydantic']}, assay {m['assay']}"
    )
    print(
        f"config:  {c['judgments']} judgments ({c['pairs']} pairs x 2 members), concurrency "
        f"{c['concurrency']}, server latency {c['latency_ms']} ms, prompt {c['prompt']} "
        f"(~{c['mean_prompt_chars']} chars), bootstrap {c['bootstrap']}, repeat {c['repeat']}"
    )
    print(
        f"         latency-bound ideal: {c['ideal_s']} s "
        f"({c['judgments']} x {c['latency_ms']} ms / {c['concurrency']})"
    )
    print()
    hdr = (
        f"{'phase':<32}{'judgments':>10}{'best s':>9}{'median s':>10}{'best j/s':>10}"
        f"{'median j/s':>11}{'cpu us/j':>10}"
    )
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
        print(
            f"{name:<32}{s['judgments']:>10}{s['best_s']:>9.3f}{s['median_s']:>10.3f}"
            f"{s['best_per_s']:>10.1f}{s['median_per_s']:>11.1f}{cpu_txt}"
        )
    print()
    print(
        'lean      = assay with transport = "openai" (pooled aiohttp), an empty cache.\n'
        "run()     = Runner(...).run(): plan, render, calls, parsing, cache, judgments.jsonl,\n"
        "            manifest, metrics (bootstrap CIs). Construct = load_spec + Runner(...)\n"
        "            (dataset load, judge build), timed outside run().\n"
        "cpu us/j  = this process's CPU time per judgment (best run); robust to other load."
    )
    print()
    ratio_cold = res["plain"]["best_s"] / res["assay_cold"]["best_s"]
    ratio_cold_med = res["plain"]["median_s"] / res["assay_cold"]["median_s"]
    ratio_cache = res["assay_cold"]["best_s"] / res["assay_cached"]["best_s"]
    ratio_cache_med = res["assay_cold"]["median_s"] / res["assay_cached"]["median_s"]
    cpu_ratio = (
        res["plain"]["client_cpu_us_per_judgment"] / res["assay_cold"]["client_cpu_us_per_judgment"]
    )
    ok1 = ratio_cold >= TARGET_COLD_VS_PLAIN
    ok2 = ratio_cache >= TARGET_COLD_VS_CACHED
    print(
        f"assay_cold / plain throughput : {ratio_cold:6.3f}x best, {ratio_cold_med:6.3f}x "
        f"median  (target >= {TARGET_COLD_VS_PLAIN})   {'PASS' if ok1 else 'FAIL'}"
    )
    print(f"   same, by client CPU/judgment: {cpu_ratio:6.3f}x")
    print(
        f"cold time / cached time       : {ratio_cache:6.1f}x best, {ratio_cache_med:6.1f}x "
        f"median  (target >= {TARGET_COLD_VS_CACHED:g}x)   {'PASS' if ok2 else 'FAIL'}"
    )
    lean_ratios = report_lean(res)
    print(
        f"server requests: plain {c['judgments']} per run; assay cold "
        f"{res['assay_cold']['server_requests']}; assay cached "
        f"{res['assay_cached']['server_requests']} (cache hits "
        f"{res['assay_cached']['cache_hits']})"
    )
    if res["plain"].get("server_cpu_s"):
        print(
            f"server process CPU s per run: plain {res['plain']['server_cpu_s']}, cold "
            f"{res['assay_cold'].get('server_cpu_s')}, cached "
            f"{res['assay_cached'].get('server_cpu_s')}"
        )
    busy = (res.get("load_avg_end") or 0) > (m["cpu_count"] or 1) + 0.5
    print(
        f"load average (1 min) at end: {res.get('load_avg_end')} on {m['cpu_count']} cores"
        f"{'  <-- other load present: wall figures are noisy' if busy else ''}"
    )
    res["ratios"] = {
        "assay_cold_over_plain_best": round(ratio_cold, 4),
        "assay_cold_over_plain_median": round(ratio_cold_med, 4),
        "assay_cold_over_plain_by_cpu": round(cpu_ratio, 4),
        "cold_over_cached_best": round(ratio_cache, 2),
        "cold_over_cached_median": round(ratio_cache_med, 2),
        "targets": {
            "assay_cold_over_plain": TARGET_COLD_VS_PLAIN,
            "cold_over_cached": TARGET_COLD_VS_CACHED,
        },
        "pass_cold_over_plain": ok1,
        "pass_cold_over_cached": ok2,
    }
    res["ratios"].update(lean_ratios)
    res["pass"] = ok1 and ok2 and lean_ratios["pass_lean"]


_ROWS = (
    ("raw aiohttp loop (ceiling)", "raw"),
    ("plain `litellm.acompletion` loop", "plain"),
    ('assay lean (`transport = "openai"`)', "assay_lean"),
    ("assay cold (default transport)", "assay_cold"),
    ("assay cached (every judgment a cache hit)", "assay_cached"),
)


def _verdict(ok: bool) -> str:
    return "met" if ok else "**not met**"


def readme_table(res: dict[str, Any]) -> str:
    """The phases as a markdown table: best and median judgments/s, client CPU per judgment."""
    c = res["config"]
    lines = [
        f"{c['judgments']:,} judgments, concurrency {c['concurrency']}, server latency "
        f"{c['latency_ms']:g} ms, best and median of {c['repeat']}:",
        "",
        "| phase | best s | best judgments/s | median judgments/s | client CPU µs/judgment |",
        "|---|---:|---:|---:|---:|",
    ]
    for label, key in _ROWS:
        s = res[key]
        cpu = s.get("client_cpu_us_per_judgment")
        lines.append(
            f"| {label} | {s['best_s']:.2f} | {s['best_per_s']:,.0f} | {s['median_per_s']:,.0f} "
            f"| {'' if cpu is None else f'{cpu:,.0f}'} |"
        )
    return "\n".join(lines)


def readme_ratios(res: dict[str, Any]) -> str:
    """The default transport's two ratios against their targets."""
    r = res["ratios"]
    return (
        f"assay cold / plain loop throughput: **{r['assay_cold_over_plain_best']:.2f}×** best, "
        f"{r['assay_cold_over_plain_median']:.2f}× median (target "
        f"{TARGET_COLD_VS_PLAIN:g}×: {_verdict(r['pass_cold_over_plain'])}); cold / cached "
        f"time: **{r['cold_over_cached_best']:.1f}×** best, {r['cold_over_cached_median']:.1f}× "
        f"median (target {TARGET_COLD_VS_CACHED:g}×: {_verdict(r['pass_cold_over_cached'])})."
    )


def readme_lean(res: dict[str, Any]) -> str:
    """The lean transport's figures against the plain and raw loops and their targets."""
    r = res["ratios"]
    cpu = {k: res[k]["client_cpu_us_per_judgment"] for k in ("assay_lean", "plain", "raw")}
    share_ok = r["assay_lean_cpu_share_of_plain"] <= TARGET_LEAN_CPU_SHARE
    return (
        f"Client CPU per judgment: lean assay run {cpu['assay_lean']:,.0f} µs, plain "
        f"`litellm.acompletion` loop {cpu['plain']:,.0f} µs, bare aiohttp loop "
        f"{cpu['raw']:,.0f} µs (lean / plain = {r['assay_lean_cpu_share_of_plain']:.2f}, "
        f"target ≤ {TARGET_LEAN_CPU_SHARE:g}: {_verdict(share_ok)}). Throughput, lean / plain: "
        f"**{r['assay_lean_over_plain_best']:.1f}×** best, "
        f"{r['assay_lean_over_plain_median']:.1f}× median (target {TARGET_LEAN_VS_PLAIN:g}×: "
        f"{_verdict(r['assay_lean_over_plain_best'] >= TARGET_LEAN_VS_PLAIN)}); "
        f"lean / raw aiohttp: {r['assay_lean_over_raw_best']:.2f}× best, "
        f"{r['assay_lean_over_raw_median']:.2f}× median (target {TARGET_LEAN_VS_RAW:g}×: "
        f"{_verdict(r['assay_lean_over_raw_best'] >= TARGET_LEAN_VS_RAW)})."
    )
