"""Per-judge counters for the manifest, derived from judgment records."""

from __future__ import annotations

from collections import Counter
from typing import Any

from assay.core.outcomes import Status
from assay.core.records import JudgmentRecord


def identity_fields(info: dict[str, Any]) -> dict[str, Any]:
    """Record fields naming what produced a record (model, prompt, parser), taken from a
    component's `describe()`; computed once per component, not per record."""
    prompt = info.get("prompt") or {}
    client = info.get("client") or {}
    out = {
        "model": client.get("model") or info.get("model"),
        "prompt_id": prompt.get("id"),
        "prompt_version": prompt.get("version"),
        "prompt_sha256": prompt.get("sha256"),
    }
    if "parser_version" in info:
        out["parser_version"] = info.get("parser_version")
    return out


def judge_stats(records: list[JudgmentRecord], planned: int) -> dict[str, Any]:
    """Requests, cache hits, retries, failures by status, tokens and cost for one judge.

    `requests_sent` counts every HTTP attempt this judge's records needed (cache hits
    send none); `retries` is attempts beyond the first.
    """
    by_status = Counter(r.status.value for r in records)
    sent = [r for r in records if not r.cache_hit]
    cost_values = [r.usage.cost_usd for r in sent if r.usage.cost_usd is not None]
    returned = sorted({r.model_returned for r in records if r.model_returned})
    return {
        "planned": planned,
        "recorded": len(records),
        "requests_sent": sum(r.attempts for r in sent),
        "cache_hits": sum(1 for r in records if r.cache_hit),
        "retries": sum(max(r.attempts - 1, 0) for r in sent),
        "by_status": {s.value: by_status.get(s.value, 0) for s in Status},
        "failures": sum(v for k, v in by_status.items() if k != Status.OK.value),
        "tokens": {
            "prompt": sum(r.usage.prompt_tokens for r in records),
            "completion": sum(r.usage.completion_tokens for r in records),
            "total": sum(r.usage.total_tokens for r in records),
            "prompt_uncached": sum(r.usage.prompt_tokens for r in sent),
            "completion_uncached": sum(r.usage.completion_tokens for r in sent),
        },
        "cost_usd": round(sum(cost_values), 6) if cost_values else None,
        "model_returned": returned,
        "mean_latency_s": round(sum(r.latency_s for r in records) / len(records), 6)
        if records
        else None,
    }
