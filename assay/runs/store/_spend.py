"""The spend a run's records show, for a session that ended without writing its manifest.

A session writes its spend (`budget`) into the manifest when it ends; one that was killed
(`kill -9`, power loss) leaves the manifest saying `running` and its spend unwritten,
though every answer it recorded was paid for. A resumed run then counts, for its caps,
the larger of the manifest's spend and the records' own (`usage.cost_usd` and `attempts`
of every record line that was not a cache hit).
"""

from __future__ import annotations

import math
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from assay.core.manifest import BudgetSection, Manifest
from assay.core.outcomes import Usage
from assay.core.rundir import (
    ITEM_JUDGMENTS_FILE,
    JUDGMENTS_FILE,
    SENTENCES_FILE,
    VERIFICATIONS_FILE,
    iter_jsonl,
)

BILLED_FILES = (JUDGMENTS_FILE, ITEM_JUDGMENTS_FILE, SENTENCES_FILE, VERIFICATIONS_FILE)
"""The record files whose lines are model calls (`CallAccounting`)."""


class _Billed(BaseModel):
    """What a record line says of the call that made it."""

    model_config = ConfigDict(extra="ignore")

    attempts: int = 0
    cache_hit: bool = False
    usage: Usage = Usage()


def recorded_spend(run_dir: Path) -> tuple[float, int]:
    """(USD, requests) of every call the run's records show (each line: a call paid for,
    a later line for the same key included: it was sent again)."""
    costs: list[float] = []
    requests = 0
    for name in BILLED_FILES:
        for record in iter_jsonl(run_dir / name, _Billed):
            if record.cache_hit:
                continue
            requests += record.attempts
            costs.append(record.usage.cost_usd or 0.0)
    return math.fsum(costs), requests


def spend_so_far(existing: Manifest | None, run_dir: Path) -> BudgetSection | None:
    """The spend earlier sessions left: the manifest's, or, after a session that never
    wrote its manifest (`running`), at least what the records show."""
    earlier = existing.budget if existing is not None else None
    if existing is None or existing.status != "running":
        return earlier
    usd, requests = recorded_spend(run_dir)
    base = earlier if earlier is not None else BudgetSection()
    return base.model_copy(
        update={"spent_usd": max(base.spent_usd, usd), "requests": max(base.requests, requests)}
    )


__all__ = ["BILLED_FILES", "recorded_spend", "spend_so_far"]
