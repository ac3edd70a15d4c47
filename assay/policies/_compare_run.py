"""`assay policies compare`: paired deltas of two applied claim_selective policies on
the same responses (§2.7, §5.5). Both policies are rebuilt from their manifests and
decided again; two outputs built from different input records are refused, since their
difference would mix the policies with the data.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from assay.core.rundir import read_json
from assay.errors import RunError, SpecError
from assay.policies._apply_write import MANIFEST, policy_dir
from assay.policies._export import _check_inputs, _rebuilt
from assay.policies._load_run import RunInputs, read_run

COMPARE_DIR = "compare"


def _manifest(run_dir: Path, name: str) -> tuple[dict[str, Any], Path]:
    file = policy_dir(run_dir, name) / MANIFEST
    if not file.is_file():
        raise RunError(f"policy {name!r} was not applied here: apply it first", file=file.parent)
    manifest = read_json(file)
    kind = manifest["policy"].get("kind")
    if kind != "claim_selective":
        raise SpecError(f"compare is built for claim_selective; {name!r} is a {kind}")
    return manifest, file


def _decisions(manifest: dict[str, Any], run: RunInputs, file: Path) -> tuple[Any, Any]:
    """The policy a manifest describes and its decisions on the run's records."""
    from assay.policies._load_cs import cs_inputs
    from assay.policies._load_gate import chain_links

    section, inputs = manifest["policy"], manifest["inputs"]
    policy = _rebuilt(section, "claim_selective", file)
    links = None
    if inputs.get("gate_policy"):
        gate = _rebuilt(inputs["gate_policy"], "evidence_gate", file)
        links = chain_links(gate, run, inputs["gate_id"])
    verifier = inputs["verifier_ids"][0]
    return policy, policy.decide(cs_inputs(run, verifier, links))


def _same_inputs(a: str, b: str, ma: dict[str, Any], mb: dict[str, Any]) -> None:
    ha, hb = ma["inputs"]["records_sha256"], mb["inputs"]["records_sha256"]
    differ = sorted(n for n in set(ha) | set(hb) if ha.get(n) != hb.get(n))
    if differ:
        raise SpecError(
            f"{a!r} and {b!r} were built from different inputs ({', '.join(differ)}): "
            "apply both to the same records"
        )


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
    from assay.policies._cs_compare import paired_deltas
    from assay.policies._cs_metrics import METRIC_NAMES

    (ma, fa), (mb, fb) = _manifest(run_dir, a), _manifest(run_dir, b)
    _same_inputs(a, b, ma, mb)
    run = read_run(run_dir)
    _check_inputs(run, ma["inputs"]["records_sha256"], fa)
    pol_a, dec_a = _decisions(ma, run, fa)
    pol_b, dec_b = _decisions(mb, run, fb)
    standard = pol_a.config.certificate_standard
    if pol_b.config.certificate_standard != standard:
        raise SpecError(f"{a!r} and {b!r} use different certificate standards: uccr_cert differs")
    deltas = paired_deltas(
        dec_a,
        dec_b,
        metrics=list(metrics or METRIC_NAMES),
        standard=standard,
        resamples=resamples,
        random_state=random_state,
    )
    return {
        "a": {"name": a, "policy_sha256": ma["policy"].get("policy_sha256")},
        "b": {"name": b, "policy_sha256": mb["policy"].get("policy_sha256")},
        "inputs": ma["inputs"]["records_sha256"],
        "bootstrap": {"resamples": resamples, "random_state": random_state},
        "deltas": [d.model_dump(mode="json") for d in deltas],
    }


def compare_path(run_dir: Path, a: str, b: str) -> Path:
    """policies/<a>/compare/<b>.json: one file per ordered pair, beside a's outputs
    (so applying `a` again clears comparisons made against its old outputs)."""
    return policy_dir(run_dir, a) / COMPARE_DIR / f"{b}.json"


__all__ = ["compare_path", "compare_policies"]
