"""The failure policy while a run goes (stop calling once too much failed) and at its
end (complete, failed, or interrupted and resumable)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from assay.core.outcomes import Status
from assay.runs._spec import FailurePolicy


class FailureBudget:
    """Counts failed judgments as they are recorded and sets `abort` past the limit, so
    a run against a broken endpoint stops instead of spending the whole plan."""

    def __init__(
        self, policy: FailurePolicy, planned: int, recorded: Iterable[Status], abort: asyncio.Event
    ) -> None:
        self.failing = set(policy.statuses)
        self.limit = policy.limit(planned)
        self.failed = sum(1 for status in recorded if status in self.failing)
        self.abort = abort

    def count(self, status: Status) -> None:
        self.failed += status in self.failing
        if self.failed > self.limit:
            self.abort.set()


def final_status(
    policy: FailurePolicy, *, failed: int, planned: int, all_recorded: bool
) -> tuple[str, str | None]:
    """The run's status and message once the stages have stopped; `failed` and
    `planned` cover every stage (judgments, sentences, verifications)."""
    limit = policy.limit(planned)
    if failed > limit:
        statuses = ", ".join(sorted(set(policy.statuses)))
        return "failed", (
            f"{failed} judgments/verdicts ended in {statuses}, above the "
            f"failure limit of {limit} (failure.max_failed_fraction="
            f"{policy.max_failed_fraction}); rerun with --retry-errors to retry them"
        )
    if all_recorded:
        return "complete", None
    return "interrupted", "some planned work was not recorded; run again to resume"
