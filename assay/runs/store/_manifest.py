"""The one place a manifest is built: a run's, an import's, and the counters in both.

Every number in a manifest is derived from the record files (a resumed run reports the
same as one that never stopped); components enter as their own `describe()`.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from assay.core.judging import Judge
from assay.core.manifest import (
    MANIFEST_VERSION,
    CacheInfo,
    DatasetInfo,
    FactualitySection,
    Manifest,
    Session,
)
from assay.core.outcomes import Status
from assay.core.rundir import (
    CLAIMS_FILE,
    JUDGMENTS_FILE,
    MANIFEST_FILE,
    METRICS_FILE,
    SENTENCES_FILE,
    VERIFICATIONS_FILE,
)
from assay.errors import RunError, first_problem
from assay.runs.spec._resolved import resolved_spec
from assay.runs.store._counters import JudgeCounters
from assay.runs.store._environment import environment
from assay.runs.store._rundir import read_run_manifest
from assay.runs.store._store import write_manifest

FINAL_STATUSES = ("complete", "failed", "interrupted", "budget_exhausted")
FACTUALITY_OUTPUTS = {
    "sentences": SENTENCES_FILE,
    "claims": CLAIMS_FILE,
    "verifications": VERIFICATIONS_FILE,
}


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def load_manifest(value: dict[str, Any], run_dir: Path) -> Manifest:
    """A manifest read from disk as the typed model (older manifests load as they are)."""
    try:
        return Manifest.model_validate(value)
    except ValidationError as exc:
        problem = first_problem(exc, typo_first=False)
        raise RunError(
            f"manifest field {(problem.field or '')!r}: {problem.msg}", file=run_dir / MANIFEST_FILE
        ) from None


def identity_fields(info: dict[str, Any]) -> dict[str, Any]:
    """Record fields naming what produced a record (model, prompt, parser), taken from a
    component's `describe()`; computed once per component, not per record."""
    prompt = info.get("prompt") or {}
    client = info.get("client") or {}
    out = {
        "model": client.get("model") or info.get("model"),
        "prompt_id": prompt.get("id"),
        "prompt_version": prompt.get("version"),
        "prompt_sha256": prompt.get("sha256"),
    }
    if "parser_version" in info:
        out["parser_version"] = info.get("parser_version")
    return out


def _calls(records: Sequence[Any]) -> dict[str, Any]:
    """Requests, cache hits, retries and statuses: what every stage's stats start with.

    `requests_sent` counts every HTTP attempt the records needed (cache hits send none);
    `retries` is attempts beyond the first."""
    by_status = Counter(r.status.value for r in records)
    sent = [r for r in records if not r.cache_hit]
    return {
        "recorded": len(records),
        "requests_sent": sum(r.attempts for r in sent),
        "cache_hits": sum(1 for r in records if r.cache_hit),
        "retries": sum(max(r.attempts - 1, 0) for r in sent),
        "by_status": {s.value: by_status.get(s.value, 0) for s in Status},
    }


def _cost(records: Sequence[Any]) -> float | None:
    """Cost of the requests actually sent; None when no price was known."""
    costs = [r.usage.cost_usd for r in records if not r.cache_hit and r.usage.cost_usd is not None]
    return round(sum(costs), 6) if costs else None


def judge_stats(records: Iterable[Any], planned: int) -> dict[str, Any]:
    """Requests, cache hits, retries, failures by status, tokens and cost of one judge's
    records (anything with the records' counter fields)."""
    counters = JudgeCounters()
    for record in records:
        counters.add(record)
    return counters.stats(planned)


def stage_stats(records: Sequence[Any]) -> dict[str, Any]:
    """Requests, cache hits, retries and statuses for a list of factuality records."""
    stats = _calls(records)
    stats["tokens"] = {
        "prompt": sum(r.usage.prompt_tokens for r in records),
        "completion": sum(r.usage.completion_tokens for r in records),
    }
    stats["cost_usd"] = _cost(records)
    return stats


def judges_section(
    judges: Sequence[Judge], counters: Mapping[str, JudgeCounters], planned: Counter[str]
) -> list[dict[str, Any]]:
    """Each judge's `describe()`, its id, and the counters of its records."""
    section = []
    for judge in judges:
        entry = dict(judge.describe())
        entry["id"] = judge.id
        entry["stats"] = counters.get(judge.id, JudgeCounters()).stats(planned[judge.id])
        section.append(entry)
    return section


def factuality_section(
    described: dict[str, Any],
    sentences: Sequence[Any],
    verifications: Sequence[Any],
    planned_verifications: int | None,
    n_claims: int | None,
) -> FactualitySection:
    """The stage's `describe()` with counters; planned counts are None before the
    claims are known."""
    section = FactualitySection.model_validate(described)
    section.decomposer["stats"] = stage_stats(sentences)
    section.decomposer["stats"]["claims"] = sum(r.n_claims for r in sentences)
    for info in section.verifiers:
        info["stats"] = stage_stats([r for r in verifications if r.verifier_id == info["id"]])
        info["stats"]["planned"] = n_claims
    section.planned_verifications = planned_verifications
    section.recorded_verifications = len(verifications)
    return section


def _dataset_info(d: Any) -> DatasetInfo:
    """A dataset's identity; a CSV/TSV file's delimiter too (given or detected: it
    decides what the columns are)."""
    sep = getattr(d, "delimiter", None)
    extra = {"delimiter": sep} if sep is not None else {}
    return DatasetInfo(name=d.name, path=d.path, sha256=d.sha256, rows=d.rows, **extra)


def run_manifest(
    existing: Manifest | None,
    *,
    loaded: Any,
    run_dir: Path,
    datasets: Sequence[Any],
    cache: CacheInfo,
) -> Manifest:
    """The parts of a run's manifest fixed for a session; identity kept across resumes
    (each stage adds its own `outputs` after the run's own files)."""
    from assay.parsing import PARSER_VERSION

    old = existing or Manifest()
    outputs = {"manifest": MANIFEST_FILE, "judgments": JUDGMENTS_FILE, "metrics": METRICS_FILE}
    return Manifest(
        manifest_version=MANIFEST_VERSION,
        run_id=old.run_id or uuid.uuid4().hex,
        name=loaded.spec.name,
        created_at=old.created_at or now(),
        sessions=list(old.sessions),
        environment=environment(Path.cwd()),
        spec_path=str(Path(loaded.path).resolve()),
        spec_sha256=loaded.sha256,
        spec=loaded.raw,  # redacted with the whole manifest when written
        spec_resolved=resolved_spec(loaded.spec),
        datasets=[_dataset_info(d) for d in datasets],
        parser_version=PARSER_VERSION,
        cache=cache,
        failure_policy=loaded.spec.failure.model_dump(mode="json"),
        outputs={"run_dir": str(run_dir.resolve()), **outputs},
    )


def new_session(todo: int, resumed: bool) -> Session:
    return Session(started_at=now(), todo=todo, resumed=resumed)


def end_session(session: Session, *, written: int, status: str) -> None:
    session.ended_at = now()
    session.written = written
    session.status = status


def session_manifest(
    base: Manifest,
    status: str,
    message: str | None,
    *,
    counts: tuple[int, int],
    judges: list[dict[str, Any]],
    warnings: list[str],
) -> Manifest:
    """`base` plus where this session stands: status, counters, judges (each stage then
    sets its own section)."""
    manifest = base.model_copy(deep=True)
    manifest.status = status
    manifest.message = message
    manifest.updated_at = now()
    manifest.planned_judgments, manifest.recorded_judgments = counts
    manifest.judges = judges
    manifest.warnings = warnings
    if status in FINAL_STATUSES:
        manifest.finished_at = now()
    return manifest


def imported_manifest(
    source: Path,
    run_dir: Path,
    *,
    tool: str,
    spec: dict[str, Any],
    factuality: FactualitySection,
) -> Manifest:
    """The manifest of records imported from another tool: complete, no model called."""
    stamp = now()
    return Manifest(
        manifest_version=MANIFEST_VERSION,
        run_id=uuid.uuid4().hex,
        name=f"import:{source.name}",
        status="complete",
        message=f"imported from {tool} output files; no model was called",
        created_at=stamp,
        finished_at=stamp,
        environment=environment(Path.cwd()),
        imported_from={"tool": tool, "source": str(source.resolve())},
        spec=spec,
        factuality=factuality,
        outputs={
            "run_dir": str(run_dir.resolve()),
            "manifest": MANIFEST_FILE,
            "metrics": METRICS_FILE,
            **FACTUALITY_OUTPUTS,
        },
    )


def set_judge_batches(run_dir: Path, batches: Mapping[str, list[dict[str, Any]]]) -> None:
    """Rewrite the manifest's judge entries' `batches` while a run polls its batches, so
    a killed run's manifest shows them; the rest of the manifest is kept as it is."""
    manifest = load_manifest(read_run_manifest(run_dir), run_dir)
    for entry in manifest.judges:
        judge_id = entry.get("id")
        if isinstance(judge_id, str) and judge_id in batches:
            entry["batches"] = batches[judge_id]
    write_manifest(run_dir / MANIFEST_FILE, manifest)


def cache_info(cache: Any, options: Any) -> CacheInfo:
    """The directory this run reads and writes responses in (--cache-dir, then
    $ASSAY_CACHE_DIR, $XDG_CACHE_HOME/assay, ~/.cache/assay); None with --no-cache."""
    directory = None
    if cache is not None:
        directory = str(cache.directory.resolve())
    elif options.use_cache or options.refresh_cache:
        from assay.models import default_cache_dir

        chosen = Path(options.cache_dir) if options.cache_dir else default_cache_dir()
        directory = str(chosen.expanduser().resolve())
    return CacheInfo(enabled=options.use_cache, refresh=options.refresh_cache, dir=directory)
