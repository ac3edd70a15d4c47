"""The judge stage: planned judgments in, `judgments.jsonl` records out."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from assay.core.judging import SINGLE, Judge, JudgeItem, Judgment, judge_task
from assay.core.outcomes import Status
from assay.core.pairs import ForcePair
from assay.core.records import JudgmentRecord
from assay.datasets import LoadedDataset
from assay.runs._executor import StageContext
from assay.runs._manifest import identity_fields
from assay.runs._plan import JudgeWork, plan_judgments
from assay.runs._stage_batch import run_batches
from assay.runs._store import TallyLog


class JudgeStage:
    """Resolves judge work items to pairs and judges, and records each judgment."""

    def __init__(self, datasets: Sequence[LoadedDataset], judges: Sequence[Judge]) -> None:
        self.datasets = list(datasets)
        self.judges = list(judges)
        self.by_id = {j.id: j for j in self.judges}
        self._pairs = {(d.name, p.id): (d.path, p) for d in self.datasets for p in d.pairs}
        self._fields = {j.id: identity_fields(j.describe()) for j in self.judges}

    def plan(self) -> list[JudgeWork]:
        """Every judgment the run makes, in the order it is run."""
        datasets = [(d.name, d.pairs) for d in self.datasets]
        single = [j.id for j in self.judges if judge_task(j) == SINGLE]  # not pairwise ones
        return plan_judgments(datasets, single)

    def pair(self, work: JudgeWork) -> ForcePair:
        return self._pairs[(work.dataset, work.pair_id)][1]

    def item(self, work: JudgeWork) -> JudgeItem:
        """What the judge sees: this member's claim, the pair's evidence and question."""
        pair = self.pair(work)
        return JudgeItem(
            claim=pair.claim(work.member), evidence=pair.evidence, question=pair.question
        )

    def where(self, work: JudgeWork) -> str:
        """The data row, as template errors name it."""
        path = self._pairs[(work.dataset, work.pair_id)][0]
        return f"{path} pair {work.pair_id!r} ({work.member.value})"

    async def judge(self, work: JudgeWork) -> JudgmentRecord:
        """Ask the item's judge, and turn its judgment into the record to append."""
        from assay.judges import LLMJudge

        judge = self.by_id[work.judge_id]
        item = self.item(work)
        if isinstance(judge, LLMJudge):  # names the data row in template errors
            judgment = await judge(item, where=self.where(work))
        else:
            judgment = await judge(item)
        return self._record(work, judgment)

    def _record(self, work: JudgeWork, judgment: Judgment) -> JudgmentRecord:
        """The judgment's own fields, what produced it, and where the pair sits."""
        pair = self.pair(work)
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
        todo: Sequence[JudgeWork],
        planned: int,
        log: TallyLog[JudgmentRecord],
        ctx: StageContext,
        on_record: Callable[[Status], None],
    ) -> None:
        """Judge `todo`, appending each record as it arrives; what earlier sessions
        recorded counts towards the progress bar."""
        if planned:
            ctx.progress.start("judging", total=planned, done=planned - len(todo))
            for rec in log.records.values():
                ctx.progress.advance(rec.status, cache_hit=rec.cache_hit, count=False)

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
