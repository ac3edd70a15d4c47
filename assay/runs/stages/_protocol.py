"""The contract every stage of a run keeps (judge, items, factuality, gate), so the
runner adds its stages up in one loop instead of knowing each of them.

A session walks the declared stages in order: `load` what earlier sessions recorded
(read-only, before the run directory is locked), `preflight` what this session will
call, count its `todo`, `execute` each stage through the session's executor (a set
abort stops between stages), `close` their record files before the metrics read them,
and report: the files (`outputs`), the manifest's parts (`judged`, `add_to_manifest`),
failures weighed against each stage's own plan (`tallies`), the outcome, and what the
metrics of its records need (`metrics_options`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from assay.core.manifest import Manifest
from assay.core.outcomes import Status
from assay.runs.execute._executor import StageContext
from assay.runs.execute._failure_policy import StageTally
from assay.runs.spec._spec import FailurePolicy
from assay.runs.store._counters import JudgeCounters


@dataclass(frozen=True)
class Judged:
    """A judging stage's share of the manifest's `judges` and judgment counts."""

    planned: int
    recorded: int
    counters: Mapping[str, JudgeCounters]
    planned_by_judge: Counter[str]


@dataclass(frozen=True)
class ToCheck:
    """What a stage will call this session, checked before the run directory exists:
    judges by id (their clients are checked in id order, each once) and other clients."""

    judges: frozenset[str] = frozenset()
    clients: tuple[Any, ...] = ()


@dataclass(frozen=True)
class StageRun:
    """What a stage is handed to execute in: the run directory, the session's context
    (executor, progress, abort, statuses to redo) and the failure policy."""

    run_dir: Path
    ctx: StageContext
    policy: FailurePolicy


@runtime_checkable
class Stage(Protocol):
    """One stage of a run, as the runner sees it."""

    name: str

    def manifest_datasets(self) -> Sequence[Any]:
        """Datasets listed in the manifest's `datasets`."""
        ...

    def check_resumable(self, manifest: Manifest, where: Path) -> None:
        """Refuse to resume when what this stage reads changed since the run started."""
        ...

    def outputs(self) -> dict[str, str]:
        """The record files it adds to the manifest's `outputs`."""
        ...

    def load(self, run_dir: Path, redo: set[Status]) -> None:
        """What earlier sessions recorded, less what this session redoes (reads only)."""
        ...

    def preflight(self, existing: Manifest | None) -> ToCheck:
        """What this session will call (after `load`)."""
        ...

    def todo(self) -> int:
        """Work this session plans to run, as the session's `todo` counts it."""
        ...

    async def execute(self, run: StageRun) -> None:
        """Run the pending work through `run.ctx`'s executor, recording as it goes."""
        ...

    def close(self) -> None:
        """Put every record appended this session on disk (idempotent)."""
        ...

    @property
    def written(self) -> int:
        """Records appended this session, as the session's `written` counts them."""
        ...

    def judged(self) -> Judged | None:
        """Its judges' counters and judgment counts; None for a stage that judges none."""
        ...

    def add_to_manifest(self, manifest: Manifest) -> None:
        """Set its own section of the session's manifest (if it has one)."""
        ...

    def tallies(self, failing: set[Status]) -> list[StageTally]:
        """Its failures against its own plan, for the failure policy."""
        ...

    def failed(self, failing: set[Status]) -> int:
        """Its latest records whose status is in `failing`."""
        ...

    def done(self) -> bool:
        """Every planned unit recorded."""
        ...

    def outcome(self) -> dict[str, Any]:
        """`RunOutcome` fields only this stage reports."""
        ...

    def metrics_options(self) -> dict[str, Any]:
        """Options `compute_metrics` needs for this stage's records."""
        ...
