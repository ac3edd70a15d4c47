"""`assay policies export --what audit`: the fail_closed audit objects of an applied
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
from assay.policies.engine._kind import kind_class, kinds_with
from assay.policies.engine._run_inputs import RunInputs, read_run, restrict_to_split
from assay.policies.engine._spec import PolicySpec
from assay.policies.jobs._write import MANIFEST, policy_dir


def rebuilt(section: dict[str, Any], file: Path) -> Any:
    """The policy a manifest section describes (its `describe()` less the version). The
    kind is the section's, else its config's (a chain's `gate_policy` names it there)."""
    config = section["config"]
    kind = section.get("kind") or config.get("kind")
    block = {k: v for k, v in config.items() if k != "version"}
    return PolicySpec(name=section["name"], kind=str(kind), block=block, file=str(file)).build()


def _check_inputs(run: RunInputs, consumed: dict[str, str], file: Path) -> None:
    for name, digest in consumed.items():
        if run.input_sha256.get(name) != digest:
            raise RunError(
                f"{name} changed since the policy was applied: apply it again", file=file
            )


def audit_records(run_dir: Path, name: str) -> list[dict[str, Any]]:
    """One audit object per answer the policy was applied to (its `--split`), in
    (dataset, answer_id) order, for a kind that keeps audits (`PolicyKind.audits`)."""
    file = policy_dir(run_dir, name) / MANIFEST
    manifest = read_json(file)
    section, inputs = manifest["policy"], manifest["inputs"]
    found = kind_class(str(section.get("kind")))
    if found is None or not found.audits:
        kinds = ", ".join(kinds_with("audits"))
        raise SpecError(
            f"audit records are {kinds}'s; {name!r} is a {section.get('kind')}", field="--what"
        )
    policy = rebuilt(section, file)
    run = read_run(run_dir)
    _check_inputs(run, inputs["records_sha256"], file)
    run = restrict_to_split(run, inputs.get("split"))  # the answers the policy decided
    links = None
    if inputs.get("gate_policy"):
        links = rebuilt(inputs["gate_policy"], file).chain_links(run, inputs["gate_id"])
    records: list[dict[str, Any]] = policy.audit_records(run, inputs, links)
    return records


__all__ = ["audit_records", "rebuilt"]
