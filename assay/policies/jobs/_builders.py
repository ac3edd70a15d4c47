"""The built-in policy kinds' builders, by kind name. Alone here so `_custom` (which
refuses a user kind named like a built-in one) need not import `_spec`, which imports
`_custom` to build user kinds."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

# kind -> (block, file) -> the policy object; the kinds' modules are imported on use.
Builder = Callable[[Mapping[str, Any], str], Any]


def _claim_selective(block: Mapping[str, Any], file: str) -> Any:
    from assay.policies.claim_selective._policy import ClaimSelectivePolicy

    return ClaimSelectivePolicy(block, file=file)


def _evidence_gate(block: Mapping[str, Any], file: str) -> Any:
    from assay.policies.evidence_gate._config import EvidenceGateConfig
    from assay.policies.evidence_gate._policy import EvidenceGatePolicy

    return EvidenceGatePolicy(EvidenceGateConfig.parse(block, file=file))


def _fail_closed(block: Mapping[str, Any], file: str) -> Any:
    from assay.policies.fail_closed._policy import FailClosedPolicy

    return FailClosedPolicy.from_spec(dict(block), file=file)


BUILDERS: dict[str, Builder] = {
    "claim_selective": _claim_selective,
    "evidence_gate": _evidence_gate,
    "fail_closed": _fail_closed,
}
