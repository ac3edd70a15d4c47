"""Finding run directories under the given paths and summarising each from its manifest.

A run directory is any directory holding `manifest.json`. The walk does not go into a
run directory's own folders (`policies/<name>/` has a manifest too, and is part of its
run, not a run), nor into hidden folders. A manifest that cannot be read does not hide
the other runs: its run is listed as "unreadable" with the one-line reason.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from assay.core.manifest import Manifest
from assay.core.records import ItemRecord
from assay.core.rundir import (
    GATES_FILE,
    ITEM_JUDGMENTS_FILE,
    ITEMS_FILE,
    JUDGMENTS_FILE,
    MANIFEST_FILE,
    POLICIES_DIR,
    VERIFICATIONS_FILE,
    read_manifest,
)
from assay.core.rundir_lock import LOCK_FILE
from assay.errors import AssayError, first_problem
from assay.view.index._models import RunSummary

__all__ = ["discover", "find_run_dirs", "run_id", "summarise", "writer_active"]

_MAX_DEPTH = 8  # folders below a given path: a home directory is not walked whole
_SKIP = frozenset({"node_modules", "__pycache__", "site-packages"})


def run_id(run_dir: Path) -> str:
    """Stable for the server's life and URL-safe: the resolved path's sha1, 12 hex."""
    return hashlib.sha1(str(run_dir.resolve()).encode("utf-8")).hexdigest()[:12]


def find_run_dirs(paths: Sequence[Path]) -> Iterator[tuple[Path, Path]]:
    """(root, run directory) for each run under `paths`, each run once, sorted per root."""
    seen: set[Path] = set()
    for root in paths:
        for run_dir in sorted(_walk(root, 0)):
            resolved = run_dir.resolve()
            if resolved not in seen:
                seen.add(resolved)
                yield root, run_dir


def _walk(folder: Path, depth: int) -> Iterator[Path]:
    if (folder / MANIFEST_FILE).is_file():
        yield folder
        return
    if depth >= _MAX_DEPTH:
        return
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return  # unreadable or vanished: nothing to list there
    for entry in entries:
        if entry.name.startswith(".") or entry.name in _SKIP:
            continue
        if entry.is_dir(follow_symlinks=False):
            yield from _walk(Path(entry.path), depth + 1)


def writer_active(run_dir: Path) -> bool:
    """Whether another process holds the run's writer lock right now.

    Tested without disturbing anyone: a shared, non-blocking `flock` on a separate
    read-only descriptor, released at once; the lock file is never created or removed.
    A writer holds it exclusively, so the attempt fails exactly while one is writing."""
    try:
        fd = os.open(run_dir / LOCK_FILE, os.O_RDONLY)
    except OSError:
        return False  # no lock file: no writer
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def _shown(root: Path, run_dir: Path) -> str:
    try:
        rel = run_dir.resolve().relative_to(root.resolve().parent)
    except ValueError:
        return str(run_dir)
    return str(rel)


def kinds_of(run_dir: Path) -> list[str]:
    """What a run holds, from which record files exist."""
    kinds = []
    if _holds_records(run_dir / JUDGMENTS_FILE):  # an items run writes an empty one
        kinds.append("forcebench")
    if _holds_records(run_dir / ITEM_JUDGMENTS_FILE):
        kinds.extend(_item_kinds(run_dir / ITEMS_FILE))
    if _holds_records(run_dir / VERIFICATIONS_FILE):
        kinds.append("factuality")
    if _holds_records(run_dir / GATES_FILE):
        kinds.append("gate")
    if (run_dir / POLICIES_DIR).is_dir():
        kinds.append("policies")
    return kinds


def _holds_records(path: Path) -> bool:
    """A record file with at least one byte: every run creates its files up front."""
    try:
        return path.stat().st_size > 0
    except OSError:
        return False


def _item_kinds(items_file: Path) -> list[str]:
    """items and/or pairwise: from the `pairwise` flag of items.jsonl's lines (the first
    line of each kind is enough; a line that does not parse is left to the table)."""
    single = pairwise = False
    try:
        with items_file.open(encoding="utf-8") as fh:
            for line in fh:
                if not line.endswith("\n") or not line.strip():
                    continue
                try:
                    is_pair = ItemRecord.model_validate_json(line).pairwise
                except ValueError:
                    continue
                single, pairwise = single or not is_pair, pairwise or is_pair
                if single and pairwise:
                    break
    except OSError:
        return ["items"]
    return ["items"] * (single or not pairwise) + ["pairwise"] * pairwise


def _status(manifest: Manifest, running: bool) -> str:
    if running:
        return "running"
    status = manifest.status or "complete"
    return "interrupted" if status == "running" else status


def _stats_of(manifest: Manifest) -> list[dict[str, Any]]:
    """Every component's `stats` (judges, the decomposer, verifiers)."""
    parts: list[dict[str, Any]] = list(manifest.judges)
    if manifest.factuality is not None:
        parts.append(manifest.factuality.decomposer)
        parts.extend(manifest.factuality.verifiers)
    return [p["stats"] for p in parts if isinstance(p.get("stats"), dict)]


def _cost(manifest: Manifest) -> float | None:
    costs = [s.get("cost_usd") for s in _stats_of(manifest)]
    known = [float(c) for c in costs if isinstance(c, int | float)]
    return round(sum(known), 6) if known else None


def _model_of(part: dict[str, Any]) -> str | None:
    """An LLM component's exact model id (its `client`), else a top-level `model`."""
    client = part.get("client")
    model = client.get("model") if isinstance(client, dict) else None
    model = model or part.get("model")
    return str(model) if model else None


def _counts(manifest: Manifest) -> tuple[int | None, int | None]:
    """(planned, recorded) work: judgments plus the factuality stage's verifications."""
    sections = [(manifest.planned_judgments, manifest.recorded_judgments)]
    if manifest.factuality is not None:
        fact = manifest.factuality
        sections.append((fact.planned_verifications, fact.recorded_verifications))
    known = [(p, r) for p, r in sections if p is not None]
    if not known:
        return None, None
    return sum(p for p, _ in known), sum(r or 0 for _, r in known)


def _components(manifest: Manifest) -> list[dict[str, Any]]:
    parts = list(manifest.judges)
    if manifest.factuality is not None:
        parts.extend(manifest.factuality.verifiers)
    return parts


def _reason(exc: Exception, path: Path) -> str:
    """One line naming the manifest and what is wrong with it."""
    if isinstance(exc, ValidationError):
        problem = first_problem(exc)
        return str(AssayError(problem.message, file=path, field=problem.field))
    if isinstance(exc, OSError):
        return str(AssayError(exc.strerror or type(exc).__name__, file=path))
    return str(exc).splitlines()[0]


def summarise(root: Path, run_dir: Path) -> RunSummary:
    """The run's summary; an unreadable manifest gives status "unreadable" and why."""
    base = {
        "id": run_id(run_dir),
        "path": _shown(root, run_dir),
        "dir": str(run_dir),
        "name": run_dir.name,
    }
    try:
        manifest = read_manifest(run_dir)
    except (AssayError, ValidationError, OSError) as exc:
        reason = _reason(exc, run_dir / MANIFEST_FILE)
        return RunSummary(**base, kinds=kinds_of(run_dir), status="unreadable", reason=reason)
    parts = _components(manifest)
    judges = [str(p["id"]) for p in parts if p.get("id")]
    models = sorted({m for p in parts if (m := _model_of(p))})
    planned, recorded = _counts(manifest)
    return RunSummary(
        **{**base, "name": manifest.name or run_dir.name},
        kinds=kinds_of(run_dir),
        status=_status(manifest, writer_active(run_dir)),
        planned=planned,
        recorded=recorded,
        judges=judges,
        models=models,
        cost_usd=_cost(manifest),
        created_at=manifest.created_at,
        updated_at=manifest.updated_at,
    )


def discover(paths: Sequence[Path]) -> list[RunSummary]:
    """Every run under `paths`, summarised."""
    return [summarise(root, run_dir) for root, run_dir in find_run_dirs(paths)]
