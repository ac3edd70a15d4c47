"""Are a run's record files whole? Checked by `assay recompute` and `assay reparse`.

The readers skip a torn last line (a write cut short by a crash) and count only what is
there, so metrics rebuilt from such files silently cover fewer items than the run
planned. This module finds those cases, so the metrics and the manifest can say
`incomplete` and name the line, instead of passing for a finished run.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from assay.core.manifest import Manifest
from assay.core.records import ItemJudgmentRecord, JudgmentRecord, VerificationRecord
from assay.core.rundir import (
    CLAIMS_FILE,
    ITEM_JUDGMENTS_FILE,
    JUDGMENTS_FILE,
    SENTENCES_FILE,
    VERIFICATIONS_FILE,
    iter_jsonl,
    latest,
)

RECORD_FILES = (
    JUDGMENTS_FILE,
    ITEM_JUDGMENTS_FILE,
    SENTENCES_FILE,
    CLAIMS_FILE,
    VERIFICATIONS_FILE,
)


def torn_line(path: Path) -> int | None:
    """The line number of a last line with no newline (a cut-short write), or None."""
    if not path.is_file() or path.stat().st_size == 0:
        return None
    data = path.read_bytes()
    if data.endswith(b"\n"):
        return None
    return data.count(b"\n") + 1


def _count_problem(path: Path | str, what: str, recorded: int, planned: Any) -> list[str]:
    if not isinstance(planned, int) or recorded >= planned:
        return []
    return [f"{path}: {recorded} of {planned} planned {what} recorded"]


def _judgment_count_problem(run_dir: Path, planned: Any) -> list[str]:
    """The run's planned judgments are ForceBench pair members (judgments.jsonl) and
    items-dataset judgments (item_judgments.jsonl) together: both files count."""
    files = [
        (run_dir / name, model)
        for name, model in (
            (JUDGMENTS_FILE, JudgmentRecord),
            (ITEM_JUDGMENTS_FILE, ItemJudgmentRecord),
        )
        if (run_dir / name).is_file()
    ]
    if not files:
        return []
    recorded = sum(len(latest(path, model)) for path, model in files)
    holding = [path for path, _ in files if path.stat().st_size > 0] or [files[0][0]]
    where = " + ".join(str(p) for p in holding)
    return _count_problem(where, "judgments", recorded, planned)


def audit_run(run_dir: Path, manifest: Manifest) -> list[str]:
    """One line per problem: a torn last line (file:line), or fewer records than planned."""
    problems = []
    for name in RECORD_FILES:
        line = torn_line(run_dir / name)
        if line is not None:
            problems.append(f"{run_dir / name}:{line}: torn last line (a write cut short)")
    problems += _judgment_count_problem(run_dir, manifest.planned_judgments)
    fact = manifest.factuality
    verifications = run_dir / VERIFICATIONS_FILE
    if verifications.is_file() and fact is not None and fact.planned_verifications is not None:
        keys = {r.key for r in iter_jsonl(verifications, VerificationRecord)}
        planned = fact.planned_verifications
        problems += _count_problem(verifications, "verifications", len(keys), planned)
    return problems


def resume_hint(manifest: Manifest | Mapping[str, Any], run_dir: Path) -> str:
    """The command that resumes a run (the manifest as the model or as read from disk)."""
    path = manifest.spec_path if isinstance(manifest, Manifest) else manifest.get("spec_path")
    spec = path or "SPEC"
    return f"resume the run to redo the missing work: assay run {spec} --output-dir {run_dir}"


def mark_incomplete(
    run_dir: Path, manifest: Manifest, metrics: dict[str, Any], problems: list[str]
) -> None:
    """Label metrics and manifest as covering fewer items than planned (in place)."""
    if not problems:
        return
    hint = resume_hint(manifest, run_dir)
    metrics["complete"] = False
    metrics["incomplete"] = problems
    if manifest.status in ("complete", None):
        manifest.status = "interrupted"
    manifest.message = f"{problems[0]}; {hint}"
    manifest.incomplete = problems
