"""`assay policies export --what audit`: the fail_closed audit objects (§4.7) of an applied
policy, rebuilt from its manifest. Audit records hold the retrieved chunks and every
scored unit, so they are derived on demand rather than stored: the manifest's resolved
configuration rebuilds the same policy, and the run's records must still hash to what
the manifest says was consumed (otherwise the audit would not explain the outputs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.core.rundir import read_json
from assay.errors import RunError, SpecError
from assay.policies.engine._run_inputs import RunInputs, read_run, restrict_to_split
from assay.policies.jobs._spec import PolicySpec
from assay.policies.jobs._write import MANIFEST, policy_dir


def _rebuilt(section: dict[str, Any], kind: str, file: Path) -> Any:
    """The policy a manifest section describes (its `describe()` less the version)."""
    block = {k: v for k, v in section["config"].items() if k != "version"}
    return PolicySpec(name=section["name"], kind=kind, block=block, file=str(file)).build()


def _check_inputs(run: RunInputs, consumed: dict[str, str], file: Path) -> None:
    for name, digest in consumed.items():
        if run.input_sha256.get(name) != digest:
            raise RunError(
                f"{name} changed since the policy was applied: apply it again", file=file
            )


def audit_records(run_dir: Path, name: str) -> list[dict[str, Any]]:
    """One audit object per answer the policy was applied to (its `--split`), in
    (dataset, answer_id) order."""
    from assay.policies.evidence_gate._load import chain_links
    from assay.policies.fail_closed._audit import audit_record
    from assay.policies.fail_closed._load import fc_inputs
    from assay.policies.jobs._apply import fc_context

    file = policy_dir(run_dir, name) / MANIFEST
    manifest = read_json(file)
    section, inputs = manifest["policy"], manifest["inputs"]
    if section.get("kind") != "fail_closed":
        raise SpecError(
            f"audit records are fail_closed's; {name!r} is a {section.get('kind')}", field="--what"
        )
    policy = _rebuilt({"name": section["name"], "config": section["config"]}, "fail_closed", file)
    run = read_run(run_dir)
    _check_inputs(run, inputs["records_sha256"], file)
    run = restrict_to_split(run, inputs.get("split"))  # the answers the policy decided
    links = None
    if inputs.get("gate_policy"):
        gate = _rebuilt(inputs["gate_policy"], "evidence_gate", file)
        links = chain_links(gate, run, inputs["gate_id"])
    verifier = inputs["verifier_ids"][0]
    responses = fc_inputs(run, verifier, links)
    decisions = policy.decide_all(responses)
    gate_id = inputs["gate_id"] if links is not None else None
    return [
        audit_record(
            policy.config, r, d, fc_context(run, verifier, gate_id, (r.dataset, r.answer_id))
        ).model_dump(mode="json")
        for r, d in zip(responses, decisions, strict=True)
    ]


__all__ = ["audit_records"]
