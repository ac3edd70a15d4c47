"""Opening an existing run directory, and checking a new one can be created.

Commands that read a run (report, recompute, reparse) go through `read_run_manifest`, so
a file, an empty directory or a damaged manifest ends in one line saying what to pass.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.core.rundir import MANIFEST_FILE, METRICS_FILE
from assay.core.rundir_lock import ELSEWHERE, WriterLock
from assay.errors import PathError, RunError

if TYPE_CHECKING:
    from assay.runs.spec._options import RunOptions
    from assay.runs.spec._spec import LoadedSpec

WRITERS = "`assay run` or `assay import-medscore`"


def read_run_manifest(run_dir: str | Path) -> dict[str, Any]:
    """The manifest of an existing run directory, or a `RunError`/`PathError` naming it."""
    run = Path(run_dir)
    if not run.exists():
        raise PathError(f"run directory not found; pass a directory written by {WRITERS}", file=run)
    if not run.is_dir():
        raise PathError(
            f"is a file, not a run directory; pass the directory written by {WRITERS}", file=run
        )
    path = run / MANIFEST_FILE
    if not path.is_file():
        raise RunError(
            f"not a run directory (no {MANIFEST_FILE}); pass a directory written by {WRITERS}",
            file=run,
        )
    try:
        value = json.loads(path.read_bytes().decode("utf-8"))
    except UnicodeDecodeError:
        raise RunError(f"not UTF-8; {_damaged()}", file=path) from None
    except json.JSONDecodeError as exc:
        raise RunError(
            f"not valid JSON ({exc.msg}); {_damaged()}", file=path, line=exc.lineno
        ) from None
    if not isinstance(value, dict):
        raise RunError(f"expected a JSON object; {_damaged()}", file=path)
    return value


def _damaged() -> str:
    return "the manifest is damaged: restore it, or run the spec again into a new --output-dir"


def read_run_metrics(run_dir: str | Path) -> dict[str, Any]:
    """The run's metrics.json; missing or damaged ones can be rebuilt by `assay recompute`."""
    run = Path(run_dir)
    path = run / METRICS_FILE
    fix = f"rebuild it with `assay recompute {run}`"
    if not path.is_file():
        raise RunError(f"no {METRICS_FILE} (the run has no metrics yet); {fix}", file=run)
    try:
        value = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise RunError(f"damaged; {fix}", file=path) from None
    if not isinstance(value, dict):
        raise RunError(f"expected a JSON object; {fix}", file=path)
    return value


def check_new_dir(
    path: Path, *, what: str, fix: str, spec: str | None = None, field: str | None = None
) -> None:
    """Refuse, before anything is written, a directory path that is (or is inside) a file.

    With `spec`, the error names the spec file and field that gave the path."""
    blocker = next((p for p in (path, *path.parents) if p.exists()), None)
    if blocker is None or blocker.is_dir():
        return
    problem = "is an existing file" if blocker == path else f"is inside a file ({blocker})"
    if spec is None:
        raise PathError(f"{what} {problem}; {fix}", file=path)
    raise PathError(f"{what} {str(path)!r} {problem}; {fix}", file=spec, field=field)


def refuse_if_written(loaded: LoadedSpec, options: RunOptions) -> None:
    """Refuse a run at once when another process writes its run directory, before the
    datasets and local models `Runner(...)` loads (`Runner.run` takes the lock itself)."""
    run_dir = loaded.output_dir(options.output_dir)
    WriterLock(run_dir, command="assay run", fix=ELSEWHERE).check_free()
