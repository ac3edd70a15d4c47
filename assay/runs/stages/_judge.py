"""The judge stage: planned judgments in, `judgments.jsonl` records out."""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol, cast

from assay.core.judging import SINGLE, Judge, JudgeItem, Judgment, judge_at, judge_task
from assay.core.manifest import Manifest
from assay.core.outcomes import Status
from assay.core.pairs import ForcePair, Member
from assay.core.records import JudgmentRecord
from assay.core.rundir import JUDGMENTS_FILE
from assay.models._budget import BudgetExhausted
from assay.models._prompted import PreparedCall
from assay.runs.execute._executor import StageContext
from assay.runs.execute._failure_policy import FailureBudget, StageTally, counter_tally
from assay.runs.plan._plan import JudgeWork
from assay.runs.stages._cache_first import CacheFirst, PreparableJudge
from assay.runs.stages._protocol import Judged, StageRun, ToCheck
from assay.runs.store._manifest import identity_fields
from assay.runs.store._resume import check_same_data
from assay.runs.store._store import TallyLog

JudgeKey = tuple[str, str, str, str]
Emit = Callable[[JudgmentRecord], None]


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


class JudgeExecution(Protocol):
    """A way of executing some of the judge stage's work besides one online call per
    judgment (provider batch jobs: `_batch.ProviderBatches`): it records what it
    answers through `emit` (the stage's public `record` makes the records) while
    `handle` judges work online, and returns the work left for the online pass."""

    async def execute(
        self,
        stage: JudgeStage,
        todo: Iterable[JudgeWork],
        run_dir: Path,
        ctx: StageContext,
        emit: Emit,
        handle: Callable[[JudgeWork], Awaitable[None]],
    ) -> Iterable[JudgeWork]: ...


class OnlineOnly:
    """Every judgment online: the work is left as it is, read as it is run."""

    async def execute(
        self,
        stage: JudgeStage,
        todo: Iterable[JudgeWork],
        run_dir: Path,
        ctx: StageContext,
        emit: Emit,
        handle: Callable[[JudgeWork], Awaitable[None]],
    ) -> Iterable[JudgeWork]:
        del stage, run_dir, ctx, emit, handle
        return todo


class JudgeStage:
    """Resolves judge work items to pairs and judges, and records each judgment
    (`judgments.jsonl`, which is the source of truth for the judge counters).

    The pairs are read in file order as the work is handed out (`jobs`) and forgotten
    once their judgments are recorded, so a run holds the pairs in flight, not the file."""

    name = "judge"

    def __init__(
        self,
        datasets: Sequence[PairSource],
        judges: Sequence[Judge],
        execution: JudgeExecution | None = None,
    ) -> None:
        self.execution: JudgeExecution = execution or OnlineOnly()
        self.datasets = list(datasets)
        self.judges = list(judges)
        self.by_id = {j.id: j for j in self.judges}
        self.single = [j.id for j in self.judges if judge_task(j) == SINGLE]  # not pairwise
        self._paths = {d.name: d.path for d in self.datasets}
        self._live: dict[tuple[str, str], _Live] = {}
        self._fields = {j.id: identity_fields(j.describe()) for j in self.judges}
        self._log: TallyLog[JudgmentRecord] | None = None  # `load` opens the session's
        self._todo, self._calls = 0, set[str]()

    def planned_keys(self) -> Iterator[JudgeKey]:
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

    def prepare(self, judge: PreparableJudge, works: list[JudgeWork]) -> list[PreparedCall]:
        """The works' requests, made and looked up together (`_cache_first`)."""
        return judge.prepare([(self.item(w), self.where(w)) for w in works])

    async def judge(self, work: JudgeWork, prepared: PreparedCall | None = None) -> JudgmentRecord:
        """Ask the item's judge (`prepared`: its request, already made and looked up in
        the cache, `_cache_first`), and turn its judgment into the record to append."""
        judge = self.by_id[work.judge_id]
        try:
            if prepared is not None:
                judgment = await cast(PreparableJudge, judge).judge_prepared(prepared)
            else:
                judgment = await judge_at(judge, self.item(work), where=self.where(work))
        except BudgetExhausted:  # not sent: the work stays pending, its pair is let go
            self._let_go(work)
            raise
        return self.record(work, judgment)

    def _let_go(self, work: JudgeWork) -> ForcePair:
        """The work's pair; forgotten once none of its jobs is open."""
        pair_key = (work.dataset, work.pair_id)
        live = self._live[pair_key]
        live.open -= 1
        if live.open <= 0:
            del self._live[pair_key]
        return live.pair

    def record(self, work: JudgeWork, judgment: Judgment) -> JudgmentRecord:
        """The judgment's own fields, what produced it, and where the pair sits (the
        pair's last job recorded: the pair is let go); also how an execution strategy
        (batches) turns its answers into records."""
        pair = self._let_go(work)
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

        cache_first = CacheFirst(self, emit, ctx.abort)

        async def handle(work: JudgeWork) -> None:
            emit(await self.judge(work, cache_first.take(work)))

        todo = await self.execution.execute(self, todo, log.path.parent, ctx, emit, handle)
        await ctx.run(cache_first.misses(todo), handle)

    def worker_budget(self) -> int:
        return worker_budget(self.judges)

    # ---- the stage protocol (`_protocol.Stage`) ---------------------------------------
    def manifest_datasets(self) -> list[PairSource]:
        return self.datasets

    def check_resumable(self, manifest: Manifest, where: Path) -> None:
        del where  # a changed dataset names its own file
        check_same_data(manifest, self.datasets)

    def outputs(self) -> dict[str, str]:
        return {}  # judgments.jsonl is every run's own output (`run_manifest`)

    def load(self, run_dir: Path, redo: set[Status]) -> None:
        """What earlier sessions recorded (a torn tail cut off first) and how many
        planned judgments this session makes, by which judges; a judgment to redo no
        longer counts against the failure policy (its tally goes)."""
        log = TallyLog(run_dir / JUDGMENTS_FILE, JudgmentRecord)
        log.load(repair=True)
        n, judges = 0, set()
        for key in self.planned_keys():
            status = log.records.get(key)
            if status is None or status in redo:
                if status is not None:
                    log.forget(key)
                n += 1
                judges.add(key[3])
        self._log, self._todo, self._calls = log, n, judges

    def _loaded(self) -> TallyLog[JudgmentRecord]:
        assert self._log is not None, "load() the stage first"
        return self._log

    def preflight(self, existing: Manifest | None) -> ToCheck:
        del existing
        return ToCheck(judges=frozenset(self._calls))

    def todo(self) -> int:
        return self._todo

    async def execute(self, run: StageRun) -> None:
        """Judge what no earlier session recorded; the log is opened here and closed
        by `close` (after the later stages: the metrics read it then)."""
        log = self._loaded()
        planned = self.planned()
        log.open()
        budget = FailureBudget(run.policy, planned, log.records.values(), run.ctx.abort)
        ctx = replace(run.ctx, workers=self.worker_budget())
        earlier = log.records  # what earlier sessions recorded, less what is redone
        todo = self.jobs(lambda key: key not in earlier)  # read as run
        await self.run(todo, (self._todo, planned), log, ctx, budget.count)

    def close(self) -> None:
        if self._log is not None:
            self._log.close()

    @property
    def written(self) -> int:
        return self._log.written if self._log is not None else 0

    def recorded(self) -> int:
        """Planned judgments with a record: those of earlier sessions (records of another
        plan do not count) and this session's, every one of them planned."""
        log = self._loaded()
        earlier = sum(1 for key in self.planned_keys() if key in log.records)
        return earlier + log.written

    def judged(self) -> Judged:
        counters = self._loaded().counters()
        return Judged(self.planned(), self.recorded(), counters, self.planned_by_judge())

    def add_to_manifest(self, manifest: Manifest) -> None:
        del manifest  # its part is `judged`

    def tallies(self, failing: set[Status]) -> list[StageTally]:
        counters = self._loaded().counters()
        file = JUDGMENTS_FILE
        return [counter_tally("judge", "judgments", self.planned(), counters, failing, file)]

    def failed(self, failing: set[Status]) -> int:
        return self._loaded().failed(failing)

    def done(self) -> bool:
        return self.recorded() == self.planned()

    def outcome(self) -> dict[str, Any]:
        return {}

    def metrics_options(self) -> dict[str, Any]:
        return {}


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
