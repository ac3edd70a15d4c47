"""The items stage: a user's own labelled items in, `item_judgments.jsonl` records out.

Every judge whose task matches the dataset's judges every item: single-response datasets
by "judge" judges (LLM prompts of task "judge", baselines, Python judges), pairwise
datasets by "pairwise" judges, each item twice (`ab`: response A shown first, `ba`:
response B first) so position bias can be measured. `items.jsonl` holds the items' gold
and raters, so agreement metrics rebuild from the run directory alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, cast

from assay.core.judging import PAIRWISE, SINGLE, Judge, Judgment, judge_task, judge_variables
from assay.core.manifest import Manifest
from assay.core.outcomes import Status
from assay.core.records import ItemJudgmentRecord, ItemRecord, Preference
from assay.core.rundir import ITEM_JUDGMENTS_FILE, ITEMS_FILE
from assay.datasets import ItemsDataset
from assay.errors import SpecError
from assay.juries import JurySpec, check_juries, refresh_jury_records
from assay.models._prompted import PreparedCall
from assay.runs.assemble._items_gold import (
    check_gold_fits,
    gold_scale_warnings,
    missing_gold_warnings,
)
from assay.runs.assemble._items_variables import check_item_variables, needed_variables
from assay.runs.execute._executor import StageContext
from assay.runs.execute._failure_policy import FailureBudget, StageTally, counter_tally
from assay.runs.plan._plan import ItemWork
from assay.runs.stages._cache_first import CacheFirst, PreparableJudge
from assay.runs.stages._judge import worker_budget
from assay.runs.stages._protocol import Judged, StageRun, ToCheck
from assay.runs.store._counters import JudgeCounters
from assay.runs.store._manifest import identity_fields
from assay.runs.store._resume import check_same_data
from assay.runs.store._store import TallyLog, write_jsonl_atomic

Order = Literal["ab", "ba"]
ORDERS: tuple[Order, Order] = ("ab", "ba")
PAIRWISE_LABELS = ("a", "b", "tie")
_SLOT: dict[tuple[str, Order], Preference] = {
    ("a", "ab"): "A",
    ("b", "ab"): "B",
    ("a", "ba"): "B",
    ("b", "ba"): "A",
}


def task_of(dataset: ItemsDataset) -> str:
    """The judge task a dataset needs: "pairwise" or "judge" (one response)."""
    return PAIRWISE if dataset.task == "pairwise" else SINGLE


def preference_of(label: str | None, order: Order | None) -> Preference | None:
    """A slot verdict (a, b, tie as the judge saw them) as a preference between the
    dataset's responses A and B; None when the verdict is not a pairwise label."""
    if label is None or order is None:
        return None
    slot = label.strip().lower()
    if slot == "tie":
        return "tie"
    return _SLOT.get((slot, order))


class ItemsStage:
    """Plans, runs and summarises the judging of a run's items datasets."""

    name = "items"

    def __init__(
        self,
        datasets: Sequence[ItemsDataset],
        judges: Sequence[Judge],
        spec_path: str,
        juries: Sequence[JurySpec] = (),
    ) -> None:
        self.datasets = list(datasets)
        self.judges = list(judges)
        self.by_id = {j.id: j for j in self.judges}
        self._items = {(d.name, it.id): (d, it) for d in self.datasets for it in d.items}
        self._judges_of = {
            d.name: [j for j in self.judges if judge_task(j) == task_of(d)] for d in self.datasets
        }
        self._fields = {j.id: identity_fields(j.describe()) for j in self.judges}
        self.records: dict[Any, Status] = {}
        self._tallies: TallyLog[ItemJudgmentRecord] | None = None
        self.written = 0  # records appended this session
        self._planned: list[ItemWork] | None = None
        for i, d in enumerate(self.datasets):
            self._check_judges(d, f"datasets[{i}]", spec_path)
        self.juries = list(juries)  # voted from the records at the end (`refresh_jury_records`)
        judge_ids = {d: [j.id for j in judges] for d, judges in self._judges_of.items()}
        check_juries(self.juries, self.item_rows(), judge_ids, spec_path)

    # ---- checks ---------------------------------------------------------------------
    def _check_judges(self, dataset: ItemsDataset, field: str, spec_path: str) -> None:
        """Each dataset needs a judge of its task; pairwise prompts answer a, b or tie;
        judges without a prompt need `claim` and `evidence` in every row; gold and
        raters' labels must be labels of every judge (`check_gold_fits`)."""
        judges = self._judges_of[dataset.name]
        if not judges:
            what = "a pairwise prompt" if dataset.task == "pairwise" else "a single-response judge"
            raise SpecError(
                f"items dataset {dataset.name!r} ({dataset.task}) has no judge with {what}",
                file=spec_path,
                field=field,
            )
        for judge in judges:
            prompt = getattr(judge, "prompt", None)
            if dataset.task == "pairwise" and prompt is not None:
                extra = set(prompt.meta.labels) - set(PAIRWISE_LABELS)
                if extra:
                    raise SpecError(
                        f"pairwise prompt {prompt.ref} has labels {sorted(extra)}; "
                        "a pairwise judge answers a, b or tie",
                        file=spec_path,
                        field=field,
                    )
            if dataset.task == "single":
                check_item_variables(dataset, judge.id, needed_variables(judge))
        check_gold_fits(dataset, judges, spec_path, field)

    def warnings(self) -> list[str]:
        """Datasets whose gold is missing for some items (statistics over fewer), or
        whose gold scores leave a judge's scale (its MAE compares two scales)."""
        out = [line for d in self.datasets for line in missing_gold_warnings(d)]
        scales = (gold_scale_warnings(d, self._judges_of[d.name]) for d in self.datasets)
        return out + [line for lines in scales for line in lines]

    # ---- planning -------------------------------------------------------------------
    def plan(self) -> list[ItemWork]:
        """Every (dataset, item, order, judge), items in file order."""
        if self._planned is None:
            self._planned = [
                ItemWork(dataset=d.name, item_id=item.id, order=order, judge_id=judge.id)
                for d in self.datasets
                for item in d.items
                for order in (ORDERS if d.task == "pairwise" else (None,))
                for judge in self._judges_of[d.name]
            ]
        return self._planned

    def planned(self) -> int:
        return len(self.plan())

    def load(self, run_dir: Path, redo: set[Status]) -> None:
        """What earlier sessions recorded (read-only), less what this session redoes."""
        log = TallyLog(run_dir / ITEM_JUDGMENTS_FILE, ItemJudgmentRecord)
        for key, status in list(log.load().items()):
            if status in redo:
                log.forget(key)
        self.records, self._tallies = log.records, log

    def pending(self) -> list[ItemWork]:
        """Planned work with no record yet (after `load`)."""
        return [w for w in self.plan() if w.key not in self.records]

    def todo(self) -> int:
        return len(self.pending())

    def recorded(self) -> int:
        """Planned work recorded by earlier sessions, and this session's."""
        return sum(1 for w in self.plan() if w.key in self.records) + self.written

    def failed(self, failing: set[Status]) -> int:
        return self._tallies.failed(failing) if self._tallies is not None else 0

    def counters(self) -> dict[str, JudgeCounters]:
        """Per-judge counters of the latest records (the manifest's `judges[].stats`)."""
        return self._tallies.counters() if self._tallies is not None else {}

    def done(self) -> bool:
        return self.recorded() == self.planned()

    # ---- judging --------------------------------------------------------------------
    def variables(self, work: ItemWork) -> dict[str, Any]:
        """The item's template variables; in order `ba` the two responses swap slots."""
        item = self._items[(work.dataset, work.item_id)][1]
        values = dict(item.variables)
        if work.order == "ba":
            values["response_a"], values["response_b"] = item.response_b, item.response_a
        return values

    def where(self, work: ItemWork) -> str:
        dataset, item = self._items[(work.dataset, work.item_id)]
        order = f", order {work.order}" if work.order else ""
        return f"{dataset.path} line {item.line} (item {item.id!r}{order})"

    def prepare(self, judge: PreparableJudge, works: list[ItemWork]) -> list[PreparedCall]:
        """The works' requests, made and looked up together (`_cache_first`)."""
        return judge.prepare_variables([(self.variables(w), self.where(w)) for w in works])

    async def judge(
        self, work: ItemWork, prepared: PreparedCall | None = None
    ) -> ItemJudgmentRecord:
        """Ask the work item's judge (`prepared`: its request, already made and looked up
        in the cache): prompted judges see exactly the item's variables."""
        judge = self.by_id[work.judge_id]
        if prepared is not None:
            judgment = await cast(PreparableJudge, judge).judge_prepared(prepared)
        else:
            values = self.variables(work)
            judgment = await judge_variables(judge, values, where=self.where(work))
        return self.record(work, judgment)

    def record(self, work: ItemWork, judgment: Judgment) -> ItemJudgmentRecord:
        """The judgment's own fields, what produced it, and the item it answers."""
        values = {**judgment.model_dump(), **self._fields[work.judge_id]}
        values.update(
            dataset=work.dataset,
            item_id=work.item_id,
            judge_id=work.judge_id,
            order=work.order,
            preference=preference_of(judgment.label, work.order) if judgment.ok else None,
            raw_score=_raw_score(self.by_id[work.judge_id], judgment),
            latency_s=round(judgment.latency_s, 6),
            recorded_at=datetime.now(UTC),
        )
        return ItemJudgmentRecord.model_validate(values)

    def item_rows(self) -> list[ItemRecord]:
        """The item universe with its gold: what agreement metrics are computed against."""
        return [
            ItemRecord(
                dataset=d.name,
                item_id=item.id,
                line=item.line,
                pairwise=d.task == "pairwise",
                gold_label=item.gold_label,
                gold_score=item.gold_score,
                gold_preference=item.gold_preference,
                ratings=item.ratings,
                split=item.split,
            )
            for d in self.datasets
            for item in d.items
        ]

    async def run(
        self,
        run_dir: Path,
        ctx: StageContext,
        redo: set[Status],
        on_record: Callable[[Status], None],
    ) -> None:
        """Judge what is not recorded yet, appending each record as it arrives."""
        write_jsonl_atomic(run_dir / ITEMS_FILE, self.item_rows())
        log = TallyLog(run_dir / ITEM_JUDGMENTS_FILE, ItemJudgmentRecord)
        recorded = log.resume()
        planned = self.plan()
        todo = [w for w in planned if w.key not in recorded or recorded[w.key] in redo]
        for work in todo:
            if work.key in recorded:
                log.forget(work.key)  # a redone judgment no longer counts
        self.records = recorded  # earlier sessions' records; this session's count in `written`
        self._tallies = log
        ctx.progress.start("judging items", total=len(planned), done=len(planned) - len(todo))

        def emit(record: ItemJudgmentRecord) -> None:
            log.append(record)
            ctx.progress.advance(record.status, cache_hit=record.cache_hit)
            on_record(record.status)

        cache_first = CacheFirst(self, emit, ctx.abort)

        async def handle(work: ItemWork) -> None:
            emit(await self.judge(work, cache_first.take(work)))

        try:
            await ctx.run(cache_first.misses(todo), handle)
        finally:
            self.written = log.written
            log.close()

    def worker_budget(self) -> int:
        return worker_budget(self.judges)

    # ---- the stage protocol (`_protocol.Stage`) ---------------------------------------
    def manifest_datasets(self) -> list[ItemsDataset]:
        return self.datasets

    def check_resumable(self, manifest: Manifest, where: Path) -> None:
        del where  # a changed dataset names its own file
        check_same_data(manifest, self.datasets)

    def outputs(self) -> dict[str, str]:
        return {}  # item_judgments.jsonl and items.jsonl: never listed in `outputs`

    def preflight(self, existing: Manifest | None) -> ToCheck:
        """The judges with work left this session."""
        del existing
        return ToCheck(judges=frozenset(w.judge_id for w in self.pending()))

    async def execute(self, run: StageRun) -> None:
        kept = self.records.values()  # what earlier sessions recorded, less what is redone
        budget = FailureBudget(run.policy, self.planned(), kept, run.ctx.abort)
        ctx = replace(run.ctx, workers=self.worker_budget())
        await self.run(run.run_dir, ctx, run.ctx.redo, budget.count)
        refresh_jury_records(run.run_dir, self.juries)

    def close(self) -> None:
        """Nothing open: `run` closes its log however it ends."""

    def judged(self) -> Judged:
        by_judge = Counter(w.judge_id for w in self.plan())
        return Judged(self.planned(), self.recorded(), self.counters(), by_judge)

    def add_to_manifest(self, manifest: Manifest) -> None:
        del manifest  # its part is `judged`

    def tallies(self, failing: set[Status]) -> list[StageTally]:
        planned, counters = self.planned(), self.counters()
        unit, file = "item judgments", ITEM_JUDGMENTS_FILE
        return [counter_tally("items", unit, planned, counters, failing, file)]

    def outcome(self) -> dict[str, Any]:
        return {}

    def metrics_options(self) -> dict[str, Any]:
        return {}


def _raw_score(judge: Judge, judgment: Judgment) -> float | None:
    """The answer's value on the prompt's declared scale (`score_field`), if it has one."""
    prompt = getattr(judge, "prompt", None)
    field = prompt.meta.score_field if prompt is not None else None
    value = (judgment.parsed or {}).get(field) if field else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
