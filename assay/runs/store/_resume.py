"""Resuming a run: is the spec still the same run, and how to say where an interrupted
run stopped and how to continue it.

A spec is compared by its parsed, normalised fields, not its bytes: editing a comment,
the description or how requests are throttled and retried keeps the run resumable;
changing anything that shapes a record or a metric does not.
"""

from __future__ import annotations

import copy
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from assay.core.manifest import Manifest
from assay.errors import RunError
from assay.redaction import redact
from assay.runs.spec._spec import RunSpec

# Fields that never change a record or a metric: the run's naming and where its files
# go, the failure policy (re-applied to all records at the end) ...
# where local models run does not change their results
# ... spending caps (a run stopped by one resumes with a higher one) ...
TOP_LEVEL_IGNORED = frozenset(
    {
        "name",
        "description",
        "output_dir",
        "failure",
        "executor",
        "records_parquet",
        "bundle_data",
        "max_cost_usd",
        "max_requests",
    }
)
# ... and, in each endpoint block, how requests are sent, authenticated, throttled, retried.
IGNORED_IN_BLOCKS = frozenset(
    {
        "api_key_env",
        "timeout_s",
        "max_concurrency",
        "max_attempts",
        "initial_wait_s",
        "max_wait_s",
        "transport",
        "mode",  # online or provider batch: the same requests, records and cache entries
        "batch_poll_s",
        "max_cost_usd",  # caps and prices: what may be sent, not what an answer is
        "input_cost_per_token",
        "output_cost_per_token",
    }
)
MAX_LISTED = 6


def _endpoint_blocks(spec: dict[str, Any]) -> list[Any]:
    """The blocks holding client settings: [defaults], [[judges]], decomposer, verifiers."""
    fact = spec.get("factuality") or {}
    blocks = [spec.get("defaults"), *(spec.get("judges") or [])]
    if isinstance(fact, dict):
        blocks += [fact.get("decomposer"), *(fact.get("verifiers") or [])]
    return [b for b in blocks if isinstance(b, dict)]


def normalised_spec(raw: dict[str, Any]) -> Any:
    """The spec as parsed (defaults filled in), redacted like the manifest's copy, minus
    the fields that cannot change results. A spec that no longer parses is compared as
    written."""
    clean = copy.deepcopy(redact(raw))
    try:
        value: Any = RunSpec.model_validate(clean).model_dump(mode="json")
    except ValidationError:
        value = clean
    if not isinstance(value, dict):
        return value
    for block in _endpoint_blocks(value):
        for key in IGNORED_IN_BLOCKS:
            block.pop(key, None)
    return {k: v for k, v in value.items() if k not in TOP_LEVEL_IGNORED}


def _fmt(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def spec_changes(old: Any, new: Any, path: str = "") -> list[str]:
    """`dotted.path: old → new` for every difference between two normalised specs."""
    if isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for key in sorted(set(old) | set(new), key=str):
            sub = f"{path}.{key}" if path else str(key)
            out += spec_changes(old.get(key), new.get(key), sub)
        return out
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        pairs = enumerate(zip(old, new, strict=True))
        return [c for i, (a, b) in pairs for c in spec_changes(a, b, f"{path}[{i}]")]
    return [] if old == new else [f"{path or 'spec'}: {_fmt(old)} → {_fmt(new)}"]


def check_same_spec(manifest: Manifest, raw: dict[str, Any], sha256: str, where: Path) -> None:
    """Refuse to resume into a run made by a spec whose results-relevant fields differ,
    listing what changed."""
    if manifest.spec_sha256 == sha256:
        return
    changes = (
        spec_changes(normalised_spec(manifest.spec), normalised_spec(raw))
        if "spec" in manifest.model_fields_set
        else ["the spec file (this manifest keeps no copy to compare)"]
    )
    if not changes:
        return
    listed = "; ".join(changes[:MAX_LISTED])
    more = f" (and {len(changes) - MAX_LISTED} more)" if len(changes) > MAX_LISTED else ""
    raise RunError(
        f"run directory was made by a different spec ({listed}{more}); undo the change, "
        "or use another output_dir (or --output-dir) to start a new run",
        file=where,
    )


def check_same_data(manifest: Manifest, datasets: Sequence[Any]) -> None:
    """Refuse to resume when a dataset changed since the run started (each stage
    checks its own; the manifest lists pair, items and answer datasets)."""
    old = {d.name: d.sha256 for d in manifest.datasets}
    if manifest.factuality is not None:
        old.update({d.name: d.sha256 for d in manifest.factuality.datasets})
    for ds in datasets:
        if old.get(ds.name) not in (None, ds.sha256):
            raise RunError(
                f"dataset {ds.name!r} changed since this run started (sha256 differs)",
                file=ds.path,
            )


def check_same_versions(manifest: Manifest, verifiers: Sequence[Any], where: Path) -> None:
    """Refuse to resume when a verifier's code version changed since the run started: its
    records (scored pairs, labels) are not the same in two versions, and a run must not
    mix them. The spec can be unchanged, so `check_same_spec` alone does not see it."""
    if manifest.factuality is None:
        return
    before = {str(v.get("id")): v.get("version") for v in manifest.factuality.verifiers}
    for verifier in verifiers:
        old, now = before.get(verifier.id), getattr(verifier, "version", None)
        if old is not None and now is not None and str(old) != str(now):
            raise RunError(
                f"verifier {verifier.id!r} is version {now} now; this run's records were made "
                f"by version {old}: use another output_dir (or --output-dir) to start a new run",
                file=where,
            )


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM stopped a run; what was saved is on disk and resumable."""

    def __init__(self, run_dir: str, saved: int, planned: int, verifications: int | None) -> None:
        self.run_dir = run_dir
        self.saved = saved
        self.planned = planned
        self.verifications = verifications
        super().__init__(f"interrupted: {saved}/{planned} judgments saved in {run_dir}")

    def summary(self, resume: str) -> str:
        parts = []
        if self.planned or self.verifications is None:
            parts.append(f"{self.saved}/{self.planned} judgments")
        if self.verifications is not None:
            parts.append(f"{self.verifications} verifications")
        return f"interrupted: {' and '.join(parts)} saved in {self.run_dir}; resume with: {resume}"


def interrupted_from_manifest(run_dir: Path, manifest: Manifest | None) -> RunInterrupted:
    """The counts the interrupted run wrote into its manifest (none if it never started)."""
    m = manifest or Manifest()
    verifications = m.factuality.recorded_verifications if m.factuality is not None else None
    return RunInterrupted(
        str(run_dir),
        m.recorded_judgments or 0,
        m.planned_judgments or 0,
        verifications,
    )


def resume_command(
    spec: str,
    run_dir: str,
    *,
    cache_dir: str | None = None,
    no_cache: bool = False,
    retry_errors: bool = False,
    max_cost_usd: float | None = None,
    max_requests: int | None = None,
) -> str:
    """The `assay run` command line that continues this run with the same settings (and
    the spending caps given)."""
    args = ["assay", "run", spec, "--output-dir", run_dir]
    if cache_dir:
        args += ["--cache-dir", cache_dir]
    if no_cache:
        args.append("--no-cache")
    if retry_errors:
        args.append("--retry-errors")
    if max_cost_usd is not None:
        args += ["--max-cost-usd", f"{max_cost_usd:g}"]
    if max_requests is not None:
        args += ["--max-requests", str(max_requests)]
    return shlex.join(args)
