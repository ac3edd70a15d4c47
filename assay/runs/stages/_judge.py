"""The judge stage: planned judgments in, `judgments.jsonl` records out."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from assay.core.judging import SINGLE, Judge, JudgeItem, Judgment, judge_at, judge_task
from assay.core.outcomes import Status
from assay.core.pairs import ForcePair, Member
from assay.core.records import JudgmentRecord
from assay.runs.execute._executor import StageContext
from assay.runs.plan._plan import JudgeWork
from assay.runs.stages._batch import run_batches
from assay.runs.store._manifest import identity_fields
from assay.runs.store._store import TallyLog


class PairSource(Protocol):
    """A ForceBench dataset as the judge stage reads it: its ids, and its pairs in file
    order (`PairsFile` reads them again from disk; `LoadedDataset` holds them)."""

    name: str
    path: str

    @property
    def rows(self) -> int: ...

    @property
    def ids(self) -> list[str]: ...

    def iter_pairs(self) -> Iterator[ForcePair]: ...


class JudgeStage:
    """Resolves judge work items to pairs and judges, and records each judgment.

    The pairs are read in file order as the work is handed out (`jobs`) and forgotten
    once their judgments are recorded, so a run holds the pairs in flight, not the file."""

    def __init__(self, datasets: Sequence[PairSource], judges: Sequence[Judge]) -> None:
        self.datasets = list(datasets)
        self.judges = list(judges)
        self.by_id = {j.id: j for j in self.judges}
        self.single = [j.id for j in self.judges if judge_task(j) == SINGLE]  # not pairwise
        self._paths = {d.name: d.path for d in self.datasets}
        self._live: dict[tuple[str, str], _Live] = {}
        self._fields = {j.id: identity_fields(j.describe()) for j in self.judges}

    def planned_keys(self) -> Iterator[tuple[str, str, str, str]]:
        """The record key of every judgment the run makes, in the order it is run."""
        members = [m.value for m in Member]
        for d in self.datasets:
            for pair_id in d.ids:
                for member in members:
                    for judge_id in self.single:
                        yield (d.name, pair_id, member, judge_id)

    def plan(self) -> Iterator[JudgeWork]:
        """Every judgment the run makes, in the order it is run (made as it is read)."""
        for dataset, pair_id, member, judge_id in self.planned_keys():
            yield JudgeWork(dataset=dataset, pair_id=pair_id, member=member, judge_id=judge_id)

    def planned(self) -> int:
        return sum(d_rows(d) for d in self.datasets) * len(Member) * len(self.single)

    def planned_by_judge(self) -> Counter[str]:
        per_judge = sum(d_rows(d) for d in self.datasets) * len(Member)
        return Counter({judge_id: per_judge for judge_id in self.single})

    def works_with_pairs(
        self, wanted: Callable[[tuple[str, str, str, str]], bool]
    ) -> Iterator[tuple[JudgeWork, ForcePair]]:
        """The planned work whose key is `wanted`, each with its pair, reading the pairs
        in file order."""
        for d in self.datasets:
            for pair in d.iter_pairs():
                for member in Member:
                    for judge_id in self.single:
                        if wanted((d.name, pair.id, member.value, judge_id)):
                            work = JudgeWork(
                                dataset=d.name, pair_id=pair.id, member=member, judge_id=judge_id
                            )
                            yield work, pair

    def jobs(self, wanted: Callable[[tuple[str, str, str, str]], bool]) -> Iterator[JudgeWork]:
        """`works_with_pairs` for a run: each pair is kept until its last job is recorded."""
        for work, pair in self.works_with_pairs(wanted):
            live = self._live.setdefault((work.dataset, work.pair_id), _Live(pair))
            live.open += 1
            yield work

    def pair(self, work: JudgeWork) -> ForcePair:
        return self._live[(work.dataset, work.pair_id)].pair

    def item(self, work: JudgeWork) -> JudgeItem:
        """What the judge sees: this member's claim, the pair's evidence and question."""
        return item_of(self.pair(work), work)

    def where(self, work: JudgeWork) -> str:
        """The data row, as template errors name it."""
        return f"{self._paths[work.dataset]} pair {work.pair_id!r} ({work.member.value})"

    async def judge(self, work: JudgeWork) -> JudgmentRecord:
        """Ask the item's judge, and turn its judgment into the record to append."""
        judge = self.by_id[work.judge_id]
        judgment = await judge_at(judge, self.item(work), where=self.where(work))
        return self._record(work, judgment)

    def _record(self, work: JudgeWork, judgment: Judgment) -> JudgmentRecord:
        """The judgment's own fields, what produced it, and where the pair sits (the
        pair's last job recorded: the pair is let go)."""
        pair_key = (work.dataset, work.pair_id)
        live = self._live[pair_key]
        pair = live.pair
        live.open -= 1
        if live.open <= 0:
            del self._live[pair_key]
        values = {**judgment.model_dump(), **self._fields[work.judge_id]}
        values.update(
            dataset=work.dataset,
            pair_id=work.pair_id,
            member=work.member,
            judge_id=work.judge_id,
            axis=pair.axis,
            severity=pair.severity,
            latency_s=round(judgment.latency_s, 6),
            recorded_at=datetime.now(UTC),
        )
        return JudgmentRecord.model_validate(values)

    async def run(
        self,
        todo: Iterable[JudgeWork],
        counts: tuple[int, int],
        log: TallyLog[JudgmentRecord],
        ctx: StageContext,
        on_record: Callable[[Status], None],
    ) -> None:
        """Judge `todo` (`counts`: how many of how many planned), appending each record
        as it arrives; what earlier sessions recorded counts towards the progress bar."""
        n_todo, planned = counts
        if planned:
            ctx.progress.start("judging", total=planned, done=planned - n_todo)
            ctx.progress.add_recorded(log.counters().values())

        def emit(record: JudgmentRecord) -> None:
            log.append(record)
            ctx.progress.advance(record.status, cache_hit=record.cache_hit)
            on_record(record.status)

        async def handle(work: JudgeWork) -> None:
            emit(await self.judge(work))

        todo = await run_batches(self, todo, log.path.parent, ctx, emit, handle)  # mode = "batch"
        await ctx.run(todo, handle)

    def worker_budget(self) -> int:
        return worker_budget(self.judges)


@dataclass(slots=True)
class _Live:
    """A pair read from its file, and how many of its jobs are not yet recorded."""

    pair: ForcePair
    open: int = 0


def d_rows(dataset: PairSource) -> int:
    return dataset.rows


def item_of(pair: ForcePair, work: JudgeWork) -> JudgeItem:
    """What a judge sees of `work`: the member's claim, the pair's evidence and question."""
    return JudgeItem(claim=pair.claim(work.member), evidence=pair.evidence, question=pair.question)


def worker_budget(judges: Sequence[Judge]) -> int:
    """Enough workers to keep every client's concurrency slots busy, and no more.

    A judge with no client runs in-process (one worker for all of them) unless it
    says how many calls it can take at once (`max_concurrency`)."""
    clients: dict[int, int] = {}
    local = 0
    for judge in judges:
        client: Any = getattr(judge, "client", None)
        if client is not None:
            clients[id(client)] = client.config.max_concurrency
        else:
            local = max(local, int(getattr(judge, "max_concurrency", 1) or 1))
    return min(max(sum(clients.values()) + local, 1), 1024)
