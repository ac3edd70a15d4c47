"""Every check of `assay verify`, in the order a reader trusts them: the files first,
then what is computed from them, then what the run read, then the environment."""

from __future__ import annotations

from pathlib import Path

from assay.audit._environment import check_environment, environment_rows
from assay.audit._inputs import check_datasets, check_prompts
from assay.audit._model import Verification
from assay.audit._records import check_metrics, check_record_files
from assay.audit._requests import check_requests
from assay.core.rundir import METRICS_FILE, read_json
from assay.errors import RunError


def verify_run(run_dir: str | Path) -> Verification:
    """Audit `run_dir` from its own files; nothing is written and no model is called.
    A directory that is not a run (no manifest, no metrics.json) is a `RunError`."""
    from assay.runs.store._manifest import load_manifest
    from assay.runs.store._rundir import read_run_manifest

    run = Path(run_dir)
    manifest = load_manifest(read_run_manifest(run), run)
    if not (run / METRICS_FILE).is_file():
        raise RunError(
            f"no {METRICS_FILE}: nothing to verify the records against "
            f"(`assay recompute {run}` writes it)",
            file=run,
        )
    metrics = read_json(run / METRICS_FILE)
    rows = environment_rows(manifest)
    checks = [
        check_record_files(run, manifest, metrics),
        check_metrics(run, manifest, metrics),
        check_prompts(run, manifest),
        check_datasets(run, manifest),
        check_requests(run, manifest),
        check_environment(rows),
    ]
    return Verification(run_dir=str(run), checks=checks, environment=rows)
