"""What a run report shows of the policies applied to a run, as typed data.

Read from `policies/<name>/` alone — manifest, metrics.json and the record files — plus,
for the risk–coverage curve and the fail_closed sample renderings, the run's own records
(never a model call). The report package renders this data; it never reads policy files
itself, so what "a policy's metrics" means lives here, beside the policies.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, computed_field

from assay.core.rundir import CLAIMS_FILE, GATE_DECISIONS_FILE, RESPONSES_FILE, iter_rows
from assay.errors import AssayError
from assay.policies.engine._kind import kind_class
from assay.policies.engine._results import Sample
from assay.policies.jobs._write import MANIFEST, METRICS, POLICIES_DIR
from assay.policies.report._curves import Curve, RunCache, curve_of

STAGING_PREFIX = "."  # `.<name>.partial`: a policy being written, not an applied one
_MIX_FILES = (
    (RESPONSES_FILE, "response outcome", "outcome"),
    (GATE_DECISIONS_FILE, "gate outcome", "outcome"),
    (CLAIMS_FILE, "claim decision", "decision"),
)


class MetricRow(BaseModel):
    """One metric of metrics.json as recorded: counts, exact value, interval, null reason."""

    model_config = ConfigDict(frozen=True)

    name: str
    value: float | None
    numerator: int
    denominator: int
    ci: tuple[float, float] | None = None
    ci_method: str | None = None
    null_reason: str | None = None


class MixRow(BaseModel):
    """How often one outcome (or claim decision) occurs among the policy's records."""

    model_config = ConfigDict(frozen=True)

    of: str  # "response outcome" | "gate outcome" | "claim decision"
    label: str
    count: int
    total: int

    @computed_field  # type: ignore[prop-decorator]
    @property
    def share(self) -> float:
        return self.count / self.total if self.total else 0.0


class PolicyReport(BaseModel):
    """One applied policy as every report format shows it; `warnings` say what is off."""

    model_config = ConfigDict(frozen=True)

    name: str
    kind: str | None = None
    version: int | None = None
    policy_sha256: str | None = None
    reads: str | None = None  # "verifier X" / "gate Y", chained: "… after gate Z"
    thresholds: dict[str, str] = {}
    metrics: list[MetricRow] = []
    mix: list[MixRow] = []
    n_refused: int | None = None
    curve: Curve | None = None
    curve_note: str | None = None
    samples: list[Sample] = []
    warnings: list[str] = []

    @property
    def short_sha(self) -> str:
        return (self.policy_sha256 or "")[:12]


def _read_json(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return data


def _is_ratio(value: Any) -> bool:
    return isinstance(value, dict) and {"numerator", "denominator", "value"} <= value.keys()


def metric_rows(metrics: dict[str, Any]) -> list[MetricRow]:
    """Every ratio of metrics.json: top-level ones (claim_selective) and those under
    `metrics` (evidence_gate, fail_closed), in the file's (sorted) order."""
    nested = metrics.get("metrics")
    found = {**metrics, **(nested if isinstance(nested, dict) else {})}
    return [MetricRow.model_validate({**v, "name": k}) for k, v in found.items() if _is_ratio(v)]


def _mix(folder: Path) -> list[MixRow]:
    rows: list[MixRow] = []
    for file, of, field in _MIX_FILES:
        path = folder / file
        if not path.is_file():
            continue
        counts = Counter(str(r.get(field)) for r in iter_rows(path))
        total = sum(counts.values())
        rows += [MixRow(of=of, label=k, count=n, total=total) for k, n in sorted(counts.items())]
    return rows


def _stale_outputs(folder: Path, outputs: dict[str, str]) -> list[str]:
    """Output files whose bytes no longer hash to what the manifest recorded."""
    stale = []
    for name, digest in sorted(outputs.items()):
        path = folder / name
        if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            stale.append(name)
    return stale


def _thresholds(kind: str, config: dict[str, Any]) -> dict[str, str]:
    """The values a reader compares policies by (thresholds, selector/mode, alpha), as
    the kind names them; none for a kind not registered in this process."""
    found = kind_class(kind)
    return found.report_thresholds(config) if found is not None else {}


def _samples(folder: Path, manifest: dict[str, Any], cache: RunCache) -> list[Any]:
    """The kind's sample renderings of the applied policy ([] for most kinds)."""
    found = kind_class(str((manifest.get("policy") or {}).get("kind")))
    return found.sample_renderings(folder, cache) if found is not None else []


def _reads(inputs: dict[str, Any]) -> str | None:
    parts = [f"verifier {v}" for v in inputs.get("verifier_ids") or []]
    gate = inputs.get("gate_id")
    chained = (inputs.get("gate_policy") or {}).get("name")
    if gate and chained:
        parts.append(f"after {chained} (gate {gate})")
    elif gate:
        parts.append(f"gate {gate}")
    return ", ".join(parts) or None


def _identity(name: str, manifest: dict[str, Any]) -> dict[str, Any]:
    section = manifest.get("policy") or {}
    kind = section.get("kind")
    kind = str(kind) if kind is not None else None
    return {
        "name": name,
        "kind": kind,
        "version": section.get("version"),
        "policy_sha256": section.get("policy_sha256"),
        "reads": _reads(manifest.get("inputs") or {}),
        "thresholds": _thresholds(kind or "", section.get("config") or {}),
    }


def policy_report(
    run_dir: Path, folder: Path, cache: RunCache, *, charts: bool = True
) -> PolicyReport:
    """One policy folder; a missing or unreadable file is a warning, never a crash.
    `charts=False` skips the curve and the sample renderings (the run's records are
    then never read): the text formats show neither."""
    name = folder.name
    try:
        manifest = _read_json(folder / MANIFEST)
    except (OSError, ValueError) as exc:
        return PolicyReport(name=name, warnings=[f"{MANIFEST} unreadable ({exc}): apply again"])
    warnings = []
    stale = _stale_outputs(folder, manifest.get("outputs") or {})
    if stale:
        warnings.append(
            f"{', '.join(stale)} changed since the policy was applied "
            "(sha256 differs from its manifest): apply it again"
        )
    try:
        metrics = _read_json(folder / METRICS)
        rows, mix = metric_rows(metrics), _mix(folder)
    except (AssayError, OSError, ValueError, TypeError) as exc:
        warnings.append(f"cannot read the outputs ({exc})")
        return PolicyReport(**_identity(name, manifest), warnings=warnings)
    curve, note = curve_of(run_dir, folder, manifest, metrics, cache) if charts else (None, None)
    try:
        samples = _samples(folder, manifest, cache) if charts and not stale else []
    except (AssayError, OSError, ValueError) as exc:
        samples, warnings = [], [*warnings, f"no sample renderings ({exc})"]
    return PolicyReport(
        **_identity(name, manifest),
        metrics=rows,
        mix=mix,
        n_refused=metrics.get("n_refused"),
        curve=curve,
        curve_note=note,
        samples=samples,
        warnings=warnings,
    )


def policy_reports(run_dir: Path, *, charts: bool = True) -> list[PolicyReport]:
    """Every policy applied under RUN_DIR/policies/, by name; [] when none was."""
    root = run_dir / POLICIES_DIR
    if not root.is_dir():
        return []
    folders = [
        p for p in sorted(root.iterdir()) if p.is_dir() and not p.name.startswith(STAGING_PREFIX)
    ]
    cache = RunCache(run_dir)
    return [policy_report(run_dir, f, cache, charts=charts) for f in folders]


__all__ = ["MetricRow", "MixRow", "PolicyReport", "metric_rows", "policy_report", "policy_reports"]
