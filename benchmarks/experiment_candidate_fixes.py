"""EXPERIMENT: monkeypatch candidate performance fixes into assay, then run the benchmark.

Nothing in ``assay/`` is edited: this script swaps functions at import time so the
effect of each proposed change can be measured before it is made for real. It copies
``HostedClient.complete`` (assay/models/_hosted.py) for the ``tenacity``/``cachethread``
variants, so it is only valid against the assay version it was written for.

Variants (comma-separated in ``PATCHES``):

* ``cost``        -- ``_to_raw`` reads ``response._hidden_params["response_cost"]`` (litellm
                     already computed it) instead of calling ``litellm.completion_cost``.
* ``failcount``   -- the runner's per-judgment ``_failed_count(records, ...)`` O(records)
                     scan becomes incremental (the real fix is a running counter).
* ``tenacity``    -- first attempt without building an ``AsyncRetrying``.
* ``cachethread`` -- ``ResponseCache.set`` runs in ``asyncio.to_thread``.

Usage::

    PATCHES=cost,failcount python benchmarks/experiment_candidate_fixes.py [bench args]
    PATCHES=cost,failcount python benchmarks/experiment_candidate_fixes.py \
        --profile-phase --phase cold      # profile_phase.py with the patches
"""

from __future__ import annotations

import os

os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

import asyncio  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt  # noqa: E402

# isort: off
# `assay.runs` must be imported before `assay.models`: importing assay.models first fails
# with a circular import (assay.models -> _types -> assay.judges -> _llm -> assay.models).
import assay.runs  # noqa: E402,F401
import assay.runs._runner as runner_mod  # noqa: E402
import assay.models._hosted as hosted  # noqa: E402
from assay.models._cache import cache_key  # noqa: E402
from assay.models._retry import describe_error, is_retryable  # noqa: E402
from assay.models._types import CallResult, ChatRequest, RawResponse  # noqa: E402
# isort: on

VARIANTS = {v for v in os.environ.get("PATCHES", "").split(",") if v}
_orig_to_raw = hosted._to_raw


class _NoCost:
    @staticmethod
    def completion_cost(**_: Any) -> float:
        raise RuntimeError("skipped")


def _to_raw_from_hidden(litellm: Any, response: Any) -> RawResponse:
    raw = _orig_to_raw(_NoCost, response)  # everything but the second cost computation
    hidden = getattr(response, "_hidden_params", None) or {}
    cost = hidden.get("response_cost") if isinstance(hidden, dict) else None
    if cost is not None:
        raw.usage.cost_usd = float(cost)
    return raw


_fc_state: dict[int, list[int]] = {}


def _failed_count_incremental(records: dict[Any, Any], failing: set[Any]) -> int:
    """Exact while records are only added (a fresh run); the real fix is a counter."""
    n = len(records)
    st = _fc_state.get(id(records))
    if st is None or st[0] > n:
        st = [0, 0]
    new = n - st[0]
    if new:
        it = reversed(records.values())
        for _ in range(new):
            st[1] += next(it).status in failing
        st[0] = n
    _fc_state[id(records)] = st
    return st[1]


def _make_complete(fast: bool, threaded: bool) -> Any:
    async def complete(self: Any, request: ChatRequest, *, use_cache: bool = True,
                       refresh_cache: bool = False) -> CallResult:
        key = cache_key(self.config, request) if self.cache is not None else None
        started = time.perf_counter()
        if self.cache is not None and key is not None and use_cache and not refresh_cache:
            hit = self.cache.get(key)
            if hit is not None:
                return CallResult(response=hit, cache_hit=True,
                                  latency_s=time.perf_counter() - started)
        attempts = 0
        raw: RawResponse | None = None
        async with self._semaphore:
            try:
                if fast:
                    attempts = 1
                    try:
                        raw = await self._call_once(request)
                    except Exception as exc:
                        if not is_retryable(exc) or self.config.retry.max_attempts <= 1:
                            raise
                if raw is None:
                    retrying = AsyncRetrying(
                        stop=stop_after_attempt(self.config.retry.max_attempts - attempts),
                        wait=self._wait, retry=retry_if_exception(is_retryable), reraise=True,
                    )
                    async for attempt in retrying:
                        with attempt:
                            attempts += 1
                            raw = await self._call_once(request)
            except Exception as exc:
                info = describe_error(exc)
                code = f" {info['status_code']}" if info["status_code"] else ""
                return CallResult(error=f"{info['error_type']}{code}: {info['message']}",
                                  error_type=info["error_type"], attempts=attempts,
                                  latency_s=time.perf_counter() - started)
        assert raw is not None
        if self.cache is not None and key is not None and (use_cache or refresh_cache):
            if threaded:
                await asyncio.to_thread(self.cache.set, key, raw)
            else:
                self.cache.set(key, raw)
        return CallResult(response=raw, attempts=attempts,
                          latency_s=time.perf_counter() - started)

    return complete


def apply() -> None:
    if "cost" in VARIANTS:
        hosted._to_raw = _to_raw_from_hidden
    if "failcount" in VARIANTS:
        runner_mod._failed_count = _failed_count_incremental
    if VARIANTS & {"tenacity", "cachethread"}:
        hosted.HostedClient.complete = _make_complete(
            "tenacity" in VARIANTS, "cachethread" in VARIANTS)


def main() -> int:
    apply()
    print(f"patches: {sorted(VARIANTS) or 'none'}", flush=True)
    if sys.argv[1:2] == ["--profile-phase"]:
        import profile_phase

        sys.argv = [sys.argv[0], *sys.argv[2:]]
        return profile_phase.main()
    import bench_throughput

    return bench_throughput.main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
