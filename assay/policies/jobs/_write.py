"""Writing one applied policy under `policies/<name>/`:
canonical JSON only, a manifest that names the inputs by the hashes of the records
consumed and every output by its sha256, and no time, host or absolute path in anything
but `run_info.json`. Files are written to a sibling folder first and moved into place, so
a failure never leaves a half-written policy folder.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from assay._version import __version__
from assay.core.rundir import MANIFEST_FILE, METRICS_FILE, RUN_INFO_FILE
from assay.core.rundir import POLICIES_DIR as RUNDIR_POLICIES
from assay.policies.engine._apply_common import Outputs, Settings
from assay.policies.engine._canonical import (
    canonical_json,
    write_canonical_json,
    write_canonical_jsonl,
)
from assay.policies.engine._run_inputs import RunInputs

SCHEMA_VERSION = 1
POLICIES_DIR = RUNDIR_POLICIES
METRICS = METRICS_FILE
MANIFEST = MANIFEST_FILE
RUN_INFO = RUN_INFO_FILE


def policy_dir(run_dir: Path, name: str) -> Path:
    return run_dir / POLICIES_DIR / name


def manifest_of(
    policy: Any,
    run: RunInputs,
    outputs: Outputs,
    settings: Settings,
    files: dict[str, str],
) -> dict[str, Any]:
    """The policy's manifest: what was applied, to which records, with what result files."""
    return {
        "schema_version": SCHEMA_VERSION,
        "assay_version": __version__,
        "policy": {
            "name": policy.name,
            "kind": policy.kind,
            "version": policy.version,
            "config": policy.describe(),
            "policy_sha256": policy_sha256(policy),
        },
        "inputs": {
            "run_id": run.run_id,
            "split": run.split,
            "datasets": run.datasets,
            "verifier_ids": [outputs.verifier_id] if outputs.verifier_id else [],
            "gate_id": outputs.gate_id,
            "gate_policy": outputs.gate_policy,
            "records_sha256": dict(sorted(outputs.consumed.items())),
            **outputs.provenance,
        },
        "lexicons": dict(sorted(outputs.lexicons.items())),
        "bootstrap": settings.model_dump(mode="json", exclude={"by", "source_missing"}),
        "slices_by": settings.by,
        "source_missing": settings.source_missing,
        "counts": outputs.counts,
        "outputs": dict(sorted(files.items())),
    }


def policy_sha256(policy: Any) -> str:
    """The kind's own `policy_sha256` (each kind defines what its hash covers)."""
    found = getattr(policy, "sha256", None)
    if isinstance(found, str):
        return found
    from assay.policies.engine._canonical import canonical_sha256

    return canonical_sha256({"kind": policy.kind, "config": policy.describe()})


def write_policy(
    run_dir: Path,
    policy: Any,
    run: RunInputs,
    outputs: Outputs,
    settings: Settings,
) -> Path:
    """Write every output file and the manifest; returns the policy folder."""
    final = policy_dir(run_dir, policy.name)
    staging = final.with_name(f".{policy.name}.partial")
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    files = {
        name: write_canonical_jsonl(staging / name, records)
        for name, records in sorted(outputs.records.items())
    }
    files[METRICS] = write_canonical_json(staging / METRICS, outputs.metrics)
    write_canonical_json(staging / MANIFEST, manifest_of(policy, run, outputs, settings, files))
    info = {"applied_at": datetime.now(UTC).isoformat(), "warnings": outputs.warnings}
    (staging / RUN_INFO).write_text(canonical_json(info) + "\n", encoding="utf-8")
    _swap_in(staging, final)
    return final


def _swap_in(staging: Path, final: Path) -> None:
    """Put `staging` in place of `final` by renames, removing the old folder only once
    the new one is there: a reader (`assay report`) never finds the policy missing or
    half-deleted (`.`-prefixed folders are not applied policies to a reader)."""
    if not final.exists():
        staging.rename(final)
        return
    old = final.with_name(f".{final.name}.old")
    if old.exists():
        shutil.rmtree(old)
    final.rename(old)
    staging.rename(final)
    shutil.rmtree(old)


__all__ = [
    "MANIFEST",
    "METRICS",
    "POLICIES_DIR",
    "RUN_INFO",
    "SCHEMA_VERSION",
    "manifest_of",
    "policy_dir",
    "policy_sha256",
    "write_policy",
]
