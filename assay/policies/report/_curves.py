"""The risk–coverage curve of an applied policy, for reports.

Read from the policy's `sweep.jsonl` when the user ran `assay policies sweep`; otherwise
computed in-process with the kind's default sweep over the run's records, the policy
rebuilt from its manifest (pure functions, never a model call). Each kind names its own
axes: claim_selective plots critical-claim coverage against critical risk, evidence_gate
coverage against selective risk (gold labels), fail_closed verified coverage (VC)
against 1 − VCP.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from assay.core.rundir import MANIFEST_FILE, SWEEP_FILE, iter_rows
from assay.errors import AssayError
from assay.policies.engine._canonical import canonical_sha256
from assay.policies.engine._kind import kind_class
from assay.policies.engine._results import Axes
from assay.policies.engine._run_inputs import RunInputs, read_run, restrict_to_split

Dump = dict[str, Any]


# evidence_gate's curve summary (docs/reference/policies/evidence-gate.md#aurc)
SUMMARY_KEYS = ("aurc", "aurc_opt", "e_aurc")
ALL_ANSWERS = "all answers"
UNRECORDED = "unrecorded answers"


class CurvePoint(BaseModel):
    model_config = ConfigDict(frozen=True)

    label: str  # the thresholds of the point, e.g. "tau=0.3"
    coverage: float
    risk: float


class Curve(BaseModel):
    """Defined points in sweep order, the applied policy's own point, where from, and
    which answers each was computed on (a sweep may be of one split, the applied point
    of another: `mismatch` then says so)."""

    model_config = ConfigDict(frozen=True)

    axes: Axes
    source: str  # "sweep.jsonl" | "computed (default sweep)"
    points: list[CurvePoint]
    current: CurvePoint | None = None
    n_undefined: int = 0  # sweep points whose coverage or risk is null
    summary: dict[str, float | None] = {}
    sweep_on: str = ALL_ANSWERS  # "all answers" | "split dev" | "unrecorded answers"
    applied_on: str = ALL_ANSWERS
    mismatch: str | None = None  # why the curve and the applied point are not comparable


class RunCache:
    """The run's records, read once per report and shared by every policy."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self._run: RunInputs | None = None

    def run(self, split: str | None = None) -> RunInputs:
        if self._run is None:
            self._run = read_run(self.run_dir)
        return restrict_to_split(self._run, split)


def _ratio_value(point: Dump, name: str) -> float | None:
    metrics = point.get("metrics")
    found = metrics.get(name) if isinstance(metrics, dict) and name in metrics else point.get(name)
    value = found.get("value") if isinstance(found, dict) else found
    return float(value) if isinstance(value, int | float) else None


def _label(point: Dump) -> str:
    """`k=v, …` of the point's thresholds, sorted (sweep.jsonl is canonical JSON)."""
    params = point.get("params")
    source = params if isinstance(params, dict) else point
    return ", ".join(f"{k}={v}" for k, v in sorted(source.items()) if isinstance(v, str))


def to_point(axes: Axes, point: Dump) -> CurvePoint | None:
    """A sweep point on the kind's axes; None when either value is undefined."""
    x, y = _ratio_value(point, axes.x), _ratio_value(point, axes.y)
    if x is None or y is None:
        return None
    return CurvePoint(label=_label(point), coverage=x, risk=1.0 - y if axes.y_complement else y)


def computed_sweep(manifest: Dump, run: RunInputs, file: Path) -> list[Dump]:
    """The kind's default sweep of the policy the manifest describes, on `run`."""
    from assay.policies.jobs._export import _check_inputs, rebuilt

    section, inputs = manifest["policy"], manifest["inputs"]
    _check_inputs(run, inputs["records_sha256"], file)
    policy = rebuilt(section, file)
    links = None
    if inputs.get("gate_policy"):
        links = rebuilt(inputs["gate_policy"], file).chain_links(run, inputs["gate_id"])
    points: list[Dump] = policy.default_curve(run, inputs, links)
    return points


def _sweep_points(folder: Path, manifest: Dump, cache: RunCache) -> tuple[list[Dump], str]:
    path = folder / SWEEP_FILE
    if path.is_file():
        return list(iter_rows(path)), SWEEP_FILE
    run = cache.run((manifest.get("inputs") or {}).get("split"))
    return computed_sweep(manifest, run, folder / MANIFEST_FILE), "computed (default sweep)"


def answers_of(split: Any) -> str:
    """Which answers a split restricts to, as captions say it."""
    return ALL_ANSWERS if split is None else f"split {split}"


def _provenance(raw: list[Dump], source: str, manifest: Dump) -> dict[str, Any]:
    """`sweep_on`, `applied_on` and `mismatch`: a computed curve is on the applied
    policy's own answers; sweep.jsonl names its split and policy_sha256 per point."""
    inputs, section = manifest.get("inputs") or {}, manifest.get("policy") or {}
    applied = answers_of(inputs.get("split"))
    if source != SWEEP_FILE:
        return {"sweep_on": applied, "applied_on": applied, "mismatch": None}
    if any(not {"split", "policy_sha256", "inputs_sha256"} <= p.keys() for p in raw):
        why = (
            f"{SWEEP_FILE} does not record which answers and configuration it was computed "
            "on (an older assay wrote it): run `assay policies sweep` again to compare it "
            "with the applied thresholds"
        )
        return {"sweep_on": UNRECORDED, "applied_on": applied, "mismatch": why}
    swept = answers_of(raw[0]["split"]) if raw else applied
    problems = []
    if swept != applied:
        problems.append(
            f"the curve is on {swept}, the diamond on {applied}: not the same answers "
            "(sweep and apply with the same --split to compare them)"
        )
    shas = {p["policy_sha256"] for p in raw} - {section.get("policy_sha256")}
    if shas:
        problems.append(
            f"the curve is of another configuration (policy_sha256 {min(shas)[:12]}) than "
            f"the applied one ({str(section.get('policy_sha256'))[:12]}): sweep the "
            "applied policy file again"
        )
    records = canonical_sha256(inputs.get("records_sha256") or {})
    if any(p["inputs_sha256"] != records for p in raw):
        problems.append(
            "the curve was computed from other records than the applied policy (the run "
            "changed in between): apply and sweep again"
        )
    return {"sweep_on": swept, "applied_on": applied, "mismatch": "; ".join(problems) or None}


def curve_of(
    run_dir: Path, folder: Path, manifest: Dump, metrics: Dump, cache: RunCache
) -> tuple[Curve | None, str | None]:
    """(curve, None), or (None, why there is none): no defined point, changed inputs…"""
    kind = str((manifest.get("policy") or {}).get("kind"))
    found = kind_class(kind)
    axes = found.curve_axes if found is not None else None
    if axes is None:
        return None, f"no risk–coverage curve for kind {kind!r}"
    try:
        raw, source = _sweep_points(folder, manifest, cache)
    except (AssayError, OSError, ValueError, KeyError, IndexError) as exc:
        return None, f"no risk–coverage curve: {exc}"
    points = [to_point(axes, p) for p in raw]
    defined = [p for p in points if p is not None]
    if not defined:
        why = f"no point of the {len(raw)}-point sweep has both {axes.x_label} and "
        return None, why + f"{axes.y_label} defined (they need gold labels)"
    nested = metrics.get("metrics")
    flat = {**metrics, **(nested if isinstance(nested, dict) else {})}
    summary = {k: _ratio_value(flat, k) for k in SUMMARY_KEYS if k in flat}
    current = to_point(axes, {**flat, "params": {}})
    data = _provenance(raw, source, manifest)
    label = f"applied thresholds, {data['applied_on']}"
    return Curve(
        axes=axes,
        source=source,
        points=defined,
        current=current.model_copy(update={"label": label}) if current else None,
        n_undefined=len(points) - len(defined),
        summary=summary,
        **data,
    ), None


__all__ = [
    "Axes",
    "Curve",
    "CurvePoint",
    "RunCache",
    "answers_of",
    "computed_sweep",
    "curve_of",
]
