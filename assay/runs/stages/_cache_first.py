"""The judging stages answer what the response cache holds before anything is sent.

Work is read in chunks. A judge that can prepare its requests (`PreparableJudge`:
`assay.judges.LLMJudge`) renders and looks up every item of the chunk first, then the
cache hits become records at once, and only the misses go to the executor's workers,
each with its request and key already made. Doing each step for a whole chunk rather
than every step for one judgment keeps each step's code and data warm (measured when it
was written: the judging of a fully cached 5,000-judgment run, in-process, about a fifth
faster than one judgment at a time through the workers). Records and cache entries are
the same either way; only their order in the file differs (a chunk's hits come first).
The judge stage (ForceBench pairs) and the items stage (a user's items) both use it; each
says how its work becomes prepared requests (`_Stage.prepare`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from itertools import islice
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

from assay.core.judging import Judge, JudgeItem, Judgment
from assay.models._prompted import PreparedCall
from assay.models._types import CallResult
from assay.runs.execute._executor import PAUSE

CHUNK = 128
"""Judgments prepared at once: large enough for the steps to stay warm, small enough
that a chunk of hits (~10 ms) never keeps the event loop from Ctrl-C for long."""


@runtime_checkable
class PreparableJudge(Protocol):
    """A judge whose request can be made and looked up in the cache before it is sent."""

    def prepare(self, items: Sequence[tuple[JudgeItem, str | None]]) -> list[PreparedCall]: ...

    def prepare_variables(
        self, rows: Sequence[tuple[dict[str, Any], str | None]]
    ) -> list[PreparedCall]: ...

    def judgment_of_hit(self, hit: CallResult) -> Judgment: ...

    async def judge_prepared(self, prepared: PreparedCall) -> Judgment: ...


class _Work(Protocol):
    """A planned judgment: `JudgeWork` or `ItemWork`."""

    @property
    def key(self) -> Hashable: ...

    @property
    def judge_id(self) -> str: ...


WorkT = TypeVar("WorkT", bound=_Work)
RecordT = TypeVar("RecordT", bound=BaseModel)
RecordT_co = TypeVar("RecordT_co", bound=BaseModel, covariant=True)


class _Stage(Protocol[WorkT, RecordT_co]):
    """What the pass needs of a judging stage."""

    @property
    def by_id(self) -> Mapping[str, Judge]: ...

    def prepare(self, judge: PreparableJudge, works: list[WorkT]) -> list[PreparedCall]: ...

    def record(self, work: WorkT, judgment: Judgment) -> RecordT_co: ...


class CacheFirst(Generic[WorkT, RecordT]):
    """One session's pass: `misses(todo)` is what the workers are given; `take(work)`
    gives a worker the call prepared for a miss (None for work it did not prepare)."""

    def __init__(
        self,
        stage: _Stage[WorkT, RecordT],
        emit: Callable[[RecordT], None],
        abort: asyncio.Event,
    ) -> None:
        self.stage = stage
        self.emit = emit
        self.abort = abort
        judges = stage.by_id.items()
        self.preparable = {j_id for j_id, j in judges if isinstance(j, PreparableJudge)}
        self._prepared: dict[Hashable, PreparedCall] = {}

    def misses(self, todo: Iterable[WorkT]) -> Iterator[Any]:
        """`todo` less what the cache answered (recorded here), a `PAUSE` after each
        chunk; reading it is the pass's work."""
        if not self.preparable:
            yield from todo
            return
        source = iter(todo)
        while chunk := list(islice(source, CHUNK)):
            prepared, others = self._prepare(chunk)
            misses = self._answer_hits(prepared)
            if misses is None:
                return  # the run is stopping: what was not recorded is redone on resume
            for work, call in misses:
                self._prepared[work.key] = call
                yield work
            yield from others
            yield PAUSE

    def take(self, work: WorkT) -> PreparedCall | None:
        return self._prepared.pop(work.key, None)

    def _prepare(self, chunk: list[WorkT]) -> tuple[list[tuple[WorkT, PreparedCall]], list[WorkT]]:
        """Render and look up every preparable judgment of the chunk, a judge at a time."""
        by_judge: dict[str, list[WorkT]] = {}
        others = []
        for work in chunk:
            if work.judge_id in self.preparable:
                by_judge.setdefault(work.judge_id, []).append(work)
            else:
                others.append(work)
        stage = self.stage
        prepared: list[tuple[WorkT, PreparedCall]] = []
        for judge_id, works in by_judge.items():
            judge: Any = stage.by_id[judge_id]
            prepared += zip(works, stage.prepare(judge, works), strict=True)
        return prepared, others

    def _answer_hits(
        self, prepared: list[tuple[WorkT, PreparedCall]]
    ) -> list[tuple[WorkT, PreparedCall]] | None:
        """Record the cache hits; the misses, or None once the run is aborting."""
        misses = []
        stage = self.stage
        for work, call in prepared:
            hit = call.hit
            if hit is None:
                misses.append((work, call))
                continue
            if self.abort.is_set():
                return None
            judge: Any = stage.by_id[work.judge_id]
            self.emit(stage.record(work, judge.judgment_of_hit(hit)))
        return misses


__all__ = ["CHUNK", "CacheFirst", "PreparableJudge"]
