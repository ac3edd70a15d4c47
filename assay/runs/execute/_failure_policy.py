"""The failure policy while a run goes (stop calling once too much failed) and at its
end (complete, failed, or interrupted and resumable).

The budget applies to every stage on its own (judge, items, decompose, verify, gate):
a stage's failures are weighed against that stage's planned work, so 29 failed
decompositions are not diluted by 600 good judgments. A stage over its limit ends the
run `failed` and the message names it. Decompositions count every status but `ok`: a
sentence not decomposed has no claim, and would silently leave the scores.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assay.core.outcomes import Status
from assay.runs.spec._spec import FailurePolicy
from assay.runs.store._counters import JudgeCounters

NOT_OK = frozenset(s for s in Status if s is not Status.OK)
"""What a decomposition failing means: any status but ok."""


class FailureBudget:
    """Counts one stage's failed records as they are recorded and sets `abort` past the
    stage's limit, so a run against a broken endpoint stops instead of spending the
    whole plan. `failing` defaults to the policy's statuses."""

    def __init__(
        self,
        policy: FailurePolicy,
        planned: int,
        recorded: Iterable[Status],
        abort: asyncio.Event,
        failing: Iterable[Status] | None = None,
    ) -> None:
        self.failing = set(policy.statuses if failing is None else failing)
        self.limit = policy.limit(planned)
        self.failed = sum(1 for status in recorded if status in self.failing)
        self.abort = abort

    def count(self, status: Status) -> None:
        self.failed += status in self.failing
        if self.failed > self.limit:
            self.abort.set()


@dataclass(frozen=True)
class StageTally:
    """One stage's planned work and its failed records by status, at the end."""

    stage: str  # judge, items, decompose, verify, gate
    unit: str  # what it plans: judgments, sentences, verifications, questions
    planned: int
    failed: Mapping[str, int]
    file: str  # where its records (and their errors) are
    example: str | None = None  # the first failed record's error, quoted by the line

    @property
    def n_failed(self) -> int:
        return sum(self.failed.values())


def tally(
    stage: str,
    unit: str,
    planned: int,
    statuses: Iterable[Status],
    failing: Iterable[Status],
    file: str,
    example: str | None = None,
) -> StageTally:
    """A stage's tally from its latest records' statuses (`example`: `first_error`)."""
    wanted = set(failing)
    failed = Counter(s.value for s in statuses if s in wanted)
    return StageTally(stage, unit, planned, dict(sorted(failed.items())), file, example)


def first_error(records: Iterable[Any], failing: Iterable[Status]) -> str | None:
    """The error of the first record whose status fails: what a failure line quotes."""
    wanted = set(failing)
    errors = (getattr(r, "error", None) for r in records if r.status in wanted)
    return next((e for e in errors if e), None)


def counter_tally(
    stage: str,
    unit: str,
    planned: int,
    counters: Mapping[str, JudgeCounters],
    failing: Iterable[Status],
    file: str,
) -> StageTally:
    """A judging stage's tally from its per-judge counters."""
    failed = Counter[str]()
    for status in failing:
        failed[status.value] += sum(c.by_status[status.value] for c in counters.values())
    kept = {k: v for k, v in sorted(failed.items()) if v}
    errors = (c.first_errors.get(status) for c in counters.values() for status in kept)
    return StageTally(stage, unit, planned, kept, file, next((e for e in errors if e), None))


def _over(policy: FailurePolicy, t: StageTally) -> str:
    shown = ", ".join(f"{status} {n}" for status, n in t.failed.items())
    cap = "" if policy.max_failed is None else f", failure.max_failed={policy.max_failed}"
    fix = (
        "rerun with --retry-errors to retry them"
        if Status.API_ERROR.value in t.failed
        else f"each record's error is in {t.file}"
    )
    return (
        f"{t.stage}: {t.n_failed} of {t.planned} {t.unit} failed ({shown}), above the "
        f"stage's failure limit of {policy.limit(t.planned)} (failure.max_failed_fraction="
        f"{policy.max_failed_fraction}{cap}); {fix}"
        + (f"; first error: {t.example}" if t.example else "")
    )


def final_status(
    policy: FailurePolicy, stages: Sequence[StageTally], *, all_recorded: bool
) -> tuple[str, str | None]:
    """The run's status and message once the stages have stopped: `failed` when any
    stage is over its own limit (each such stage named), else complete or interrupted."""
    over = [t for t in stages if t.n_failed > policy.limit(t.planned)]
    if over:
        return "failed", "; ".join(_over(policy, t) for t in over)
    if all_recorded:
        return "complete", None
    return "interrupted", "some planned work was not recorded; run again to resume"
