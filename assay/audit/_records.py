"""`records` and `metrics`: the record files are the ones metrics.json summarised, hold as
many records as the manifest counted, and every metric recomputes from them identically.

The metrics are rebuilt in memory with the code `assay recompute` runs (nothing is
written into the run directory), so verify and recompute can never disagree.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from assay._version import __version__
from assay.audit._model import Check, verdict
from assay.core.manifest import Manifest
from assay.core.records import (
    GateRecord,
    ItemJudgmentRecord,
    JudgmentRecord,
    VerificationRecord,
)
from assay.core.rundir import (
    DIGESTS_KEY,
    GATES_FILE,
    ITEM_JUDGMENTS_FILE,
    JUDGMENTS_FILE,
    METRICS_FILE,
    RECORD_FILES,
    VERIFICATIONS_FILE,
    latest,
)
from assay.report._digests import check_records

# What recompute adds only when records are missing: the records check names that cause.
_NOT_METRICS = frozenset({DIGESTS_KEY, "complete", "incomplete"})
_ID_KEYS = ("judge_id", "id", "verifier_id", "name", "dataset")


def _counted(run_dir: Path) -> dict[tuple[str, str], int]:
    """{(record file, judge or verifier id): records on disk, one per key}."""
    counts: Counter[tuple[str, str]] = Counter()
    sources: tuple[tuple[str, type[Any], str], ...] = (
        (JUDGMENTS_FILE, JudgmentRecord, "judge_id"),
        (ITEM_JUDGMENTS_FILE, ItemJudgmentRecord, "judge_id"),
        (VERIFICATIONS_FILE, VerificationRecord, "verifier_id"),
        (GATES_FILE, GateRecord, "gate_id"),
    )
    for name, model, field in sources:
        if (run_dir / name).is_file():
            for record in latest(run_dir / name, model).values():
                counts[(name, str(getattr(record, field)))] += 1
    return dict(counts)


_JUDGE_FILES = (JUDGMENTS_FILE, ITEM_JUDGMENTS_FILE)


def _recorded(manifest: Manifest) -> list[tuple[tuple[str, ...], str, int]]:
    """(the files its records go to, component id, records the manifest says it wrote):
    each judge's and verifier's `stats.recorded`, the gate's `recorded_questions`."""
    entries: list[tuple[tuple[str, ...], Any]] = [(_JUDGE_FILES, e) for e in manifest.judges]
    if manifest.factuality is not None:
        entries += [((VERIFICATIONS_FILE,), v) for v in manifest.factuality.verifiers]
    out: list[tuple[tuple[str, ...], str, int]] = []
    for files, entry in entries:
        stats = entry.get("stats") if isinstance(entry, dict) else None
        if isinstance(stats, dict) and isinstance(stats.get("recorded"), int):
            out.append((files, str(entry.get("id")), stats["recorded"]))
    gate = manifest.gate
    if gate is not None and gate.id and isinstance(gate.recorded_questions, int):
        out.append(((GATES_FILE,), gate.id, gate.recorded_questions))
    return out


def _count_problems(run_dir: Path, manifest: Manifest) -> tuple[int, list[str]]:
    on_disk = _counted(run_dir)
    problems: list[str] = []
    recorded = _recorded(manifest)
    for files, component, expected in recorded:
        found = [(f, n) for (f, c), n in on_disk.items() if c == component and f in files]
        have = sum(n for _, n in found)
        if have != expected:
            file = found[0][0] if found else " or ".join(files)
            gap = f"{expected - have} short" if have < expected else f"{have - expected} extra"
            problems.append(
                f"{file}: {have} records of {component}, the manifest recorded {expected} ({gap})"
            )
    return len(recorded), problems


def check_record_files(run_dir: Path, manifest: Manifest, metrics: dict[str, Any]) -> Check:
    """Digests against metrics.json, record counts against the manifest, whole lines."""
    from assay.runs.store._audit import torn_line

    digests = check_records(run_dir, metrics)
    counted, problems = _count_problems(run_dir, manifest)
    for name in RECORD_FILES:
        line = torn_line(run_dir / name)
        if line is not None:
            problems.append(f"{name}:{line}: torn last line (a write cut short)")
    notes: list[str] = []
    for f in digests.files:
        if f.state == "not recorded":
            notes.append(f"{f.file}: no sha256 in {METRICS_FILE} (written before digests)")
        elif f.stale:
            problems.append(
                f"{f.file}: {f.note} (sha256 {(f.on_disk or 'none')[:12]}, "
                f"{METRICS_FILE} recorded {(f.recorded or 'none')[:12]})"
            )
    checked = sum(1 for f in digests.files if f.state != "not recorded") + counted
    return verdict("records", checked, problems, notes, skipped=len(notes))


def _label(item: Any, index: int) -> str:
    if isinstance(item, dict):
        for key in _ID_KEYS:
            value = item.get(key)
            if isinstance(value, str):
                return value
    return str(index)


class _Diff:
    """Walks stored and rebuilt metrics: the first value that differs, and the keys only
    one side has. Keys are a failure when the same assay version wrote the run (an edit
    removed or added a statistic); across versions they are what a release added or
    retired, shown as notes, while every statistic both compute must still agree."""

    def __init__(self) -> None:
        self.value: str | None = None
        self.only_stored: list[str] = []
        self.only_rebuilt: list[str] = []

    def walk(self, stored: Any, rebuilt: Any, path: str = "") -> None:
        if self.value is not None:
            return
        if isinstance(stored, dict) and isinstance(rebuilt, dict):
            self._walk_dict(stored, rebuilt, path)
        elif isinstance(stored, list) and isinstance(rebuilt, list):
            self._walk_list(stored, rebuilt, path)
        elif json.dumps(stored, sort_keys=True) != json.dumps(rebuilt, sort_keys=True):
            self.value = path

    def _walk_dict(self, stored: dict[str, Any], rebuilt: dict[str, Any], path: str) -> None:
        for key in [*stored, *(k for k in rebuilt if k not in stored)]:
            sub = f"{path}.{key}" if path else str(key)
            if key not in rebuilt:
                self.only_stored.append(sub)
            elif key not in stored:
                self.only_rebuilt.append(sub)
            else:
                self.walk(stored[key], rebuilt[key], sub)

    def _walk_list(self, stored: list[Any], rebuilt: list[Any], path: str) -> None:
        labels = [_label(a, i) for i, a in enumerate(stored)]
        for i, (a, b) in enumerate(zip(stored, rebuilt, strict=False)):
            label = labels[i] if labels.count(labels[i]) == 1 else f"{labels[i]}#{i}"
            self.walk(a, b, f"{path}[{label}]")
        if len(stored) != len(rebuilt) and self.value is None:
            self.value = f"{path} (length)"


def _leaves(value: Any) -> int:
    if isinstance(value, dict):
        return sum(_leaves(v) for v in value.values())
    if isinstance(value, list):
        return sum(_leaves(v) for v in value)
    return 1


def _key_notes(diff: _Diff, then: str | None) -> list[str]:
    notes = []
    for keys, what in ((diff.only_rebuilt, "added"), (diff.only_stored, "no longer computed")):
        if keys:
            shown = ", ".join(keys[:3]) + (f" (+{len(keys) - 3} more)" if len(keys) > 3 else "")
            notes.append(f"{len(keys)} keys {what} since assay {then}: {shown}")
    return notes


def check_metrics(run_dir: Path, manifest: Manifest, stored: dict[str, Any]) -> Check:
    """Rebuild metrics.json in memory as `assay recompute` does and compare every value."""
    from assay.runs.rebuild import check_recorded_bootstrap, rebuild_metrics

    check_recorded_bootstrap(run_dir, manifest)  # a resample count no machine can draw: exit 2
    rebuilt = json.loads(json.dumps(rebuild_metrics(run_dir, manifest)))
    stored = {k: v for k, v in stored.items() if k not in _NOT_METRICS}
    rebuilt = {k: v for k, v in rebuilt.items() if k not in _NOT_METRICS}
    diff = _Diff()
    diff.walk(stored, rebuilt)
    then = manifest.environment.get("assay_version")
    same_version = then is None or str(then) == __version__
    problems = []
    if diff.value is not None:
        problems.append(
            f"{METRICS_FILE}: {diff.value} differs from the value recomputed from the records"
        )
    notes: list[str] = []
    if same_version:
        for key in [*diff.only_stored, *diff.only_rebuilt][:1]:
            problems.append(f"{METRICS_FILE}: {key} is on one side only (the same assay version)")
    else:
        notes = _key_notes(diff, str(then))
    return verdict("metrics", _leaves(stored), problems, notes)
