"""Rich progress bars, one per stage, each with a live status tally; silent if off."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from assay.core.outcomes import Status


class Progress:
    """One bar per stage (judging, decomposing, verifying) with a running tally of
    outcomes and cache hits, so a long run shows failures as they happen. The bars draw
    on stderr: stdout holds only results, so `assay run ... > out.txt` stays clean."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.tally: Counter[str] = Counter()
        self.cache_hits = 0
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> Progress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )
            from rich.progress import Progress as RichProgress

            self._progress = RichProgress(
                TextColumn("[bold]{task.fields[stage]:<11}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                TextColumn("{task.description}"),
                transient=False,
                console=Console(stderr=True),
            )
            self._progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._refresh()
            self._progress.__exit__(None, None, None)

    def start(self, stage: str, *, total: int, done: int) -> None:
        """Begin a stage's bar; `done` counts work recorded by earlier sessions."""
        self._refresh()
        self.tally = Counter()
        self.cache_hits = 0
        if self._progress is not None:
            self._task = self._progress.add_task("", total=total, completed=done, stage=stage)

    def add_recorded(self, counters: Iterable[Any]) -> None:
        """Count what earlier sessions recorded (per-judge `JudgeCounters`) in the tally."""
        for c in counters:
            self.tally.update(c.by_status)
            self.cache_hits += c.cache_hits
        self._refresh()

    def _summary(self) -> str:
        parts = [f"{k} {v}" for k, v in sorted(self.tally.items())]
        parts.append(f"cache {self.cache_hits}")
        return " · ".join(parts)

    def _refresh(self) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, description=self._summary())

    def advance(self, status: Status, *, cache_hit: bool = False, count: bool = True) -> None:
        self.tally[status.value] += 1
        self.cache_hits += int(cache_hit)
        if self._progress is not None and self._task is not None:
            self._progress.update(
                self._task, advance=1 if count else 0, description=self._summary()
            )
