"""Execute a run spec into a run directory, resumably.

The judgments file is the source of truth: the manifest's counters and the metrics are
derived from it, so a run resumed after a crash reports the same numbers as one that
never stopped.
"""

from __future__ import annotations

import asyncio
import signal
import uuid
import warnings
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from assay.core.judging import Judge, JudgeItem, Judgment, Status
from assay.core.records import JudgmentRecord
from assay.datasets import ForcePair, LoadedDataset, Member
from assay.errors import AssayError, RunError
from assay.judges._llm import LLMJudge
from assay.models._retry import TargetUnreachable
from assay.runs._build import (
    ClientPool,
    build_judges,
    check_before_run,
    factuality_clients_to_check,
    load_forcebench_datasets,
    preflight_clients,
)
from assay.runs._environment import environment
from assay.runs._factuality import FactualityStage, stage_stats
from assay.runs._manifest import identity_fields, judge_stats
from assay.runs._metrics import CLAIMS_FILE, SENTENCES_FILE, VERIFICATIONS_FILE
from assay.runs._pool import run_pool
from assay.runs._resume import check_same_spec, interrupted_from_manifest
from assay.runs._rundir import read_run_manifest
from assay.runs._spec import LoadedSpec, load_spec
from assay.runs._store import (
    JUDGMENTS_FILE,
    MANIFEST_FILE,
    METRICS_FILE,
    JudgmentWriter,
    latest_records,
    redact_manifest,
    repair_partial_tail,
    write_json_atomic,
)
from assay.runs._targets import check_targets, stop_when_unreachable, unreachable_message


class RunOptions(BaseModel):
    output_dir: str | None = None
    use_cache: bool = True
    refresh_cache: bool = False
    cache_dir: str | None = None
    retry_errors: bool = Field(
        default=False, description="Re-run judgments that ended in api_error."
    )
    progress: bool = True


class RunOutcome(BaseModel):
    run_dir: str
    status: str
    planned: int = Field(description="Planned ForceBench judgments.")
    recorded: int
    written_this_session: int
    failed: int = Field(description="Judgments and factuality records counted as failures.")
    message: str | None = None
    verifications_planned: int | None = None
    verifications_recorded: int | None = None


@dataclass(frozen=True)
class _Work:
    dataset: str
    pair: ForcePair
    member: Member
    judge: Judge
    where: str

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.dataset, self.pair.id, self.member.value, self.judge.id)

    def item(self) -> JudgeItem:
        """What the judge sees: this member's claim, the pair's evidence and question."""
        return JudgeItem(
            claim=self.pair.claim(self.member),
            evidence=self.pair.evidence,
            question=self.pair.question,
        )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _record(work: _Work, judgment: Judgment, judge_fields: dict[str, Any]) -> JudgmentRecord:
    return JudgmentRecord(
        dataset=work.dataset,
        pair_id=work.pair.id,
        member=work.member,
        judge_id=work.judge.id,
        axis=work.pair.axis,
        severity=work.pair.severity,
        model_returned=judgment.model_returned,
        status=judgment.status,
        label=judgment.label,
        score=judgment.score,
        attempts=judgment.attempts,
        latency_s=round(judgment.latency_s, 6),
        usage=judgment.usage,
        cache_hit=judgment.cache_hit,
        finish_reason=judgment.finish_reason,
        raw_output=judgment.raw_output,
        refusal=judgment.refusal,
        parsed=judgment.parsed,
        error=judgment.error,
        recorded_at=datetime.now(UTC),
        **judge_fields,
    )


class Runner:
    """Plans, executes and records one run."""

    def __init__(self, loaded: LoadedSpec, options: RunOptions | None = None) -> None:
        self.loaded = loaded
        self.options = options or RunOptions()
        self.run_dir = loaded.output_dir(self.options.output_dir)
        check_before_run(loaded, self.options.output_dir)
        check_targets(loaded)
        self.datasets: list[LoadedDataset] = load_forcebench_datasets(loaded)
        names = [d.name for d in self.datasets]
        if len(set(names)) != len(names):
            raise RunError(
                "two datasets share a name; set `name` in [[datasets]]", file=loaded.path
            )
        cache = None
        if self.options.use_cache or self.options.refresh_cache:
            from assay.models import ResponseCache

            needs_cache = bool(loaded.spec.judges) or loaded.spec.factuality is not None
            cache = ResponseCache(self.options.cache_dir) if needs_cache else None
        self.cache = cache
        self.pool = ClientPool(cache)
        self.judges = build_judges(
            loaded,
            cache=cache,
            use_cache=self.options.use_cache,
            refresh_cache=self.options.refresh_cache,
            pool=self.pool,
        )
        self.factuality: FactualityStage | None = None
        if loaded.spec.factuality is not None:
            self.factuality = FactualityStage(
                loaded,
                loaded.spec.factuality,
                pool=self.pool,
                use_cache=self.options.use_cache,
                refresh_cache=self.options.refresh_cache,
            )
        self._fact_state: dict[str, Any] = {}
        fact = self.factuality
        stop_when_unreachable(
            [*self.judges, *([fact.decomposer, *fact.verifiers] if fact is not None else [])]
        )
        self._judge_by_id = {j.id: j for j in self.judges}
        self.warnings: list[str] = []
        for judge in self.judges:
            warn = getattr(judge, "warnings", None)
            if callable(warn):
                self.warnings.extend(warn())

    # ---- planning -------------------------------------------------------------------
    def plan(self) -> list[_Work]:
        work: list[_Work] = []
        for ds in self.datasets:
            for line, pair in enumerate(ds.pairs, start=1):
                for member in Member:
                    for judge in self.judges:
                        where = f"{ds.path} pair {pair.id!r} ({member.value})"
                        work.append(_Work(ds.name, pair, member, judge, where))
                _ = line
        return work

    def pending(self, planned: list[_Work], records: dict[Any, JudgmentRecord]) -> list[_Work]:
        """Planned work not yet recorded (and, with retry_errors, work that ended in
        api_error): what this session will run. Shared with `assay run --dry-run`."""
        redo = {Status.API_ERROR} if self.options.retry_errors else set()
        return [w for w in planned if w.key not in records or records[w.key].status in redo]

    def _check_same_run(self, manifest: dict[str, Any]) -> None:
        """Resuming is only sound into a directory made by the same spec and data."""
        where = self.run_dir / MANIFEST_FILE
        check_same_spec(manifest, self.loaded.raw, self.loaded.sha256, where)
        old = {d["name"]: d["sha256"] for d in manifest.get("datasets", [])}
        fact = manifest.get("factuality") or {}
        old.update({d["name"]: d["sha256"] for d in fact.get("datasets", [])})
        current: list[Any] = list(self.datasets)
        if self.factuality is not None:
            current += self.factuality.datasets
        for ds in current:
            if old.get(ds.name) not in (None, ds.sha256):
                raise RunError(
                    f"dataset {ds.name!r} changed since this run started (sha256 differs)",
                    file=ds.path,
                )

    # ---- manifest -------------------------------------------------------------------
    def _manifest(
        self,
        base: dict[str, Any],
        status: str,
        records: dict[Any, JudgmentRecord],
        planned: list[_Work],
        message: str | None,
    ) -> dict[str, Any]:
        by_judge: dict[str, list[JudgmentRecord]] = {}
        for rec in records.values():
            by_judge.setdefault(rec.judge_id, []).append(rec)
        planned_by_judge = Counter(w.judge.id for w in planned)
        judges = []
        for judge in self.judges:
            entry = dict(judge.describe())
            entry["id"] = judge.id
            entry["stats"] = judge_stats(by_judge.get(judge.id, []), planned_by_judge[judge.id])
            judges.append(entry)
        manifest = dict(base)
        manifest.update(
            status=status,
            message=message,
            updated_at=_now(),
            planned_judgments=len(planned),
            recorded_judgments=sum(1 for w in planned if w.key in records),
            judges=judges,
            warnings=self.warnings,
        )
        if self.factuality is not None:
            manifest["factuality"] = self._factuality_manifest()
        if status in ("complete", "failed", "interrupted"):
            manifest["finished_at"] = _now()
        manifest.pop("redacted_fields", None)  # recomputed from this session's spec
        return redact_manifest(manifest)  # credentials never reach the file

    def _factuality_manifest(self) -> dict[str, Any]:
        assert self.factuality is not None
        section = self.factuality.describe()
        sentences = list(self._fact_state.get("sentences", {}).values())
        verifications = list(self._fact_state.get("verifications", {}).values())
        claims = self._fact_state.get("claims")
        section["decomposer"]["stats"] = stage_stats(sentences)
        section["decomposer"]["stats"]["claims"] = sum(r.n_claims for r in sentences)
        for info in section["verifiers"]:
            mine = [r for r in verifications if r.verifier_id == info["id"]]
            info["stats"] = stage_stats(mine)
            info["stats"]["planned"] = len(claims) if claims is not None else None
        section["planned_verifications"] = (
            self.factuality.planned_verifications(len(claims)) if claims is not None else None
        )
        section["recorded_verifications"] = len(verifications)
        return section

    def _base_manifest(self, existing: dict[str, Any] | None) -> dict[str, Any]:
        from assay.parsing import PARSER_VERSION

        run_dir = self.run_dir
        base: dict[str, Any] = {
            "manifest_version": 1,
            "run_id": (existing or {}).get("run_id") or uuid.uuid4().hex,
            "name": self.loaded.spec.name,
            "created_at": (existing or {}).get("created_at") or _now(),
            "sessions": list((existing or {}).get("sessions", [])),
            "environment": environment(Path.cwd()),
            "spec_path": str(Path(self.loaded.path).resolve()),
            "spec_sha256": self.loaded.sha256,
            "spec": self.loaded.raw,  # redacted with the whole manifest in _manifest
            "datasets": [
                {"name": d.name, "path": d.path, "sha256": d.sha256, "rows": d.rows}
                for d in self.datasets
            ],
            "parser_version": PARSER_VERSION,
            "cache": {
                "enabled": self.options.use_cache,
                "refresh": self.options.refresh_cache,
                "dir": self._cache_dir(),
            },
            "failure_policy": self.loaded.spec.failure.model_dump(mode="json"),
            "outputs": {
                "run_dir": str(run_dir.resolve()),
                "manifest": MANIFEST_FILE,
                "judgments": JUDGMENTS_FILE,
                "metrics": METRICS_FILE,
                **(
                    {
                        "sentences": SENTENCES_FILE,
                        "claims": CLAIMS_FILE,
                        "verifications": VERIFICATIONS_FILE,
                    }
                    if self.factuality is not None
                    else {}
                ),
            },
        }
        return base

    def _cache_dir(self) -> str | None:
        """The directory this run reads and writes responses in (--cache-dir, then
        $ASSAY_CACHE_DIR, $XDG_CACHE_HOME/assay, ~/.cache/assay); None with --no-cache."""
        if self.cache is not None:
            return str(self.cache.directory.resolve())
        if not (self.options.use_cache or self.options.refresh_cache):
            return None
        from assay.models import default_cache_dir

        chosen = self.options.cache_dir
        return str((Path(chosen) if chosen else default_cache_dir()).expanduser().resolve())

    # ---- execution ------------------------------------------------------------------
    def run(self) -> RunOutcome:
        """Execute the plan. SIGTERM and Ctrl-C leave an `interrupted`, resumable run."""
        # litellm leaves a coroutine un-awaited when a call is cancelled; not the user's concern
        warnings.filterwarnings("ignore", "coroutine .* was never awaited", RuntimeWarning)
        try:
            return asyncio.run(self._run_async())
        except (asyncio.CancelledError, KeyboardInterrupt):
            try:
                manifest: dict[str, Any] | None = read_run_manifest(self.run_dir)
            except AssayError:  # stopped before the run directory existed
                manifest = None
            raise interrupted_from_manifest(self.run_dir, manifest) from None

    async def _run_async(self) -> RunOutcome:
        run_dir = self.run_dir
        manifest_path = run_dir / MANIFEST_FILE
        existing = read_run_manifest(run_dir) if manifest_path.exists() else None
        if existing is not None:
            self._check_same_run(existing)
        planned = self.plan()
        judgments_path = run_dir / JUDGMENTS_FILE
        repair_partial_tail(judgments_path)  # a torn last line; nothing to do on a new run
        records = latest_records(judgments_path)
        todo = self.pending(planned, records)
        for w in todo:
            records.pop(w.key, None)  # a redone judgment no longer counts against the policy
        todo_ids = sorted({w.judge.id for w in todo})
        clients = [getattr(self._judge_by_id[j], "client", None) for j in todo_ids]
        clients += factuality_clients_to_check(self.factuality, existing)
        preflight_clients(clients, self.loaded.path)
        # only now, with every check passed, does the run directory come into being
        run_dir.mkdir(parents=True, exist_ok=True)
        writer = JudgmentWriter(judgments_path)
        base = self._base_manifest(existing)
        session = {"started_at": _now(), "todo": len(todo), "resumed": existing is not None}
        base["sessions"].append(session)
        write_json_atomic(manifest_path, self._manifest(base, "running", records, planned, None))

        policy = self.loaded.spec.failure
        limit = policy.limit(len(planned))
        failing = set(policy.statuses)
        status = "running"
        message: str | None = None
        progress = _Progress(self.options.progress)
        fact_failed = 0

        fields = {j.id: identity_fields(j.describe()) for j in self.judges}
        failed_now = _failed_count(records, failing)
        abort = asyncio.Event()

        async def handle(work: _Work) -> None:
            nonlocal failed_now
            item = work.item()
            judge = work.judge
            if isinstance(judge, LLMJudge):  # names the data row in template errors
                judgment = await judge(item, where=work.where)
            else:
                judgment = await judge(item)
            record = _record(work, judgment, fields[judge.id])
            writer.write(record)
            records[record.key] = record
            progress.advance(record.status, cache_hit=record.cache_hit)
            failed_now += record.status in failing  # todo keys were popped: no double count
            if failed_now > limit:
                abort.set()

        loop = asyncio.get_running_loop()
        main = asyncio.current_task()
        installed = _install_sigterm(loop, main)
        try:
            with progress:
                if planned:
                    progress.start("judging", total=len(planned), done=len(planned) - len(todo))
                    for rec in records.values():
                        progress.advance(rec.status, cache_hit=rec.cache_hit, count=False)
                    await run_pool(todo, handle, workers=_worker_budget(self.judges), abort=abort)
                fact_done, fact_failed, fact_planned = True, 0, 0
                if self.factuality is not None and not abort.is_set():
                    fact_done, fact_failed, fact_planned = await self._run_factuality(
                        run_dir, progress, abort, failing
                    )
            failed = failed_now + fact_failed
            limit = policy.limit(len(planned) + fact_planned)
            recorded = sum(1 for w in planned if w.key in records)
            if failed > limit:
                status = "failed"
                message = (
                    f"{failed} judgments/verdicts ended in {', '.join(sorted(failing))}, above the "
                    f"failure limit of {limit} (failure.max_failed_fraction="
                    f"{policy.max_failed_fraction}); rerun with --retry-errors to retry them"
                )
            elif recorded == len(planned) and fact_done:
                status = "complete"
            else:
                status = "interrupted"
                message = "some planned work was not recorded; run again to resume"
            self._write_metrics()
        except TargetUnreachable as exc:  # nothing it touched was recorded: resumable
            status, message = "failed", unreachable_message(exc, self.loaded.spec)
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
            if installed:
                loop.remove_signal_handler(signal.SIGTERM)
            writer.close()
            if self.cache is not None:
                self.cache.flush()
            session.update(ended_at=_now(), written=writer.written, status=status)
            write_json_atomic(
                manifest_path, self._manifest(base, status, records, planned, message)
            )
        return RunOutcome(
            run_dir=str(run_dir),
            status=status,
            planned=len(planned),
            recorded=sum(1 for w in planned if w.key in records),
            written_this_session=writer.written,
            failed=failed_now + fact_failed,
            message=message,
            verifications_planned=(
                self.factuality.planned_verifications(len(self._fact_state["claims"]))
                if self.factuality is not None and "claims" in self._fact_state
                else None
            ),
            verifications_recorded=(
                len(self._fact_state["verifications"])
                if "verifications" in self._fact_state
                else None
            ),
        )

    def _write_metrics(self) -> None:
        from assay.runs._metrics import compute_metrics

        spec = self.loaded.spec
        metrics = compute_metrics(
            self.run_dir,
            n_boot=spec.bootstrap,
            seed=spec.seed,
            length_penalty=spec.factuality.length_penalty if spec.factuality else None,
        )
        write_json_atomic(self.run_dir / METRICS_FILE, metrics)

    async def _run_factuality(
        self, run_dir: Path, progress: _Progress, abort: asyncio.Event, failing: set[Status]
    ) -> tuple[bool, int, int]:
        """Decompose, then verify. Returns (all planned work recorded, failures, planned).

        The failure policy is applied to the whole run at the end; within this stage a
        tripped limit stops further calls.
        """
        stage = self.factuality
        assert stage is not None
        redo = {Status.API_ERROR} if self.options.retry_errors else set()
        workers = _stage_budget(self.pool)

        def on_record(status: Status) -> None:
            return None

        sentences = await stage.decompose_all(
            run_dir,
            workers=workers,
            abort=abort,
            on_record=on_record,
            progress=progress,
            redo=redo,
        )
        self._fact_state["sentences"] = sentences
        failed = sum(1 for r in sentences.values() if r.status in failing)
        if abort.is_set():
            return False, failed, len(sentences)
        claims = stage.claim_records(sentences)
        stage.write_claims(run_dir, claims)
        self._fact_state["claims"] = claims
        verifications = await stage.verify_all(
            run_dir,
            claims,
            workers=workers,
            abort=abort,
            on_record=on_record,
            progress=progress,
            redo=redo,
        )
        self._fact_state["verifications"] = verifications
        planned = stage.planned_verifications(len(claims))
        failed += sum(1 for r in verifications.values() if r.status in failing)
        done = not abort.is_set() and len(verifications) >= planned
        return done, failed, len(sentences) + planned


def _failed_count(records: dict[Any, JudgmentRecord], failing: set[Status]) -> int:
    return sum(1 for r in records.values() if r.status in failing)


def _stage_budget(pool: ClientPool) -> int:
    """Workers for a factuality stage: enough for every client's concurrency slots."""
    return min(max(pool.total_concurrency(), 4), 1024)


def _worker_budget(judges: list[Judge]) -> int:
    """Enough workers to keep every client's concurrency slots busy, and no more."""
    clients: dict[int, int] = {}
    baselines = 0
    for judge in judges:
        client = getattr(judge, "client", None)
        if client is None:
            baselines = 1
        else:
            clients[id(client)] = client.config.max_concurrency
    return min(max(sum(clients.values()) + baselines, 1), 1024)


def _install_sigterm(loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any] | None) -> bool:
    """SIGTERM cancels the run like Ctrl-C, so the manifest says `interrupted`."""
    if task is None:
        return False
    try:
        loop.add_signal_handler(signal.SIGTERM, task.cancel)
    except (NotImplementedError, RuntimeError, ValueError):
        return False
    return True


class _Progress:
    """Rich progress bars, one per stage, each with a live status tally; silent if off."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.tally: Counter[str] = Counter()
        self.cache_hits = 0
        self._progress: Any = None
        self._task: Any = None
        self._label = ""

    def __enter__(self) -> _Progress:
        if self.enabled:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(
                TextColumn("[bold]{task.fields[stage]:<11}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                TextColumn("{task.description}"),
                transient=False,
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


def run_spec(spec_path: str | Path, options: RunOptions | None = None) -> RunOutcome:
    """Load, execute and record a spec: the library form of `assay run`."""
    return Runner(load_spec(spec_path), options).run()
