"""Execute a run into a run directory, resumably: plan, executor, stages, store, manifest.

The judgments file is the source of truth: the manifest's counters and the metrics are
derived from it, so a run resumed after a crash reports the same numbers as one that
never stopped.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from assay._interrupts import interruptible
from assay.core.decomposition import Decomposer
from assay.core.judging import Judge
from assay.core.manifest import Manifest
from assay.core.records import JudgmentRecord
from assay.core.rundir import (
    GATES_FILE,
    JUDGMENTS_FILE,
    MANIFEST_FILE,
    METRICS_FILE,
)
from assay.core.rundir_lock import ELSEWHERE, LOCK_FILE, WriterLock
from assay.core.verification import Verifier
from assay.errors import AssayError
from assay.models._retry import TargetUnreachable
from assay.runs.assemble._assemble import assemble
from assay.runs.assemble._build import (
    ClientPool,
    factuality_clients_to_check,
    preflight_clients,
)
from assay.runs.execute._executor import (
    AsyncPoolExecutor,
    Executor,
    StageContext,
    cancel_on_sigterm,
)
from assay.runs.execute._failure_policy import FailureBudget, final_status
from assay.runs.execute._options import RunOptions, RunOutcome
from assay.runs.execute._progress import Progress
from assay.runs.plan._plan import JudgeWork, pending, redo_statuses
from assay.runs.spec._spec import LoadedSpec, load_spec
from assay.runs.spec._targets import unreachable_message
from assay.runs.stages._items import ItemsStage
from assay.runs.stages._judge import JudgeStage
from assay.runs.stages._tallies import gate_budget, stage_tallies
from assay.runs.store._counters import merged
from assay.runs.store._manifest import (
    cache_info,
    end_session,
    judges_section,
    load_manifest,
    new_session,
    run_manifest,
    session_manifest,
)
from assay.runs.store._parquet import require_pyarrow, write_parquet_copies
from assay.runs.store._resume import check_same_run, check_same_versions, interrupted_from_manifest
from assay.runs.store._rundir import read_run_manifest
from assay.runs.store._store import TallyLog, write_json_atomic, write_manifest

__all__ = ["RunOptions", "RunOutcome", "Runner", "run_spec"]


class Runner:
    """Plans, executes and records one run.

    `judges`, `decomposer` and `verifiers` are objects satisfying the protocols in
    `assay.core` (`Judge`, `Decomposer`, `Verifier`): judges and verifiers are added
    after the spec's own, a decomposer replaces the spec's; their `describe()` goes into
    the manifest, and every id must be unique within the run."""

    def __init__(
        self,
        loaded: LoadedSpec,
        options: RunOptions | None = None,
        *,
        judges: Sequence[Judge] = (),
        decomposer: Decomposer | None = None,
        verifiers: Sequence[Verifier] = (),
    ) -> None:
        self.loaded = loaded
        self.options = options or RunOptions()
        self.run_dir = loaded.output_dir(self.options.output_dir)
        parts = assemble(loaded, self.options, judges, decomposer, verifiers)
        self.datasets, self.cache, self.pool = parts.datasets, parts.cache, parts.pool
        self.judges, self.factuality, self.warnings = parts.judges, parts.factuality, parts.warnings
        self.items, self.gate = parts.items, parts.gate
        self.judge_stage = JudgeStage(self.datasets, self.judges)
        self.executor: Executor = AsyncPoolExecutor()

    # ---- planning -------------------------------------------------------------------
    def plan(self) -> list[JudgeWork]:
        """Every judgment of the run as a list (a run itself reads its plan lazily)."""
        return list(self.judge_stage.plan())

    def pending(self, planned: list[JudgeWork], records: dict[Any, Any]) -> list[JudgeWork]:
        """Planned work not yet recorded (and, with retry_errors, work that ended in
        api_error): what this session will run. Shared with `assay run --dry-run`."""
        return pending(planned, records, redo_statuses(self.options.retry_errors))

    def _check_same_run(self, manifest: Manifest | dict[str, Any]) -> None:
        """Resuming is only sound into a directory made by the same spec and data."""
        if not isinstance(manifest, Manifest):
            manifest = load_manifest(manifest, self.run_dir)
        datasets = [*self.all_datasets(), *(self.factuality.datasets if self.factuality else [])]
        check_same_run(manifest, self.loaded, datasets, self.run_dir / MANIFEST_FILE)
        if self.factuality is not None:
            check_same_versions(manifest, self.factuality.verifiers, self.run_dir / MANIFEST_FILE)

    def all_datasets(self) -> list[Any]:
        """Pair datasets then items datasets: the manifest's `datasets`."""
        return [*self.datasets, *(self.items.datasets if self.items else [])]

    def _existing(self) -> Manifest | None:
        if not (self.run_dir / MANIFEST_FILE).exists():
            return None
        existing = load_manifest(read_run_manifest(self.run_dir), self.run_dir)
        self._check_same_run(existing)
        return existing

    # ---- execution ------------------------------------------------------------------
    def run(self) -> RunOutcome:
        """Execute the plan. SIGTERM and Ctrl-C leave an `interrupted`, resumable run."""
        # litellm leaves a coroutine un-awaited when a call is cancelled; not the user's concern
        warnings.filterwarnings("ignore", "coroutine .* was never awaited", RuntimeWarning)
        try:
            return asyncio.run(self._run_async())
        except (asyncio.CancelledError, KeyboardInterrupt):
            try:
                raw = read_run_manifest(self.run_dir)
            except AssayError:  # stopped before the run directory existed
                raise interrupted_from_manifest(self.run_dir, None) from None
            manifest = load_manifest(raw, self.run_dir)
            raise interrupted_from_manifest(self.run_dir, manifest) from None

    def _count_todo(self, log: TallyLog[JudgmentRecord]) -> tuple[int, set[str]]:
        """How many planned judgments this session makes, and by which judges; a
        judgment to redo no longer counts against the failure policy (its tally goes)."""
        redo = redo_statuses(self.options.retry_errors)
        n, judges = 0, set()
        for key in self.judge_stage.planned_keys():
            status = log.records.get(key)
            if status is None or status in redo:
                if status is not None:
                    log.forget(key)
                n += 1
                judges.add(key[3])
        return n, judges

    async def _run_async(self) -> RunOutcome:
        """Hold the run directory's writer lock from before the first read (so a torn
        tail is repaired and earlier records counted by this process alone) to the end.
        A new directory is made, and locked, only once every check has passed."""
        lock = WriterLock(self.run_dir, command="assay run", fix=ELSEWHERE)
        try:
            if self.run_dir.is_dir():
                lock.acquire()
            existing, log, n_todo = self._prepare()
            if not lock.held:
                self.run_dir.mkdir(parents=True, exist_ok=True)  # every check passed
                lock.acquire()
                if any(p.name != LOCK_FILE for p in self.run_dir.iterdir()):
                    existing, log, n_todo = self._prepare()  # another writer came and went
            return await self._run_locked(existing, log, n_todo)
        finally:
            lock.release()

    def _prepare(self) -> tuple[Manifest | None, TallyLog[JudgmentRecord], int]:
        """What earlier sessions recorded, what is left, and the preflight of what this
        session will call; reads only."""
        existing = self._existing()
        log = TallyLog(self.run_dir / JUDGMENTS_FILE, JudgmentRecord)
        log.load(repair=True)
        n_todo, todo_judges = self._count_todo(log)
        if self.items is not None:
            self.items.load(self.run_dir, redo_statuses(self.options.retry_errors))
        if self.gate is not None:
            self.gate.load(self.run_dir, redo_statuses(self.options.retry_errors))
        self._preflight(todo_judges, existing)
        return existing, log, n_todo

    async def _run_locked(
        self, existing: Manifest | None, log: TallyLog[JudgmentRecord], n_todo: int
    ) -> RunOutcome:
        planned = self.judge_stage.planned()
        log.open()
        base = run_manifest(
            existing,
            loaded=self.loaded,
            run_dir=self.run_dir,
            datasets=self.all_datasets(),
            cache=cache_info(self.cache, self.options),
            has_factuality=self.factuality is not None,
        )
        if self.gate is not None:
            base.outputs["gates"] = GATES_FILE
        items_todo = self.items.todo() if self.items is not None else 0
        items_todo += self.gate.todo() if self.gate is not None else 0
        session = new_session(n_todo + items_todo, resumed=existing is not None)
        base.sessions.append(session)
        self._save(base, "running", None, log, planned)
        status, message = "running", None
        try:
            with cancel_on_sigterm():
                status, message = await self._execute(n_todo, planned, log)
        except TargetUnreachable as exc:  # nothing it touched was recorded: resumable
            status, message = "failed", unreachable_message(exc, self.loaded.spec)
            log.close()  # its last batch on disk before the metrics read the file
            self._write_metrics()
        except (asyncio.CancelledError, KeyboardInterrupt):
            status, message = "interrupted", "interrupted; run the same command again to resume"
            raise
        except AssayError as exc:
            status, message = "failed", exc.render()
            raise
        except BaseException as exc:
            status, message = "failed", f"{type(exc).__name__}: {exc}"
            raise
        finally:
            log.close()
            if self.cache is not None:
                self.cache.flush()
            end_session(session, written=log.written + self._items_written(), status=status)
            self._save(base, status, message, log, planned)
        return self._outcome(status, message, planned, log)

    async def _execute(
        self, n_todo: int, planned: int, log: TallyLog[JudgmentRecord]
    ) -> tuple[str, str | None]:
        """Judge, then run the factuality stages; the status the failure policy gives."""
        abort = asyncio.Event()
        policy = self.loaded.spec.failure
        items = self.items
        budget = FailureBudget(policy, planned, log.records.values(), abort)
        item_records = items.records.values() if items else []
        items_budget = FailureBudget(policy, _planned(items), item_records, abort)
        progress = Progress(self.options.progress)
        redo = redo_statuses(self.options.retry_errors)
        ctx = StageContext(self.executor, progress, abort, self.judge_stage.worker_budget(), redo)
        with progress:
            earlier = log.records  # what earlier sessions recorded, less what is redone
            todo = self.judge_stage.jobs(lambda key: key not in earlier)  # read as run
            await self.judge_stage.run(todo, (n_todo, planned), log, ctx, budget.count)
            if items is not None and not abort.is_set():
                item_ctx = replace(ctx, workers=items.worker_budget())
                await items.run(self.run_dir, item_ctx, redo, items_budget.count)
            fact = self.factuality
            if fact is not None and not abort.is_set():
                fact_ctx = replace(ctx, workers=_stage_budget(self.pool))
                await fact.run(self.run_dir, fact_ctx, policy)
            if self.gate is not None and not abort.is_set():
                await self.gate.run(
                    self.run_dir,
                    replace(ctx, workers=1, on_record=gate_budget(policy, self.gate, abort)),
                )
        fact, gate = self.factuality, self.gate
        status = final_status(
            policy,
            stage_tallies(policy, (planned, log.counters()), items, fact, gate),
            all_recorded=self._recorded(log) == planned
            and (not fact or fact.done())
            and (not items or items.done())
            and (not gate or gate.done()),
        )
        log.close()  # its last batch on disk before the metrics read the file
        self._write_metrics()
        if self.loaded.spec.records_parquet:
            with interruptible():
                write_parquet_copies(self.run_dir)
        return status

    def _preflight(self, todo_judges: set[str], existing: Manifest | None) -> None:
        """Credentials and local models of what this session will call, before the run
        directory exists."""
        ids = sorted(todo_judges | self._item_judges_to_call())
        clients = [getattr(self.judge_stage.by_id[j], "client", None) for j in ids]
        old = existing.dump() if existing is not None else None
        clients += factuality_clients_to_check(self.factuality, old)
        clients.append(self.gate.client_to_check() if self.gate is not None else None)
        preflight_clients(clients, self.loaded.path)
        if self.loaded.spec.records_parquet:
            require_pyarrow(self.loaded.path)

    def _items_written(self) -> int:
        """Records the items and gate stages appended this session."""
        written = self.items.written if self.items is not None else 0
        return written + (self.gate.written if self.gate is not None else 0)

    def _item_judges_to_call(self) -> set[str]:
        """Judges of the items stage with work left this session."""
        if self.items is None:
            return set()
        return {w.judge_id for w in self.items.pending()}

    def _save(
        self,
        base: Manifest,
        status: str,
        message: str | None,
        log: TallyLog[JudgmentRecord],
        planned: int,
    ) -> None:
        items = self.items
        counters = merged(log.counters(), items.counters() if items else {})
        counts = self.judge_stage.planned_by_judge()
        counts.update(w.judge_id for w in (items.plan() if items else []))
        judges = judges_section(self.judges, counters, counts)
        manifest = session_manifest(
            base,
            status,
            message,
            counts=(
                planned + _planned(items),
                self._recorded(log) + (items.recorded() if items else 0),
            ),
            judges=judges,
            warnings=self.warnings,
            factuality=self.factuality.manifest_section() if self.factuality else None,
        )
        if self.gate is not None:
            manifest.gate = self.gate.manifest_section()
        write_manifest(self.run_dir / MANIFEST_FILE, manifest)  # redacted: no credentials

    def _recorded(self, log: TallyLog[JudgmentRecord]) -> int:
        """Planned judgments with a record: those of earlier sessions (records of another
        plan do not count) and this session's, every one of them planned."""
        earlier = sum(1 for key in self.judge_stage.planned_keys() if key in log.records)
        return earlier + log.written

    def _outcome(
        self, status: str, message: str | None, planned: int, log: TallyLog[Any]
    ) -> RunOutcome:
        fact = self.factuality
        claims = fact.claims if fact is not None else None
        verified = fact.verifications if fact is not None else None
        failing = set(self.loaded.spec.failure.statuses)
        failed = log.failed(failing)
        items = self.items
        failed += items.failed(failing) if items else 0
        failed += self.gate.failed(failing) if self.gate else 0
        return RunOutcome(
            run_dir=str(self.run_dir),
            status=status,
            planned=planned + _planned(items),
            recorded=self._recorded(log) + (items.recorded() if items else 0),
            written_this_session=log.written + self._items_written(),
            failed=failed + (fact.failed(failing) if fact is not None else 0),
            message=message,
            verifications_planned=(
                fact.planned_verifications(len(claims)) if fact and claims is not None else None
            ),
            verifications_recorded=len(verified) if verified is not None else None,
        )

    def _write_metrics(self) -> None:
        """Synchronous CPU work inside the event loop, which no loop signal handler can
        stop: here Ctrl-C and SIGTERM raise at once, and the run ends `interrupted`."""
        from assay.runs.rebuild._metrics import compute_metrics

        spec = self.loaded.spec
        with interruptible():
            metrics = compute_metrics(
                self.run_dir,
                n_boot=spec.bootstrap,
                seed=spec.seed,
                length_penalty=spec.factuality.length_penalty if spec.factuality else None,
            )
            write_json_atomic(self.run_dir / METRICS_FILE, metrics)


def _planned(items: ItemsStage | None) -> int:
    return items.planned() if items is not None else 0


def _stage_budget(pool: ClientPool) -> int:
    """Workers for a factuality stage: enough for every client's concurrency slots."""
    return min(max(pool.total_concurrency(), 4), 1024)


def run_spec(spec_path: str | Path, options: RunOptions | None = None) -> RunOutcome:
    """Load, execute and record a spec: the library form of `assay run`."""
    return Runner(load_spec(spec_path), options).run()
