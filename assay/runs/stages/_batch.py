"""Provider batch jobs for judges with `mode = "batch"`: the judge stage's cache misses
go to the provider as one batch per model endpoint instead of one request each.

Order matters for resuming: the batch file is written and uploaded, the batch created,
and its id recorded in `batches.json` (and the manifest) before the first poll; a run
killed while polling is resumed by polling that id again, never by resubmitting. Answers
become records and cache entries exactly as online answers do; requests an expired,
failed or cancelled batch left unanswered (and repeats of a request already in the
batch) go back to the caller, which sends them online.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from assay.core.judging import Judge, JudgeItem, Judgment
from assay.core.outcomes import Status
from assay.core.records import JudgmentRecord
from assay.errors import AssayError, RunError
from assay.models._budget import BudgetExhausted, Ticket, hold, settle
from assay.models._model import failed_result
from assay.models._transport import TransportError
from assay.models._types import ChatRequest, ModelResult
from assay.redaction import redact_url
from assay.runs.execute._executor import StageContext
from assay.runs.plan._plan import JudgeWork
from assay.runs.stages._batch_state import STATE_FILE, BatchJob, load_state, quiet, say_line, slug
from assay.runs.store._manifest import set_judge_batches
from assay.runs.store._store import write_json_atomic

if TYPE_CHECKING:  # assay.models._batch (aiohttp): imported when a batch is planned
    from assay.judges import LLMJudge
    from assay.models._batch import BatchInfo, OpenAIBatchAPI, ResultLine

BATCH_DIR = "batches"
MAX_POLL_FACTOR = 20  # polls back off to at most this many times `batch_poll_s`
# OpenAI's limits per batch: 50,000 requests, a 200 MB input file (kept under, with room)
MAX_BATCH_REQUESTS = 50_000
MAX_BATCH_BYTES = 190_000_000


@dataclass
class Pending:
    """A judgment waiting for its batch answer."""

    work: JudgeWork
    judge: LLMJudge
    request: ChatRequest
    key: str
    ticket: Ticket | None = None  # its worst case held by the run's budget (batch prices)


@dataclass
class Group:
    """The pending judgments of one model endpoint: one batch between them."""

    api: OpenAIBatchAPI
    judges: dict[str, LLMJudge] = field(default_factory=dict)
    pending: dict[str, Pending] = field(default_factory=dict)


Emit = Callable[[JudgmentRecord], None]


class BatchedStage(Protocol):
    """What batching needs of `assay.runs.stages._judge.JudgeStage`: its judges, what
    each work item shows a judge, and its public `record`."""

    @property
    def judges(self) -> Sequence[Judge]: ...

    @property
    def by_id(self) -> Mapping[str, Judge]: ...

    def item(self, work: JudgeWork) -> JudgeItem: ...

    def where(self, work: JudgeWork) -> str: ...

    def record(self, work: JudgeWork, judgment: Judgment) -> JudgmentRecord: ...


def is_batch_judge(judge: Any) -> bool:
    return getattr(judge, "mode", "online") == "batch"


class ProviderBatches:
    """How the judge stage executes with provider batches (`_judge.JudgeExecution`):
    `mode = "batch"` judges send their cache misses as batches, the rest goes online."""

    async def execute(
        self,
        stage: BatchedStage,
        todo: Iterable[JudgeWork],
        run_dir: Path,
        ctx: StageContext,
        emit: Emit,
        handle: Callable[[JudgeWork], Awaitable[None]],
    ) -> Iterable[JudgeWork]:
        """Judge the batch judges' cache misses through batches while `handle` judges
        the rest online (cache hits, online judges); returns the work still to send
        online: what no batch answered, and repeats of a batched request (cache hits
        by then)."""
        batch_judges = [j for j in stage.judges if is_batch_judge(j)]
        if not batch_judges:
            return todo  # read as it is run: nothing to hold
        runner = BatchRunner(stage, run_dir, emit, say=say_line if ctx.progress.enabled else quiet)
        runner.attach_jobs(batch_judges)
        online, later, groups = runner.split(list(todo))
        try:
            async with asyncio.TaskGroup() as tasks:  # a failure on either side stops the other
                tasks.create_task(ctx.run(online, handle))
                batches = [tasks.create_task(runner.run_group(g)) for g in groups.values()]
        except BaseExceptionGroup as failed:  # the first failure, as the runner knows it
            raise failed.exceptions[0] from None
        for batch in batches:
            later += batch.result()
        return later


class BatchRunner:
    """Submits, polls and collects the batches of one judge stage session."""

    def __init__(
        self, stage: BatchedStage, run_dir: Path, emit: Emit, *, say: Callable[[str], None]
    ) -> None:
        self.stage = stage
        self.say = say  # progress lines on stderr (quiet when the run shows no progress)
        self.run_dir = run_dir
        self.emit = emit
        self.state_path = run_dir / STATE_FILE
        self.state = load_state(self.state_path)

    def attach_jobs(self, judges: Sequence[Any]) -> None:
        """Show recorded batches in each judge's manifest entry (earlier sessions' too)."""
        for judge in judges:
            judge.batch_jobs = [j.summary() for j in self.state.jobs if judge.id in j.judges]

    def split(
        self, todo: Sequence[JudgeWork]
    ) -> tuple[list[JudgeWork], list[JudgeWork], dict[int, Group]]:
        """Work to send online now (online judges, cache hits), after the batches
        (repeats of a batched request), and the batches' pending requests."""
        online: list[JudgeWork] = []
        later: list[JudgeWork] = []
        groups: dict[int, Group] = {}
        for work in todo:
            judge: Any = self.stage.by_id[work.judge_id]
            if not is_batch_judge(judge):
                online.append(work)
                continue
            request = judge.request_for(self.stage.item(work), where=self.stage.where(work))
            key = judge.client.cache_key(request)
            reads = judge.use_cache and not judge.refresh_cache
            from assay.models._batch import OpenAIBatchAPI  # aiohttp: only with batch judges

            group = groups.setdefault(id(judge.client), Group(OpenAIBatchAPI(judge.client.config)))
            if reads and judge.client.cached.read(key) is not None:
                online.append(work)  # answered from the cache by the online path
            elif key in group.pending:
                later.append(work)  # the batch's answer, from the cache, once it is in
            else:
                try:  # the worst case at batch prices; a refused one stays pending, unsent
                    ticket = hold(judge.client, judge.id, request, batch=True)
                except BudgetExhausted:
                    continue
                group.judges[judge.id] = judge
                group.pending[key] = Pending(work, judge, request, key, ticket)
        return online, later, {k: g for k, g in groups.items() if g.pending}

    async def run_group(self, group: Group) -> list[JudgeWork]:
        """Recorded unfinished batches first (a resumed run), then new batches for the
        rest (as few as the provider's limits allow); returns the work no batch answered."""
        left: list[JudgeWork] = []
        try:
            for job in self._recorded(group):
                await self._created(job, group, resumed=True)
                left += await self._finish(job, group, self._ids_of(job) & set(group.pending))
            chunks = _chunks(
                [(k, group.api.request_line(k, p.request)) for k, p in group.pending.items()]
            )
            jobs = [await self._submit(group, chunk) for chunk in chunks]  # all recorded first
            for job, chunk in zip(jobs, chunks, strict=True):
                left += await self._finish(job, group, {key for key, _ in chunk})
        finally:
            await group.api.aclose()
        return left

    def _recorded(self, group: Group) -> list[BatchJob]:
        config = group.api.config
        base = redact_url(config.api_base)
        mine = set(group.judges)  # a batch holds one client's requests: its judges'
        return [
            j
            for j in self.state.jobs
            if not j.collected
            and j.model == config.model
            and j.api_base == base
            and mine.intersection(j.judges)
        ]

    def _ids_of(self, job: BatchJob) -> set[str]:
        """The custom ids of a recorded batch, read back from its uploaded file."""
        path = self.run_dir / job.input_path
        try:
            lines = path.read_bytes().splitlines()
            return {str(json.loads(line)["custom_id"]) for line in lines if line.strip()}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise RunError(
                f"batch {job.batch_id}: cannot read its requests back ({exc}); restore the "
                "file, or start a new run directory",
                file=path,
            ) from None

    async def _submit(self, group: Group, lines: list[tuple[str, bytes]]) -> BatchJob:
        """Write, upload and create; record the batch before anything waits on it."""
        api = group.api
        name = f"{len(self.state.jobs) + 1:03d}-{slug(api.config.model)}.jsonl"
        path = self.run_dir / BATCH_DIR / name
        path.parent.mkdir(parents=True, exist_ok=True)
        content = b"".join(line for _, line in lines)
        path.write_bytes(content)
        file_id = await api.upload(content)
        job = BatchJob(
            model=api.config.model,
            api_base=redact_url(api.config.api_base),
            judges=sorted(group.judges),
            input_path=f"{BATCH_DIR}/{name}",
            input_file_id=file_id,
            requests=len(lines),
            status="creating",
        )
        self.state.jobs.append(job)
        self._save(group)  # recorded before the batch exists: see _created
        return await self._created(job, group, resumed=False)

    async def _created(self, job: BatchJob, group: Group, *, resumed: bool) -> BatchJob:
        """Create the batch of a recorded job that has none yet. A resumed job first
        looks for a batch made from its file: the session that recorded it may have been
        killed after creating the batch and before recording the id."""
        if job.batch_id is not None:
            return job
        info = await self._find(job, group) if resumed else None
        adopted = info is not None
        if info is None:
            info = await group.api.create(job.input_file_id)
        job.batch_id, job.status = info.id, info.status
        self._save(group)
        self.say(
            f"batch {job.batch_id} ({job.model}): {job.requests} requests "
            f"{'found at the provider' if adopted else 'submitted'}; interrupting is safe: "
            "resuming the run polls this batch instead of resubmitting"
        )
        return job

    async def _find(self, job: BatchJob, group: Group) -> BatchInfo | None:
        """The batch made from the job's file, or None (also when the server cannot list
        its batches: then the batch is created, as it must be to go on)."""
        try:
            return await group.api.find(job.input_file_id)
        except RunError as exc:
            self.say(f"cannot look for a batch made from {job.input_file_id} ({exc.message})")
            return None

    async def _finish(self, job: BatchJob, group: Group, ids: set[str]) -> list[JudgeWork]:
        """Poll `job` to its end, record the answers for `ids`, return the unanswered."""
        started = time.perf_counter()
        answered: set[str] = set()
        if ids:
            poll_s = min(group.pending[k].judge.batch_poll_s for k in ids)
            info = await self._poll(job, group, poll_s)
            answered = await self._collect(info, group, ids, time.perf_counter() - started)
        missing = [group.pending.pop(k).work for k in sorted(ids - answered)]
        for key in answered:
            group.pending.pop(key, None)
        job.sent_online += len(missing)
        job.collected = True
        if missing:
            self.say(
                f"batch {job.batch_id} {job.status}: {len(missing)} unanswered requests sent online"
            )
        self._save(group)
        return missing

    async def _poll(self, job: BatchJob, group: Group, poll_s: float) -> BatchInfo:
        try:
            return await self._poll_until_finished(job, group, poll_s)
        except asyncio.CancelledError:  # Ctrl-C, SIGTERM: the batch goes on at the provider
            self.say(
                f"batch {job.batch_id} keeps running at the provider; resuming the run collects it"
            )
            raise

    async def _poll_until_finished(self, job: BatchJob, group: Group, poll_s: float) -> BatchInfo:
        assert job.batch_id is not None, "created before it is polled (_created)"
        wait, seen = poll_s, None
        while True:
            info = await group.api.retrieve(job.batch_id)
            now = (info.status, info.request_counts)
            if now != seen:
                seen, wait = now, poll_s
                counts = info.request_counts
                self.say(
                    f"batch {info.id}: {info.status}, {counts.completed}/{counts.total} done, "
                    f"{counts.failed} failed"
                )
                if info.status != job.status:
                    job.status = info.status
                    self._save(group)
            else:
                wait = min(wait * 1.5, poll_s * MAX_POLL_FACTOR)
            if info.finished:
                return info
            await asyncio.sleep(wait)

    async def _collect(
        self, info: BatchInfo, group: Group, ids: set[str], latency_s: float
    ) -> set[str]:
        """Turn the output and error files' lines for `ids` into records."""
        from assay.models._batch import result_lines

        answered: set[str] = set()
        job = next(j for j in self.state.jobs if j.batch_id == info.id)
        for file_id in (info.output_file_id, info.error_file_id):
            if file_id is None:
                continue
            content = await group.api.content(file_id)
            for line in result_lines(content, f"{info.id}/{file_id}"):
                pending = group.pending.get(line.custom_id)
                if line.custom_id not in ids or line.custom_id in answered or pending is None:
                    continue
                ok = self._record(group, pending, line, latency_s)
                job.answered += int(ok)
                job.errors += int(not ok)
                answered.add(line.custom_id)
        if group.api.pricing.rates() is None:
            job.cost_note = (
                f"litellm's cost map has no batch price for {job.model}: cost_usd is null"
            )
        return answered

    def _record(self, group: Group, pending: Pending, line: ResultLine, latency_s: float) -> bool:
        """A line as the record and cache entry an online answer makes (False: api_error)."""
        judge, client = pending.judge, pending.judge.client
        base: dict[str, Any] = {"attempts": 1, "cache_hit": False, "latency_s": latency_s}
        base["request_key"] = pending.key  # the key the answer is cached under
        try:
            raw = group.api.to_raw(line)
        except TransportError as exc:
            settle(client, pending.ticket, None)
            result: ModelResult[Any] = failed_result(exc, time.perf_counter() - latency_s)
            client.accounting.add(result)
            judgment = Judgment(status=Status.API_ERROR, error=result.error, **base)
            self.emit(self.stage.record(pending.work, judgment))
            return False
        settle(client, pending.ticket, raw)
        if judge.use_cache or judge.refresh_cache:
            client.cached.write(pending.key, raw)
        client.accounting.add(ModelResult(response=raw, attempts=1, latency_s=latency_s))
        judgment = judge.judgment_from_raw(
            **raw.parse_inputs(), model_returned=raw.model_returned, logprobs=raw.logprobs, **base
        )
        self.emit(self.stage.record(pending.work, judgment))
        return True

    def _save(self, group: Group) -> None:
        """State file first (what resuming reads), then the manifest's judge entries."""
        write_json_atomic(self.state_path, self.state.model_dump(mode="json"))
        self.attach_jobs(list(group.judges.values()))
        try:
            set_judge_batches(self.run_dir, {j.id: j.batch_jobs for j in group.judges.values()})
        except AssayError:
            # The runner writes the manifest before the judge stage starts, so this is a
            # manifest removed or damaged since: the session's last manifest carries every
            # judge's batches again (`describe()`), and resuming reads batches.json.
            return


def _chunks(lines: list[tuple[str, bytes]]) -> list[list[tuple[str, bytes]]]:
    """Consecutive runs of lines, each within the per-batch request and size limits."""
    chunks: list[list[tuple[str, bytes]]] = []
    size = 0
    for line in lines:
        full = chunks and (
            len(chunks[-1]) >= MAX_BATCH_REQUESTS or size + len(line[1]) > MAX_BATCH_BYTES
        )
        if not chunks or full:
            chunks.append([])
            size = 0
        chunks[-1].append(line)
        size += len(line[1])
    return chunks
