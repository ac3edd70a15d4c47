"""The gate stage: each answer's question in, one `gates.jsonl` record per question out.

Runs after verification in `assay run`. The file is append-only like every record file:
a question already recorded is not scored again (a resumed run goes on where it
stopped; a torn last line is cut off first), a later line for the same key wins, and a
failure is recorded as a non-ok status, never dropped. Questions go to the scorer in
chunks, so retrieval and reranking batch across questions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from assay.core.manifest import GateSection, Manifest
from assay.core.outcomes import Status
from assay.core.records import GateRecord
from assay.core.rundir import GATES_FILE, latest
from assay.datasets import AnswersDataset
from assay.errors import DatasetError
from assay.runs.execute._executor import StageContext
from assay.runs.execute._failure_policy import FailureBudget, StageTally, first_error, tally
from assay.runs.stages._gate_scorer import GateQuestion, GateScorer
from assay.runs.stages._protocol import Judged, StageRun, ToCheck
from assay.runs.store._store import RecordLog

CHUNK = 64

GateKey = tuple[str, str, str]


def gate_questions(datasets: Sequence[AnswersDataset]) -> list[GateQuestion]:
    """One question per answer (its id is the answer's), in dataset order; an answer
    without a question is a one-line error naming its file: there is nothing to
    retrieve for."""
    out = []
    for ds in datasets:
        for item in ds.items:
            if not (item.question or "").strip():
                raise DatasetError(
                    f"answer {item.id!r} has no question; the [gate] retrieves passages "
                    "for each answer's question",
                    file=ds.path,
                    field="question",
                )
            out.append(GateQuestion(ds.name, item.id, item.question or ""))
    return out


def gate_stats(records: Sequence[GateRecord]) -> dict[str, Any]:
    """Counts from the records: statuses, cache hits, candidates, empty pools."""
    by_status = Counter(r.status.value for r in records)
    return {
        "recorded": len(records),
        "cache_hits": sum(1 for r in records if r.cache_hit),
        "by_status": {s.value: by_status.get(s.value, 0) for s in Status},
        "candidates": sum(len(r.candidates) for r in records),
        "no_candidates": sum(1 for r in records if r.status is Status.OK and not r.candidates),
    }


class GateStage:
    """Plans, runs and summarises the gate of one run."""

    name = "gate"

    def __init__(self, scorer: GateScorer, datasets: Sequence[AnswersDataset]) -> None:
        self.scorer = scorer
        self.questions = gate_questions(datasets)
        self.records: dict[GateKey, GateRecord] = {}
        self.written = 0  # records appended this session

    def key(self, question: GateQuestion) -> GateKey:
        return (question.dataset, question.question_id, self.scorer.gate_id)

    # ---- planning -------------------------------------------------------------------
    def load(self, run_dir: Path, redo: set[Status]) -> None:
        """What earlier sessions recorded for this gate (read-only), less what this
        session redoes."""
        done = latest(run_dir / GATES_FILE, GateRecord)
        mine = {self.key(q) for q in self.questions}
        self.records = {k: r for k, r in done.items() if k in mine and r.status not in redo}

    def pending(self) -> list[GateQuestion]:
        return [q for q in self.questions if self.key(q) not in self.records]

    def planned(self) -> int:
        return len(self.questions)

    def recorded(self) -> int:
        return len(self.records)

    def todo(self) -> int:
        return len(self.pending())

    def failed(self, failing: set[Status]) -> int:
        return sum(1 for r in self.records.values() if r.status in failing)

    def done(self) -> bool:
        return self.recorded() == self.planned()

    def tally(self, failing: set[Status]) -> StageTally:
        """The gate stage's failures against its planned questions."""
        statuses = (r.status for r in self.records.values())
        example = first_error(self.records.values(), failing)
        return tally("gate", "questions", self.planned(), statuses, failing, GATES_FILE, example)

    def client_to_check(self) -> GateScorer | None:
        """The scorer, when this session has questions to score (its `preflight` loads
        the reranker and the index before the run directory exists)."""
        return self.scorer if self.pending() else None

    def manifest_section(self) -> GateSection:
        return GateSection(
            **self.scorer.describe(),
            planned_questions=self.planned(),
            recorded_questions=self.recorded(),
            stats=gate_stats(list(self.records.values())),
        )

    # ---- running --------------------------------------------------------------------
    async def run(self, run_dir: Path, ctx: StageContext) -> None:
        """Score every question not yet recorded (or recorded with a status to redo),
        appending each chunk's records as it finishes."""
        log = RecordLog(run_dir / GATES_FILE, GateRecord)
        recorded = log.resume()
        mine = {self.key(q) for q in self.questions}
        self.records = {k: r for k, r in recorded.items() if k in mine and r.status not in ctx.redo}
        todo = self.pending()
        chunks = [todo[i : i + CHUNK] for i in range(0, len(todo), CHUNK)]
        ctx.progress.start("gating", total=self.planned(), done=self.planned() - len(todo))

        async def score(chunk: list[GateQuestion]) -> None:
            for record in await self.scorer.score_many(chunk):
                log.append(record)
                self.records[record.key] = record
                ctx.progress.advance(record.status, cache_hit=record.cache_hit)
                ctx.count(record.status)

        try:
            await ctx.executor.run(chunks, score, workers=1, abort=ctx.abort)
        finally:
            self.written = log.written
            log.close()

    # ---- the stage protocol (`_protocol.Stage`) ---------------------------------------
    def manifest_datasets(self) -> list[AnswersDataset]:
        return []  # the factuality stage's answers: listed in its own section

    def check_resumable(self, manifest: Manifest, where: Path) -> None:
        del manifest, where  # its questions are the answers the factuality stage checks

    def outputs(self) -> dict[str, str]:
        return {"gates": GATES_FILE}

    def preflight(self, existing: Manifest | None) -> ToCheck:
        del existing
        return ToCheck(clients=(self.client_to_check(),))

    async def execute(self, run: StageRun) -> None:
        """Score in one worker (the scorer batches across questions), stopping once
        the gate's own failures pass the policy's limit."""
        kept = [r.status for r in self.records.values()]
        budget = FailureBudget(run.policy, self.planned(), kept, run.ctx.abort)
        await self.run(run.run_dir, replace(run.ctx, workers=1, on_record=budget.count))

    def close(self) -> None:
        """Nothing open: `run` closes its log however it ends."""

    def judged(self) -> Judged | None:
        return None

    def add_to_manifest(self, manifest: Manifest) -> None:
        manifest.gate = self.manifest_section()

    def tallies(self, failing: set[Status]) -> list[StageTally]:
        return [self.tally(failing)]

    def outcome(self) -> dict[str, Any]:
        return {}

    def metrics_options(self) -> dict[str, Any]:
        return {}
