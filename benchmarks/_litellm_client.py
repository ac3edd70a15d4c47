"""The plain litellm loop as a whole process: what litellm itself costs a program that
makes bench_startup.py's requests, start-up and its first calls included.

    python benchmarks/_litellm_client.py JOB.json

JOB.json is `_raw_client.py`'s job. `litellm.acompletion` of each message list to the
job's endpoint (`openai/<model>`, `api_base` from the job's url), bounded by a
semaphore, every reply's content checked (`_raw_client.run_job`); it imports nothing
else (no assay). Exits 1 unless every reply was the expected content.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import litellm
from _raw_client import run_job


async def _loop(job: dict[str, Any]) -> int:
    sem = asyncio.Semaphore(job["concurrency"])
    api_base = job["url"].removesuffix("/chat/completions")

    async def one(messages: list[dict[str, str]]) -> bool:
        async with sem:
            reply = await litellm.acompletion(
                model=f"openai/{job['model']}",
                messages=messages,
                temperature=0,
                api_base=api_base,
                api_key="sk-bench",
            )
        return bool(reply.choices[0].message.content == job["content"])

    results = await asyncio.gather(*(one(m) for m in job["messages"]))
    return sum(results)


if __name__ == "__main__":
    sys.exit(run_job(sys.argv[1], _loop))
