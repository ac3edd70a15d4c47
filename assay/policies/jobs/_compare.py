"""`assay policies compare`: paired deltas of two applied policies of one kind on the same
responses (claim kinds) or questions (evidence_gate). Both policies are
rebuilt from their manifests and decided again; two outputs of different kinds, or built
from different input records, are refused, since their difference would mix the
policies with the data.

Each kind computes its own deltas (`PolicyKind.paired_deltas`), every metric on the same
resamples of the same units for both policies.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay.core.rundir import COMPARE_DIR as RUNDIR_COMPARE
from assay.core.rundir import read_json
from assay.errors import RunError, SpecError
from assay.policies.engine._kind import Links
from assay.policies.engine._run_inputs import RunInputs, read_run, restrict_to_split
from assay.policies.jobs._export import _check_inputs, rebuilt
from assay.policies.jobs._write import MANIFEST, policy_dir

COMPARE_DIR = RUNDIR_COMPARE


def _manifest(run_dir: Path, name: str) -> tuple[dict[str, Any], Path]:
    file = policy_dir(run_dir, name) / MANIFEST
    if not file.is_file():
        raise RunError(f"policy {name!r} was not applied here: apply it first", file=file.parent)
    return read_json(file), file


def _links(manifest: dict[str, Any], run: RunInputs, file: Path) -> Links | None:
    """The gate decisions a chained claim-level policy read (None when not chained)."""
    inputs = manifest["inputs"]
    if not inputs.get("gate_policy"):
        return None
    links: Links = rebuilt(inputs["gate_policy"], file).chain_links(run, inputs["gate_id"])
    return links


def _same_inputs(a: str, b: str, ma: dict[str, Any], mb: dict[str, Any]) -> None:
    ka, kb = ma["policy"].get("kind"), mb["policy"].get("kind")
    if ka != kb:
        raise SpecError(
            f"{a!r} ({ka}) and {b!r} ({kb}) are of different kinds: "
            "compare two policies of one kind"
        )
    sa, sb = ma["inputs"].get("split"), mb["inputs"].get("split")
    if sa != sb:
        raise SpecError(
            f"{a!r} (split {sa}) and {b!r} (split {sb}) were applied to different answers: "
            "apply both with the same --split"
        )
    ha, hb = ma["inputs"]["records_sha256"], mb["inputs"]["records_sha256"]
    differ = sorted(n for n in set(ha) | set(hb) if ha.get(n) != hb.get(n))
    if differ:
        raise SpecError(
            f"{a!r} and {b!r} were built from different inputs ({', '.join(differ)}): "
            "apply both to the same records"
        )


def metric_list(text: str) -> list[str]:
    """`--metrics a,b`: names separated by commas; an empty list or an empty name
    (`""`, `a,,b`) is refused rather than read as "all metrics"."""
    names = [m.strip() for m in text.split(",")]
    if not any(names) or not all(names):
        raise SpecError(f"give metric names separated by commas, got {text!r}", field="--metrics")
    return names


def compare_policies(
    run_dir: Path,
    a: str,
    b: str,
    *,
    metrics: Sequence[str] | None = None,
    resamples: int = 1000,
    random_state: int = 0,
) -> dict[str, Any]:
    """compare.json's content: `a - b` per metric with paired bootstrap intervals."""
    (ma, fa), (mb, fb) = _manifest(run_dir, a), _manifest(run_dir, b)
    _same_inputs(a, b, ma, mb)
    run = read_run(run_dir)
    _check_inputs(run, ma["inputs"]["records_sha256"], fa)
    run = restrict_to_split(run, ma["inputs"].get("split"))  # the answers both decided
    kind = ma["policy"]["kind"]
    policy_a, policy_b = rebuilt(ma["policy"], fa), rebuilt(mb["policy"], fb)
    sides = [(ma["inputs"], _links(ma, run, fa)), (mb["inputs"], _links(mb, run, fb))]
    bootstrap = {"resamples": resamples, "random_state": random_state}
    deltas = policy_a.paired_deltas(policy_b, run, sides, metrics, bootstrap)
    return {
        "a": {"name": a, "policy_sha256": ma["policy"].get("policy_sha256")},
        "b": {"name": b, "policy_sha256": mb["policy"].get("policy_sha256")},
        "kind": kind,
        "inputs": ma["inputs"]["records_sha256"],
        "bootstrap": bootstrap,
        "deltas": [d.model_dump(mode="json") for d in deltas],
    }


def compare_path(run_dir: Path, a: str, b: str) -> Path:
    """policies/<a>/compare/<b>.json: one file per ordered pair, beside a's outputs
    (so applying `a` again clears comparisons made against its old outputs)."""
    return policy_dir(run_dir, a) / COMPARE_DIR / f"{b}.json"


__all__ = ["compare_path", "compare_policies", "metric_list"]
