"""The raw aiohttp loop as a whole process: the ceiling that bench_startup.py and
bench_throughput.py time `assay run` against, start-up included.

    python benchmarks/_raw_client.py JOB.json

JOB.json: {"url": ".../v1/chat/completions", "model": "bench", "content": "...",
"concurrency": 64, "messages": [[{"role": ..., "content": ...}, ...], ...]}. One
`ClientSession`, a semaphore, `session.post(json=...)` of each message list, the JSON body
read and its content checked; it imports nothing else (no assay), so its start-up is
Python's and aiohttp's. Exits 1 unless every reply was the expected content.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp


async def _loop(job: dict[str, Any]) -> int:
    sem = asyncio.Semaphore(job["concurrency"])
    connector = aiohttp.TCPConnector(limit=job["concurrency"])
    headers = {"Authorization": "Bearer sk-bench"}
    async with aiohttp.ClientSession(connector=connector, headers=headers) as session:

        async def one(messages: list[dict[str, str]]) -> bool:
            body = {"model": job["model"], "messages": messages, "temperature": 0}
            async with sem, session.post(job["url"], json=body) as resp:
                data = await resp.json()
            return bool(data["choices"][0]["message"]["content"] == job["content"])

        results = await asyncio.gather(*(one(m) for m in job["messages"]))
    return sum(results)


def run_job(path: str, loop: Callable[[dict[str, Any]], Awaitable[int]]) -> int:
    """Run `loop` on the job file at `path`: exit status 0 when every reply was right
    (shared with `_litellm_client.py`)."""
    with open(path, encoding="utf-8") as fh:
        job = json.load(fh)
    ok = asyncio.run(loop(job))
    print(f"{ok}/{len(job['messages'])} ok")
    return 0 if ok == len(job["messages"]) else 1


if __name__ == "__main__":
    sys.exit(run_job(sys.argv[1], _loop))
