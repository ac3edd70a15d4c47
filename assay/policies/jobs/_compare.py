"""`assay policies compare`: paired deltas of two applied policies of one kind on the same
responses (claim kinds) or questions (evidence_gate) (§2.7.7, §5.5). Both policies are
rebuilt from their manifests and decided again; two outputs of different kinds, or built
from different input records, are refused, since their difference would mix the
policies with the data.

claim_selective keeps its own `paired_deltas`; fail_closed and evidence_gate hand their
per-response (per-question) counts to `paired_delta_interval`, every metric on the same
resamples of the same units for both policies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from assay.core.rundir import COMPARE_DIR as RUNDIR_COMPARE
from assay.core.rundir import read_json
from assay.errors import RunError, SpecError
from assay.policies.engine._numbers import Ratio
from assay.policies.engine._run_inputs import RunInputs, read_run, restrict_to_split
from assay.policies.jobs._export import _check_inputs, _rebuilt
from assay.policies.jobs._write import MANIFEST, policy_dir

COMPARE_DIR = RUNDIR_COMPARE


def _manifest(run_dir: Path, name: str) -> tuple[dict[str, Any], Path]:
    file = policy_dir(run_dir, name) / MANIFEST
    if not file.is_file():
        raise RunError(f"policy {name!r} was not applied here: apply it first", file=file.parent)
    return read_json(file), file


def _links(manifest: dict[str, Any], run: RunInputs, file: Path) -> Any:
    """The gate decisions a chained claim-level policy read (None when not chained)."""
    from assay.policies.evidence_gate._load import chain_links

    inputs = manifest["inputs"]
    if not inputs.get("gate_policy"):
        return None
    gate = _rebuilt(inputs["gate_policy"], "evidence_gate", file)
    return chain_links(gate, run, inputs["gate_id"])


def _policy(manifest: dict[str, Any], file: Path) -> Any:
    section = manifest["policy"]
    return _rebuilt(section, section["kind"], file)


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


def _chosen(metrics: Sequence[str] | None, known: Sequence[str]) -> list[str]:
    unknown = [m for m in metrics or () if m not in known]
    if unknown:
        raise SpecError(
            f"unknown metric {unknown[0]!r}; known: {', '.join(known)}", field="--metrics"
        )
    return list(metrics or known)


class Side:
    """One policy of the comparison: its manifest, the rebuilt policy and its file."""

    def __init__(self, manifest: dict[str, Any], file: Path) -> None:
        self.manifest, self.file = manifest, file
        self.policy = _policy(manifest, file)


Units = tuple[list[Any], dict[str, Ratio], dict[str, Any]]  # keys, point values, counts


def _fail_closed_units(side: Side, run: RunInputs) -> Units:
    from assay.policies.fail_closed._load import fc_inputs
    from assay.policies.fail_closed._metrics import fail_closed_metrics, metric_counts

    verifier = side.manifest["inputs"]["verifier_ids"][0]
    decisions = side.policy.decide_all(
        fc_inputs(run, verifier, _links(side.manifest, run, side.file))
    )
    keys = [(d.response.dataset, d.response.answer_id) for d in decisions]
    return keys, fail_closed_metrics(decisions).metrics, metric_counts(decisions)


def _gate_units(side: Side, run: RunInputs) -> Units:
    from assay.policies.evidence_gate._load import gate_inputs
    from assay.policies.evidence_gate._metrics import GateRow, metric_counts, metric_values

    gate_id = side.manifest["inputs"]["gate_id"]
    decisions = side.policy.decide(gate_inputs(run, gate_id))
    rows = [GateRow.of(d) for d in decisions]
    alpha = side.policy.config.alpha_fraction
    counts = metric_counts(rows, alpha)
    values = metric_values(rows, alpha)
    return [(d.dataset, d.question_id) for d in decisions], values, counts


UNITS: dict[str, Callable[[Side, RunInputs], Units]] = {
    "fail_closed": _fail_closed_units,
    "evidence_gate": _gate_units,
}


def _counted_deltas(
    a: Side, b: Side, run: RunInputs, metrics: Sequence[str] | None, bootstrap: dict[str, int]
) -> list[Any]:
    """fail_closed / evidence_gate: each metric's exact a - b with a paired interval."""
    from assay.policies.claim_selective._compare import MetricDelta, point_delta
    from assay.policies.engine._bootstrap import CI_METHOD, paired_delta_interval

    kind = a.manifest["policy"]["kind"]
    keys_a, values_a, counts_a = UNITS[kind](a, run)
    keys_b, values_b, counts_b = UNITS[kind](b, run)
    if keys_a != keys_b:
        raise RunError("the two policies decided different responses: apply both again")
    out = []
    for metric in _chosen(metrics, list(counts_a)):
        interval = paired_delta_interval(counts_a[metric], counts_b[metric], **bootstrap)
        ra, rb = values_a[metric], values_b[metric]
        delta = point_delta(ra, rb)
        out.append(
            MetricDelta(
                metric=metric,
                a=ra,
                b=rb,
                delta=delta,
                ci=interval.ci if delta is not None else None,
                ci_method=CI_METHOD if bootstrap["resamples"] else None,
                n_resamples_valid=interval.n_resamples_valid,
            )
        )
    return out


def _cs_deltas(
    a: Side, b: Side, run: RunInputs, metrics: Sequence[str] | None, bootstrap: dict[str, int]
) -> list[Any]:
    """claim_selective: `paired_deltas` of the two decisions (same certificate standard)."""
    from assay.policies.claim_selective._compare import paired_deltas
    from assay.policies.claim_selective._load import cs_inputs
    from assay.policies.claim_selective._metrics import METRIC_NAMES

    standard = a.policy.config.certificate_standard
    if b.policy.config.certificate_standard != standard:
        names = a.manifest["policy"]["name"], b.manifest["policy"]["name"]
        raise SpecError(
            f"{names[0]!r} and {names[1]!r} use different certificate standards: uccr_cert differs"
        )
    decided = []
    for side in (a, b):
        verifier = side.manifest["inputs"]["verifier_ids"][0]
        inputs = cs_inputs(run, verifier, _links(side.manifest, run, side.file))
        decided.append(side.policy.decide(inputs))
    chosen = _chosen(metrics, METRIC_NAMES)
    return list(
        paired_deltas(decided[0], decided[1], metrics=chosen, standard=standard, **bootstrap)
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
    (ma, fa), (mb, fb) = _manifest(run_dir, a), _manifest(run_dir, b)
    _same_inputs(a, b, ma, mb)
    run = read_run(run_dir)
    _check_inputs(run, ma["inputs"]["records_sha256"], fa)
    run = restrict_to_split(run, ma["inputs"].get("split"))  # the answers both decided
    kind = ma["policy"]["kind"]
    side_a, side_b = Side(ma, fa), Side(mb, fb)
    bootstrap = {"resamples": resamples, "random_state": random_state}
    build = _cs_deltas if kind == "claim_selective" else _counted_deltas
    deltas = build(side_a, side_b, run, metrics, bootstrap)
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
