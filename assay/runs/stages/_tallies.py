"""Every stage's failures weighed against its own plan, for the failure policy
(`_policy`): the live budget of the gate stage and the tallies `final_status` reads."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from assay.core.outcomes import Status
from assay.core.rundir import ITEM_JUDGMENTS_FILE, JUDGMENTS_FILE
from assay.runs.execute._failure_policy import FailureBudget, StageTally, counter_tally
from assay.runs.spec._spec import FailurePolicy
from assay.runs.store._counters import JudgeCounters

if TYPE_CHECKING:
    from assay.runs.stages._factuality import FactualityStage
    from assay.runs.stages._gate import GateStage
    from assay.runs.stages._items import ItemsStage


def gate_budget(
    policy: FailurePolicy, gate: GateStage, abort: asyncio.Event
) -> Callable[[Status], None]:
    """The gate stage's live failure budget (what `StageContext.on_record` calls)."""
    kept = [r.status for r in gate.records.values()]
    return FailureBudget(policy, gate.planned(), kept, abort).count


def stage_tallies(
    policy: FailurePolicy,
    judged: tuple[int, Mapping[str, JudgeCounters]],
    items: ItemsStage | None,
    fact: FactualityStage | None,
    gate: GateStage | None,
) -> list[StageTally]:
    """judge (planned, counters), items, decompose and verify, gate: each on its own."""
    failing = set(policy.statuses)
    planned, counters = judged
    out = [counter_tally("judge", "judgments", planned, counters, failing, JUDGMENTS_FILE)]
    if items is not None:
        planned, counters = items.planned(), items.counters()
        unit, file = "item judgments", ITEM_JUDGMENTS_FILE
        out.append(counter_tally("items", unit, planned, counters, failing, file))
    out += fact.tallies(failing) if fact is not None else []
    out += [gate.tally(failing)] if gate is not None else []
    return out
