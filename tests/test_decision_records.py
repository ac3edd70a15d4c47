"""The policy decision records (one claim/response record contract in `core`).

The field order of every record is pinned as it was before the contract existed: a dump
lists fields in declaration order (base-class fields first), so moving a field into a
shared base would silently reorder what `model_dump` and every non-canonical writer
shows. These tests fail if that happens.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from assay.core.decisions import (
    ClaimDecision,
    ClaimDecisionRecord,
    ResponseDecisionRecord,
    ResponseOutcome,
)
from assay.core.records import ClaimRecord as RunClaimRecord
from assay.policies import claim_selective, fail_closed
from assay.policies.claim_selective import _records as cs
from assay.policies.claim_selective._inputs import ClaimInput, ResponseInput
from assay.policies.custom._guard import GuardedClaim, GuardedResponse
from assay.policies.custom._records import CONTRACT as CUSTOM_CONTRACT
from assay.policies.custom._records import records as custom_records
from assay.policies.fail_closed import _records as fc

CS_CLAIM = (
    "policy_id", "policy_kind", "policy_version", "policy_sha256", "reference", "dataset",
    "answer_id", "claim_id", "claim", "verifier_id", "verification_status",
    "verification_ok", "pooled", "native", "decision", "reason", "family", "thresholds",
    "critical", "required", "claim_type", "links", "certificate_valid", "priors",
    "ignored_references", "gold_status", "gold_usable", "correct",
)  # fmt: skip
CS_RESPONSE = (
    "policy_id", "policy_kind", "policy_version", "policy_sha256", "reference", "dataset",
    "answer_id", "native", "outcome", "reason", "n_claims", "status_counts", "family",
    "intent", "source", "claim_type", "split", "priors", "gate", "gold_action",
    "action_correct",
)  # fmt: skip
FC_CLAIM = (
    "dataset", "answer_id", "question_id", "claim_id", "claim_index", "policy_id",
    "policy_kind", "policy_version", "policy_sha256", "tau_entail", "tau_contradict",
    "verification_status", "native", "decision", "reason", "max_entail", "max_contradict",
    "mse", "mse_score", "evidence", "contradicting", "spans_scored", "n_pairs_recorded",
    "n_pairs_scored", "truncated", "atomicity_flags", "unsupported_by_design", "gold",
    "correct",
)  # fmt: skip
FC_RESPONSE = (
    "dataset", "answer_id", "question_id", "policy_id", "policy_kind", "policy_version",
    "policy_sha256", "native", "outcome", "reason", "n_claims", "n_verified",
    "n_unverified", "n_blocked", "n_pairs_used", "rendered", "not_verified", "gate",
    "gold_action", "action_correct",
)  # fmt: skip
ROOT = Path(__file__).resolve().parents[1]
RUN_CLAIM = (
    "claim_type", "critical", "required", "gold_status", "gold_usable",
    "unsupported_by_design", "model", "prompt_id", "prompt_version", "prompt_sha256",
    "dataset", "answer_id", "sentence_id", "claim_id", "claim", "span", "decomposer_id",
    "gold_label",
)  # fmt: skip
CUSTOM_CLAIM = (
    "policy_id", "kind", "policy_version", "policy_sha256", "dataset", "answer_id",
    "claim_id", "decision", "reason", "overridden", "verification_status", "critical",
    "gold_status",
)  # fmt: skip
CUSTOM_RESPONSE = (
    "policy_id", "kind", "policy_version", "policy_sha256", "dataset", "answer_id",
    "outcome", "reason", "gold_action", "split", "n_claims",
)  # fmt: skip


def test_record_fields_keep_their_order() -> None:
    assert tuple(cs.ClaimSelectiveClaimRecord.model_fields) == CS_CLAIM
    assert tuple(cs.ClaimSelectiveResponseRecord.model_fields) == CS_RESPONSE
    assert tuple(fc.FailClosedClaimRecord.model_fields) == FC_CLAIM
    assert tuple(fc.FailClosedResponseRecord.model_fields) == FC_RESPONSE
    assert tuple(RunClaimRecord.model_fields) == RUN_CLAIM


class _Policy:
    name, kind, version, sha256 = "mine", "min_support", 2, "ab" * 32


def _guarded() -> GuardedResponse:
    ok = {"verifier_id": "v", "status": "ok", "pairs": []}
    claim = ClaimInput.model_validate(
        {"claim_id": "c1", "verification": ok, "gold_status": "certified"}
    )
    response = ResponseInput.model_validate(
        {"dataset": "d", "answer_id": "a1", "claims": [], "gold_action": "full", "split": "dev"}
    )
    said = GuardedClaim(
        claim=claim, decision=ClaimDecision.WITHHOLD, reason="r", overridden=ClaimDecision.ASSERT
    )
    return GuardedResponse(
        response=response, claims=[said], outcome=ResponseOutcome.ABSTAIN, reason="none"
    )


def test_user_kind_records_keep_their_keys_values_and_order() -> None:
    found: dict[str, list[dict[str, Any]]] = custom_records(_Policy(), [_guarded()])
    (claim,) = found["claims.jsonl"]
    (response,) = found["responses.jsonl"]
    assert tuple(claim) == CUSTOM_CLAIM
    assert tuple(response) == CUSTOM_RESPONSE
    stamp = {"policy_id": "mine", "kind": "min_support", "policy_version": 2}
    assert claim == {
        **stamp, "policy_sha256": "ab" * 32, "dataset": "d", "answer_id": "a1",
        "claim_id": "c1", "decision": "withhold", "reason": "r", "overridden": "assert",
        "verification_status": "ok", "critical": True, "gold_status": "certified",
    }  # fmt: skip
    assert response == {
        **stamp, "policy_sha256": "ab" * 32, "dataset": "d", "answer_id": "a1",
        "outcome": "abstain", "reason": "none", "gold_action": "full", "split": "dev",
        "n_claims": 1,
    }  # fmt: skip
    assert all(type(v) in (str, int, bool) for v in claim.values())


def _members(protocol: type) -> set[str]:
    return {n for k in protocol.__mro__ for n, v in vars(k).items() if isinstance(v, property)}


def test_every_kind_follows_the_core_contract() -> None:
    claim, response = _members(ClaimDecisionRecord), _members(ResponseDecisionRecord)
    assert {"dataset", "answer_id", "claim_id", "decision", "reason", "policy_kind"} <= claim
    assert {"dataset", "answer_id", "outcome", "reason", "policy_sha256"} <= response
    for claim_record, response_record in (cs.CONTRACT, fc.CONTRACT, CUSTOM_CONTRACT):
        assert claim <= set(claim_record.model_fields)
        assert response <= set(response_record.model_fields)


def test_one_class_per_record_name() -> None:
    """A policy record is named after its kind; the run's ClaimRecord is the only one."""
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "assay").rglob("*.py")):
        for name in re.findall(r"^class (\w*Record)\b", path.read_text(), re.MULTILINE):
            found.setdefault(name, []).append(str(path.relative_to(ROOT)))
    assert found["ClaimRecord"] == ["assay/core/records.py"]
    assert "ResponseRecord" not in found
    assert all(len(paths) == 1 for paths in found.values()), found


def test_the_decision_vocabulary_has_one_home() -> None:
    found = []
    for path in sorted((ROOT / "assay").rglob("*.py")):
        text = path.read_text()
        names = re.findall(r"^class (ClaimDecision|ResponseOutcome|GateOutcome)\b", text, re.M)
        found += [(name, str(path.relative_to(ROOT))) for name in names]
    assert sorted(found) == [
        ("ClaimDecision", "assay/core/decisions.py"),
        ("GateOutcome", "assay/core/decisions.py"),
        ("ResponseOutcome", "assay/core/decisions.py"),
    ]


def test_old_public_names_are_aliases() -> None:
    assert claim_selective.ClaimRecord is cs.ClaimSelectiveClaimRecord
    assert claim_selective.ResponseRecord is cs.ClaimSelectiveResponseRecord
    assert fail_closed.ClaimRecord is fc.FailClosedClaimRecord
    assert fail_closed.ResponseRecord is fc.FailClosedResponseRecord
