"""Rate limits: wall time and 429s of naive vs limited vs adaptive clients, side by side.

The loopback server enforces an OpenAI-style window (`RateWindows(rpm=R)`: R requests a
minute, refilled evenly, 429 with Retry-After past it, x-ratelimit-* headers on every
answer). N > R requests are sent through one `Model` (`complete_many`, concurrency
`--concurrency`), each mode against a fresh server (its window full), so no client can
finish before (N - R) / (R / 60) seconds:

* naive     -- `adaptive_concurrency = false`, no rpm: what assay did before rate limits
               (retries honouring Retry-After, `max_attempts` of them, then an error)
* limited   -- `rpm = R`: the shared leaky bucket paces requests to the window
* adaptive  -- no rpm, `adaptive_concurrency = true` (the default): 429s and the headers
               halve concurrency and pause the endpoint (AIMD)

Printed per mode and transport: wall seconds, requests the server saw, 429s, requests
that failed (retries exhausted), the lowest concurrency reached, and wall / the window's
floor. The server runs in a thread of this process (the windows, not the CPU, bound these
runs). Exits 1 when a limited run saw more than a handful (5) of 429s or any mode lost
a request that it should not (limited, adaptive).

    python benchmarks/bench_rate_limits.py [--n 700] [--rpm 600] [--concurrency 16]
        [--transports openai,litellm] [--json] [--update-readme]

`--update-readme` rewrites the `bench:rate-limits` block of docs/benchmarks.md and
benchmarks/README.md (benchmarks/_readme_blocks.py).
"""

from __future__ import annotations

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _readme_blocks import Measurement, preformatted, update_from_cli  # noqa: E402

from assay.models import ModelConfig, make_client  # noqa: E402
from assay.models._hosted import litellm_module  # noqa: E402
from assay.models._types import ChatRequest  # noqa: E402
from assay.prompts._prompt import Message  # noqa: E402
from assay.testing import FakeOpenAIServer, RateWindows  # noqa: E402

MODES = {
    "naive": {"adaptive_concurrency": False},
    "limited": {"rpm": None},  # filled with --rpm
    "adaptive": {},
}
MOST_429S_LIMITED = 5


def measure(mode: str, transport: str, n: int, rpm: int, concurrency: int) -> dict[str, Any]:
    """One mode's run against a fresh server."""
    settings = dict(MODES[mode])
    if "rpm" in settings:
        settings["rpm"] = rpm
    requests = [
        ChatRequest(messages=[Message(role="user", content=f"request {i}: is this supported?")])
        for i in range(n)
    ]
    with FakeOpenAIServer(rate_limits=RateWindows(rpm=rpm)) as server:
        config = ModelConfig(
            model="openai/bench",
            api_base=server.base_url,
            transport=transport,
            max_concurrency=concurrency,
            **settings,
        )
        model = make_client(config)
        started = time.perf_counter()
        results = asyncio.run(model.complete_many(requests, use_cache=False))
        wall = time.perf_counter() - started
        stats = server.stats
    floor = max(n - rpm, 0) / (rpm / 60)
    return {
        "mode": mode,
        "transport": transport,
        "wall_s": round(wall, 2),
        "server_requests": stats.total,
        "rate_limited": stats.by_status.get(429, 0),
        "failed": sum(r.error is not None for r in results),
        "lowest_concurrency": model.limit.lowest,
        "floor_s": round(floor, 2),
        "wall_over_floor": round(wall / floor, 2) if floor else None,
    }


def render(rows: list[dict[str, Any]], n: int, rpm: int, concurrency: int) -> str:
    floor = rows[0]["floor_s"] if rows else 0.0
    lines = [
        f"{n} requests, window rpm {rpm} (loopback server), max_concurrency {concurrency}; "
        f"the window's floor: {floor:.1f} s",
        "",
        f"{'mode':<10} {'transport':<9} {'wall s':>7} {'sent':>6} {'429s':>6} "
        f"{'failed':>6} {'lowest conc.':>12} {'wall/floor':>10}",
        "-" * 73,
    ]
    for r in rows:
        ratio = "n/a" if r["wall_over_floor"] is None else f"{r['wall_over_floor']:.2f}"
        lines.append(
            f"{r['mode']:<10} {r['transport']:<9} {r['wall_s']:>7.2f} {r['server_requests']:>6} "
            f"{r['rate_limited']:>6} {r['failed']:>6} {r['lowest_concurrency']:>12} {ratio:>10}"
        )
    return "\n".join(lines)


def problems(rows: list[dict[str, Any]]) -> list[str]:
    found = []
    for r in rows:
        where = f"{r['mode']} ({r['transport']})"
        if r["mode"] == "limited" and r["rate_limited"] > MOST_429S_LIMITED:
            found.append(f"{where}: {r['rate_limited']} 429s (at most {MOST_429S_LIMITED})")
        if r["mode"] != "naive" and r["failed"]:
            found.append(f"{where}: {r['failed']} requests failed")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=700, help="requests per mode")
    parser.add_argument("--rpm", type=int, default=600, help="the server's window")
    parser.add_argument("--concurrency", type=int, default=16, help="max_concurrency")
    parser.add_argument("--transports", default="openai,litellm")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--update-readme", action="store_true")
    args = parser.parse_args()
    measured = Measurement.of_this_run("bench_rate_limits.py")
    transports = [t for t in args.transports.split(",") if t]
    if "litellm" in transports:
        litellm_module()  # its import is not what is measured
    rows = [
        measure(mode, transport, args.n, args.rpm, args.concurrency)
        for transport in transports
        for mode in MODES
    ]
    text = render(rows, args.n, args.rpm, args.concurrency)
    found = problems(rows)
    text += "\n\n" + ("\n".join(f"FAIL {p}" for p in found) if found else "checks: PASS")
    print(json.dumps(rows, indent=2) if args.json else text)
    if args.update_readme:
        return update_from_cli("rate-limits", measured, preformatted(text)) or (1 if found else 0)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
