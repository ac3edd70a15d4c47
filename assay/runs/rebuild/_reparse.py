"""Re-parse a finished run's raw outputs with the current parser: no model calls."""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay._limits import MAX_BOOTSTRAP
from assay.core.manifest import Manifest, Reparse
from assay.core.records import ItemJudgmentRecord, JudgmentRecord
from assay.core.rundir import (
    ITEM_JUDGMENTS_FILE,
    JUDGMENTS_FILE,
    MANIFEST_FILE,
    METRICS_FILE,
    latest,
)
from assay.core.rundir_lock import AGAIN, WriterLock
from assay.errors import RunError
from assay.juries import juries_of, refresh_jury_records
from assay.parsing import PARSER_VERSION
from assay.prompts import Prompt, PromptRegistry
from assay.runs.rebuild._reparsed import R, reparsed
from assay.runs.store._audit import audit_run, mark_incomplete
from assay.runs.store._manifest import judge_stats, load_manifest
from assay.runs.store._rundir import read_run_manifest
from assay.runs.store._store import write_json_atomic, write_jsonl_atomic, write_manifest


def _prompts_for(manifest: Manifest) -> dict[str, Prompt]:
    base = Path(manifest.spec_path or ".").parent
    registry = PromptRegistry([base / d for d in manifest.spec.get("prompt_dirs", [])])
    prompts: dict[str, Prompt] = {}
    for judge in manifest.judges:
        info = judge.get("prompt")
        if not info:
            continue
        prompt = registry.get(f"{info['id']}@{info['version']}")
        if prompt.sha256 != info["sha256"]:
            raise RunError(
                f"prompt {prompt.ref} changed since the run (sha256 {prompt.sha256[:12]} != "
                f"{info['sha256'][:12]}); re-parsing needs the prompt the run used",
                file=prompt.path,
            )
        prompts[judge["id"]] = prompt
    return prompts


def _check_reparsable(run: Path, manifest: Manifest) -> None:
    """Re-parsing rewrites judgments.jsonl and item_judgments.jsonl; a run with neither
    has nothing to re-parse."""
    if (run / JUDGMENTS_FILE).is_file() or (run / ITEM_JUDGMENTS_FILE).is_file():
        return
    imported = (manifest.imported_from or {}).get("tool")
    if imported:
        raise RunError(
            f"imported from {imported}: its verdicts were parsed at import and there are no "
            f"judge outputs to re-parse; to apply a newer parser, import the {imported} "
            "files again into a new --output-dir",
            file=run,
        )
    raise RunError(
        f"no {JUDGMENTS_FILE} or {ITEM_JUDGMENTS_FILE}: this run has no judge outputs to re-parse "
        f"(`assay recompute {run}` rebuilds its metrics)",
        file=run,
    )


def rebuild_metrics(run: Path, manifest: Manifest) -> dict[str, Any]:
    """The run's metrics from its record files, with the bootstrap, seed and length
    penalty its recorded spec names (what `recompute`, `reparse` and `verify` compare)."""
    from assay.runs.rebuild._metrics import compute_metrics

    spec = manifest.spec
    return compute_metrics(
        run,
        n_boot=int(spec.get("bootstrap", 1000)),
        seed=int(spec.get("seed", 0)),
        length_penalty=(spec.get("factuality") or {}).get("length_penalty"),
    )


def check_recorded_bootstrap(run: Path, manifest: Manifest) -> None:
    """The recorded spec's `bootstrap` within today's bound: a run made before the bound
    could ask for any number of resamples, which no machine can draw."""
    n_boot = manifest.spec.get("bootstrap", 1000)
    if isinstance(n_boot, bool) or not isinstance(n_boot, int) or not 0 <= n_boot <= MAX_BOOTSTRAP:
        raise RunError(
            f"{n_boot!r} resamples; at most {MAX_BOOTSTRAP} are drawn: set a smaller "
            "value there to recompute this run's metrics",
            file=run / MANIFEST_FILE,
            field="spec.bootstrap",
        )


def recompute_run(run_dir: str | Path) -> list[str]:
    """Rebuild metrics.json from the record files. Returns the problems found (a torn
    last line, fewer records than planned); with any, the metrics say `complete: false`
    and the manifest stops claiming `complete`."""
    run = Path(run_dir)
    read_run_manifest(run)  # a missing or non-run directory: that error, no lock file
    with WriterLock(run, command="assay recompute", fix=AGAIN):
        manifest = load_manifest(read_run_manifest(run), run)
        check_recorded_bootstrap(run, manifest)
        problems = audit_run(run, manifest)
        _refresh_juries(run, manifest)
        metrics = rebuild_metrics(run, manifest)
        mark_incomplete(run, manifest, metrics, problems)
        write_json_atomic(run / METRICS_FILE, metrics)
        if problems:
            write_manifest(run / MANIFEST_FILE, manifest)
    return problems


def _refresh_juries(run: Path, manifest: Manifest) -> None:
    """The `[[juries]]` judgments voted again from the members' records as they are now."""
    refresh_jury_records(run, juries_of(manifest.spec, str(run / MANIFEST_FILE)))


def reparse_run(run_dir: str | Path) -> dict[str, int]:
    """Rewrite judgments.jsonl with freshly parsed verdicts; returns status transitions."""
    return reparse_run_checked(run_dir)[0]


def reparse_run_checked(run_dir: str | Path) -> tuple[dict[str, int], list[str]]:
    """`reparse_run`, plus the problems `recompute_run` would report (checked before the
    judgments file is rewritten, which drops a torn last line)."""
    run = Path(run_dir)
    read_run_manifest(run)  # a missing or non-run directory: that error, no lock file
    with WriterLock(run, command="assay reparse", fix=AGAIN):
        return _reparse_locked(run)


def _reparse_locked(run: Path) -> tuple[dict[str, int], list[str]]:
    manifest = load_manifest(read_run_manifest(run), run)
    if manifest.status == "running":
        raise RunError(
            "run is still running (or crashed); resume it before re-parsing",
            file=run / MANIFEST_FILE,
        )
    _check_reparsable(run, manifest)
    check_recorded_bootstrap(run, manifest)
    problems = audit_run(run, manifest)
    prompts = _prompts_for(manifest)
    judged, changes, backups = _reparse_file(run, JUDGMENTS_FILE, JudgmentRecord, prompts)
    items, changed, copied = _reparse_file(run, ITEM_JUDGMENTS_FILE, ItemJudgmentRecord, prompts)
    changes.update(changed)
    backups += copied
    _refresh_juries(run, manifest)
    if items:  # the juries' records as voted again, for the judges' counters
        items = list(latest(run / ITEM_JUDGMENTS_FILE, ItemJudgmentRecord).values())

    metrics = rebuild_metrics(run, manifest)
    mark_incomplete(run, manifest, metrics, problems)
    write_json_atomic(run / METRICS_FILE, metrics)
    _restat_judges(manifest, [*judged, *items])
    reparse = Reparse(
        from_parser=manifest.parser_version,
        to_parser=PARSER_VERSION,
        changes=dict(changes),
        backup=backups[0] if backups else None,
        backups=backups,
    )
    manifest.reparses = [*manifest.reparses, reparse]
    manifest.parser_version = PARSER_VERSION
    write_manifest(run / MANIFEST_FILE, manifest)
    return dict(changes), problems


def _reparse_file(
    run: Path, name: str, model: type[R], prompts: dict[str, Prompt]
) -> tuple[list[R], Counter[str], list[str]]:
    """Record file `name` rewritten with its records parsed again, its first version kept
    as `<name>.before-reparse` (a later reparse keeps that one): the records, the status
    transitions and the backup's name (nothing when the run has no such record)."""
    found = latest(run / name, model) if (run / name).is_file() else {}
    if not found:
        return [], Counter(), []
    records, changes = reparsed(found.values(), prompts)
    backup = run / f"{name}.before-reparse"
    if not backup.exists():
        shutil.copyfile(run / name, backup)
    write_jsonl_atomic(run / name, records)
    return records, changes, [backup.name]


def _restat_judges(
    manifest: Manifest, records: Sequence[JudgmentRecord | ItemJudgmentRecord]
) -> None:
    """Judge counters recomputed from the re-parsed records (ForceBench and items); the
    planned counts stay."""
    by_judge: dict[str, list[JudgmentRecord | ItemJudgmentRecord]] = {}
    for rec in records:
        by_judge.setdefault(rec.judge_id, []).append(rec)
    judges = []
    for judge in manifest.judges:
        planned = judge.get("stats", {}).get("planned", 0)
        entry = {**judge, "stats": judge_stats(by_judge.get(judge["id"], []), planned)}
        if judge.get("parser_version"):
            entry["parser_version"] = PARSER_VERSION
        judges.append(entry)
    manifest.judges = judges
