"""Per-judge counters of judgment records, summed as the records arrive.

A run used to keep a tally object per judgment to build the manifest's counters at the
end: hundreds of bytes a judgment. The counters are sums, so they are kept as sums;
the floats (cost, latency) are kept as 8-byte arrays and summed with `math.fsum`
(correctly rounded), so the figures do not depend on the order the records arrived in.
"""

from __future__ import annotations

import math
import sys
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from assay.core.outcomes import Status

TOKEN_COUNTS = ("prompt", "completion", "total", "prompt_uncached", "completion_uncached")


@dataclass
class JudgeCounters:
    """What the manifest says of one judge's records: requests, cache hits, retries,
    statuses, tokens, cost, returned model names and mean latency."""

    recorded: int = 0
    by_status: Counter[str] = field(default_factory=Counter)
    requests_sent: int = 0
    cache_hits: int = 0
    retries: int = 0
    tokens: Counter[str] = field(default_factory=Counter)
    costs: array[float] = field(default_factory=lambda: array("d"))
    latencies: array[float] = field(default_factory=lambda: array("d"))
    model_returned: set[str] = field(default_factory=set)
    first_errors: dict[str, str] = field(default_factory=dict)  # status -> its first error

    def add(self, record: Any) -> None:
        """Count one record (anything with a judgment record's counter fields)."""
        usage = record.usage
        self.recorded += 1
        self.by_status[record.status.value] += 1
        error = getattr(record, "error", None)
        if error and record.status.value not in self.first_errors:
            self.first_errors[record.status.value] = error  # what a failure line quotes
        self.tokens["prompt"] += usage.prompt_tokens
        self.tokens["completion"] += usage.completion_tokens
        self.tokens["total"] += usage.total_tokens
        self.latencies.append(record.latency_s)
        if record.model_returned:
            self.model_returned.add(record.model_returned)
        if record.cache_hit:
            self.cache_hits += 1
            return
        self.requests_sent += record.attempts
        self.retries += max(record.attempts - 1, 0)
        self.tokens["prompt_uncached"] += usage.prompt_tokens
        self.tokens["completion_uncached"] += usage.completion_tokens
        if usage.cost_usd is not None:
            self.costs.append(usage.cost_usd)

    def stats(self, planned: int) -> dict[str, Any]:
        """The manifest's `judges[].stats`."""
        by_status = {s.value: self.by_status.get(s.value, 0) for s in Status}
        latency = math.fsum(self.latencies) / self.recorded if self.recorded else None
        return {
            "planned": planned,
            "recorded": self.recorded,
            "requests_sent": self.requests_sent,
            "cache_hits": self.cache_hits,
            "retries": self.retries,
            "by_status": by_status,
            "failures": sum(v for k, v in by_status.items() if k != Status.OK.value),
            "tokens": {name: self.tokens[name] for name in TOKEN_COUNTS},
            "cost_usd": round(math.fsum(self.costs), 6) if self.costs else None,
            "model_returned": sorted(self.model_returned),
            "mean_latency_s": round(latency, 6) if latency is not None else None,
        }


def count_into(counters: dict[str, JudgeCounters], record: Any) -> None:
    """Count `record` under its judge id; a judge's first record makes its counters (a
    judge id kept as a shared string), later ones make nothing."""
    judge_counters = counters.get(record.judge_id)
    if judge_counters is None:
        judge_counters = counters[sys.intern(record.judge_id)] = JudgeCounters()
    judge_counters.add(record)


def counters_of(records: Iterable[Any]) -> dict[str, JudgeCounters]:
    """Counters per judge id of `records` (the latest record per key, already chosen)."""
    out: dict[str, JudgeCounters] = {}
    for record in records:
        count_into(out, record)
    return out


def merged(*parts: Mapping[str, JudgeCounters]) -> dict[str, JudgeCounters]:
    """Counters of judges that judged in several stages (ForceBench pairs and items)."""
    out: dict[str, JudgeCounters] = {}
    for part in parts:
        for judge_id, c in part.items():
            into = out.setdefault(judge_id, JudgeCounters())
            into.recorded += c.recorded
            into.by_status.update(c.by_status)
            into.requests_sent += c.requests_sent
            into.cache_hits += c.cache_hits
            into.retries += c.retries
            into.tokens.update(c.tokens)
            into.costs.extend(c.costs)
            into.latencies.extend(c.latencies)
            into.model_returned |= c.model_returned
            for status, error in c.first_errors.items():
                into.first_errors.setdefault(status, error)
    return out
