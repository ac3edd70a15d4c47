"""Execute a run into a run directory, resumably: plan, executor, stages, store, manifest.

The judgments file is the source of truth: the manifest's counters and the metrics are
derived from it, so a run resumed after a crash reports the same numbers as one that
never stopped.
"""

from __future__ import annotations

import asyncio
import warnings
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay._collector import RUNS, spaced_passes
from assay._interrupts import interruptible
from assay.core.decomposition import Decomposer
from assay.core.judging import Judge
from assay.core.manifest import Manifest
from assay.core.rundir import MANIFEST_FILE, METRICS_FILE
from assay.core.rundir_lock import ELSEWHERE, LOCK_FILE, WriterLock
from assay.core.verification import Verifier
from assay.errors import AssayError
from assay.models._budget import Budget
from assay.models._ratelimit import rate_limits_section
from assay.models._retry import TargetUnreachable
from assay.runs.assemble._build import preflight_clients
from assay.runs.execute._executor import (
    AsyncPoolExecutor,
    Executor,
    StageContext,
    cancel_on_sigterm,
)
from assay.runs.execute._failure_policy import final_status
from assay.runs.execute._progress import Progress
from assay.runs.execute._spending import attach_budget, budget_status, hosted_clients, run_budget
from assay.runs.plan._plan import JudgeWork, pending, redo_statuses
from assay.runs.runner._assemble import assemble
from assay.runs.spec._options import RunOptions, RunOutcome
from assay.runs.spec._spec import LoadedSpec, load_spec
from assay.runs.spec._targets import unreachable_message
from assay.runs.stages._batch import ProviderBatches
from assay.runs.stages._judge import JudgeStage
from assay.runs.stages._protocol import Judged, Stage, StageRun
from assay.runs.store._counters import merged
from assay.runs.store._inputs_snapshot import spec_inputs
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
from assay.runs.store._resume import check_same_spec, interrupted_from_manifest
from assay.runs.store._rundir import read_run_manifest
from assay.runs.store._schemas import schema_sources, snapshot_schemas
from assay.runs.store._snapshot import RunSnapshot, check_same_prompts
from assay.runs.store._store import write_json_atomic, write_manifest

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
        self.judge_stage = JudgeStage(self.datasets, self.judges, ProviderBatches())
        declared = (self.judge_stage, self.items, self.factuality, self.gate)
        self.stages: list[Stage] = [s for s in declared if s is not None]  # in the order run
        self.executor: Executor = AsyncPoolExecutor()
        self.snapshot = RunSnapshot(
            self.run_dir, bundle_data=loaded.spec.bundle_data, inputs=spec_inputs(loaded)
        )
        self._resumed: Manifest | None = None  # its prompts are compared at the first save
        self.budget: Budget | None = None  # the spending caps, set by `_prepare`
        self._schema_sources = schema_sources(self.judges, self.factuality)

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
        where = self.run_dir / MANIFEST_FILE
        check_same_spec(manifest, self.loaded.raw, self.loaded.sha256, where)
        for stage in self.stages:
            stage.check_resumable(manifest, where)

    def all_datasets(self) -> list[Any]:
        """Pair datasets then items datasets: the manifest's `datasets`."""
        return [d for stage in self.stages for d in stage.manifest_datasets()]

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
            # full collections scan only what the run makes; in the command line, young
            # passes are spaced (its garbage goes by reference counting)
            with RUNS.held(), spaced_passes():
                return asyncio.run(self._run_async())
        except (asyncio.CancelledError, KeyboardInterrupt):
            try:
                raw = read_run_manifest(self.run_dir)
            except AssayError:  # stopped before the run directory existed
                raise interrupted_from_manifest(self.run_dir, None) from None
            manifest = load_manifest(raw, self.run_dir)
            raise interrupted_from_manifest(self.run_dir, manifest) from None

    async def _run_async(self) -> RunOutcome:
        """Hold the run directory's writer lock from before the first read (so a torn
        tail is repaired and earlier records counted by this process alone) to the end.
        A new directory is made, and locked, only once every check has passed."""
        lock = WriterLock(self.run_dir, command="assay run", fix=ELSEWHERE)
        try:
            if self.run_dir.is_dir():
                lock.acquire()
            existing = self._prepare()
            if not lock.held:
                self.run_dir.mkdir(parents=True, exist_ok=True)  # every check passed
                lock.acquire()
                if any(p.name != LOCK_FILE for p in self.run_dir.iterdir()):
                    existing = self._prepare()  # another writer came and went
            return await self._run_locked(existing)
        finally:
            lock.release()

    def _prepare(self) -> Manifest | None:
        """What earlier sessions recorded, what is left, and the preflight of what this
        session will call; reads only."""
        existing = self._existing()
        self.budget = self.new_budget(existing)
        self.attach_budget(self.budget)
        redo = redo_statuses(self.options.retry_errors)
        for stage in self.stages:
            stage.load(self.run_dir, redo)
        self._preflight(existing)
        return existing

    async def _run_locked(self, existing: Manifest | None) -> RunOutcome:
        base = run_manifest(
            existing,
            loaded=self.loaded,
            run_dir=self.run_dir,
            datasets=self.all_datasets(),
            cache=cache_info(self.cache, self.options),
        )
        for stage in self.stages:
            base.outputs.update(stage.outputs())
        todo = sum(stage.todo() for stage in self.stages)
        session = new_session(todo, resumed=existing is not None)
        base.sessions.append(session)
        self._resumed = existing
        self._save(base, "running", None)  # snapshots taken: the run's files are its own
        status, message = "running", None
        try:
            with cancel_on_sigterm():
                status, message = budget_status(self.budget, *await self._execute())
        except TargetUnreachable as exc:  # nothing it touched was recorded: resumable
            status, message = "failed", unreachable_message(exc, self.loaded.spec)
            self._close_stages()  # their last batch on disk before the metrics read it
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
            self._close_stages()
            if self.cache is not None:
                self.cache.flush()
            written = sum(stage.written for stage in self.stages)
            end_session(session, written=written, status=status)
            self._save(base, status, message)
        return self._outcome(status, message)

    async def _execute(self) -> tuple[str, str | None]:
        """Execute the stages in order (a set abort stops between them); the status the
        failure policy gives."""
        abort = asyncio.Event()
        policy = self.loaded.spec.failure
        progress = Progress(self.options.progress)
        redo = redo_statuses(self.options.retry_errors)
        ctx = StageContext(self.executor, progress, abort, workers=1, redo=redo)
        run = StageRun(self.run_dir, ctx, policy)  # each stage sets its own workers
        with progress:
            for stage in self.stages:
                if abort.is_set():
                    break
                await stage.execute(run)
        failing = set(policy.statuses)
        status = final_status(
            policy,
            [tally for stage in self.stages for tally in stage.tallies(failing)],
            all_recorded=all(stage.done() for stage in self.stages),
        )
        self._close_stages()  # their last batch on disk before the metrics read it
        self._write_metrics()
        if self.loaded.spec.records_parquet:
            with interruptible():
                write_parquet_copies(self.run_dir)
        return status

    def _close_stages(self) -> None:
        for stage in self.stages:
            stage.close()

    def _preflight(self, existing: Manifest | None) -> None:
        """Credentials and local models of what this session will call, before the run
        directory exists: judges in id order (each once), then each stage's clients."""
        checks = [stage.preflight(existing) for stage in self.stages]
        ids = sorted(set[str]().union(*(check.judges for check in checks)))
        clients = [getattr(self.judge_stage.by_id[j], "client", None) for j in ids]
        clients += [client for check in checks for client in check.clients]
        preflight_clients(clients, self.loaded.path)
        if self.loaded.spec.records_parquet:
            require_pyarrow(self.loaded.path)

    def new_budget(self, existing: Manifest | None) -> Budget:
        """The spending caps in force, from the spend earlier sessions recorded."""
        return run_budget(self.loaded.spec, self.options, existing, self.run_dir)

    def attach_budget(self, budget: Budget) -> None:
        """Give every hosted client the budget (a capped model without a price: SpecError)."""
        attach_budget(budget, self._model_clients(), self.loaded.path, self.options)

    def _model_clients(self) -> list[Any]:
        """The run's hosted model clients: the pool's and the given judges' own."""
        judges = [getattr(j, "client", None) for j in self.judges]
        return hosted_clients([*self.pool.clients(), *judges])

    def _judged(self) -> list[Judged]:
        """The judging stages' counters and counts (pairs, then items)."""
        return [judged for stage in self.stages if (judged := stage.judged()) is not None]

    def _save(self, base: Manifest, status: str, message: str | None) -> None:
        judged = self._judged()
        counters = merged(*(j.counters for j in judged))
        counts = Counter[str]()
        for j in judged:
            counts.update(j.planned_by_judge)
        manifest = session_manifest(
            base,
            status,
            message,
            counts=(sum(j.planned for j in judged), sum(j.recorded for j in judged)),
            judges=judges_section(self.judges, counters, counts),
            warnings=self.warnings,
        )
        for stage in self.stages:
            stage.add_to_manifest(manifest)
        if self.budget is not None:
            manifest.budget = self.budget.section()
        manifest.rate_limits = rate_limits_section(self._model_clients())
        where = self.run_dir / MANIFEST_FILE
        if self._resumed is not None:  # a changed prompt leaves the spec as it was
            check_same_prompts(self._resumed, manifest, where)
            self.snapshot.check_resumable(self._resumed, where)
            self._resumed = None
        self.snapshot.annotate(manifest)
        snapshot_schemas(self.run_dir, self._schema_sources, manifest)
        write_manifest(where, manifest)  # redacted: no credentials

    def _outcome(self, status: str, message: str | None) -> RunOutcome:
        failing = set(self.loaded.spec.failure.statuses)
        judged = self._judged()
        reported: dict[str, Any] = {"verifications_planned": None, "verifications_recorded": None}
        for stage in self.stages:
            reported.update(stage.outcome())
        return RunOutcome(
            run_dir=str(self.run_dir),
            status=status,
            planned=sum(j.planned for j in judged),
            recorded=sum(j.recorded for j in judged),
            written_this_session=sum(stage.written for stage in self.stages),
            failed=sum(stage.failed(failing) for stage in self.stages),
            message=message,
            **reported,
        )

    def _write_metrics(self) -> None:
        """Synchronous CPU work inside the event loop, which no loop signal handler can
        stop: here Ctrl-C and SIGTERM raise at once, and the run ends `interrupted`."""
        from assay.runs.rebuild._metrics import compute_metrics

        spec = self.loaded.spec
        options: dict[str, Any] = {}
        for stage in self.stages:
            options.update(stage.metrics_options())
        with interruptible():
            metrics = compute_metrics(
                self.run_dir, n_boot=spec.bootstrap, seed=spec.seed, **options
            )
            write_json_atomic(self.run_dir / METRICS_FILE, metrics)


def run_spec(spec_path: str | Path, options: RunOptions | None = None) -> RunOutcome:
    """Load, execute and record a spec: the library form of `assay run`."""
    return Runner(load_spec(spec_path), options).run()
