"""The records the claim-selective policy writes: one per claim, one per response,
one certificate per response. All are canonical-JSON ready (no NaN: a score that was not
a finite number is written as null), so `write_canonical_jsonl` writes them as they are.

Each record carries the common vocabulary (`decision`, `outcome`) and the paper's own
names (`native`). The claim and response records follow the decision-record
contract of `assay.core.decisions` (`CONTRACT`); their fields keep the order they were
first written in (the policy stamp first).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from assay.core.answer_fields import GoldAction
from assay.core.decisions import (
    ClaimDecision,
    ClaimDecisionRecord,
    ResponseDecisionRecord,
    ResponseOutcome,
)
from assay.policies.claim_selective._inputs import GateLink, GoldStatus
from assay.policies.engine._canonical import canonical_sha256
from assay.policies.engine._provenance import VerifierInfo

ClaimStatus = Literal["certified", "condition_limited", "conflicting", "omitted"]
NativeAction = Literal["full", "partial", "conflict", "abstain", "refuse"]
LinkRole = Literal["support", "limitation", "conflict", "dosage_label_rescue", "pool"]
ClaimReason = Literal[
    "certified",
    "limitation_downgrade",
    "weak_support",
    "conflict_threshold",
    "insufficient_support",
    "no_evidence",
    "cap_exceeded",
    "missing_verification",
    "verification_not_ok",
    "invalid_score",
    "gate_abstained",
    "gate_refused",
    "express_all",
    "support_gate_passed",
    "support_gate_failed",
]
"""Every `reason` a claim record can carry, so a record with any other one fails to build
(docs/reference/policies/claim-selective.md#reason-codes lists them all)."""
ResponseReason = Literal[
    "all_verifications_failed",
    "no_expressible_claim",
    "material_conflict",
    "all_required_certified",
    "some_required_not_certified",
    "prior:review_downgrade",
    "gate_abstained",
    "gate_refused",
]
"""Every `reason` a response record can carry (the same page lists them)."""

DECISION_OF: dict[str, ClaimDecision] = {
    "certified": ClaimDecision.ASSERT,
    "condition_limited": ClaimDecision.QUALIFY,
    "conflicting": ClaimDecision.DISPUTE,
    "omitted": ClaimDecision.WITHHOLD,
}
OUTCOME_OF: dict[str, ResponseOutcome] = {
    "full": ResponseOutcome.ANSWER_FULL,
    "partial": ResponseOutcome.ANSWER_PARTIAL,
    "conflict": ResponseOutcome.CONFLICT,
    "abstain": ResponseOutcome.ABSTAIN,
    "refuse": ResponseOutcome.REFUSE,
}
EXPRESSED_STATUSES: frozenset[str] = frozenset({"certified", "condition_limited"})


class PolicyStamp(BaseModel):
    """Which policy decided: name, kind, kind version and the hash of its configuration."""

    model_config = ConfigDict(frozen=True)

    policy_id: str
    kind: str = "claim_selective"
    policy_version: int
    policy_sha256: str
    reference: bool = Field(default=False, description="A comparison system, not a policy.")


class Stamped(BaseModel):
    """The policy fields every claim and response record starts with."""

    model_config = ConfigDict(frozen=True)

    policy_id: str
    policy_kind: str = "claim_selective"
    policy_version: int
    policy_sha256: str
    reference: bool = Field(default=False, description="A comparison system, not a policy.")

    @classmethod
    def stamp_fields(cls, stamp: PolicyStamp) -> dict[str, object]:
        return {
            "policy_id": stamp.policy_id,
            "policy_kind": stamp.kind,
            "policy_version": stamp.policy_version,
            "policy_sha256": stamp.policy_sha256,
            "reference": stamp.reference,
        }


class PooledScores(BaseModel):
    """S_sup, S_conf, S_lim: each coordinate's maximum over the claim's pool."""

    model_config = ConfigDict(frozen=True)

    s_support: float
    s_conflict: float
    s_limitation: float


class EvidenceLink(BaseModel):
    """A passage behind a claim's status, with the thresholds it was judged by."""

    model_config = ConfigDict(frozen=True)

    passage_id: str | None
    context: list[str] | None = None
    doc_id: str | None = None
    page: int | str | None = None
    span_id: str | None = None
    roles: list[LinkRole]
    s_support: float | None
    s_conflict: float | None
    s_limitation: float | None
    relation_source: str
    thresholds: dict[str, str]


class IgnoredReference(BaseModel):
    """Evidence that is not evidence: a cited passage with no score record, or a
    scored passage outside the response's evidence pool or the gate's E(q)."""

    model_config = ConfigDict(frozen=True)

    passage_id: str
    reason: Literal["unscored_reference", "outside_evidence_pool", "outside_gate_evidence"]


class ClaimSelectiveClaimRecord(Stamped):
    """One line of `policies/<name>/claims.jsonl` (a `core.decisions.ClaimDecisionRecord`)."""

    dataset: str
    answer_id: str
    claim_id: str
    claim: str | None = None
    verifier_id: str | None
    verification_status: str = Field(description="ok | parse_error | ... | missing")
    verification_ok: bool = Field(description="Verification ok and every score valid.")
    pooled: PooledScores | None
    native: ClaimStatus
    decision: ClaimDecision
    reason: ClaimReason
    family: str | None
    thresholds: dict[str, str]
    critical: bool
    required: bool
    claim_type: str | None = None
    links: list[EvidenceLink] = Field(default_factory=list)
    certificate_valid: bool | None = Field(
        default=None, description="Expressed claims: under the policy's certificate standard."
    )
    priors: list[str] = Field(default_factory=list)
    ignored_references: list[IgnoredReference] = Field(default_factory=list)
    gold_status: GoldStatus | None = None
    gold_usable: bool | None = None
    correct: bool | None = Field(
        default=None, description="native == gold_status; never true when the inputs failed."
    )

    @property
    def expressed(self) -> bool:
        return self.native in EXPRESSED_STATUSES


class ClaimSelectiveResponseRecord(Stamped):
    """One line of `policies/<name>/responses.jsonl` (a `ResponseDecisionRecord`)."""

    dataset: str
    answer_id: str
    native: NativeAction
    outcome: ResponseOutcome
    reason: ResponseReason
    n_claims: int
    status_counts: dict[str, int]
    family: str | None
    intent: str | None = None
    source: str | None = None
    claim_type: str | None = None
    split: str | None = None
    priors: list[str] = Field(default_factory=list)
    gate: GateLink | None = None
    gold_action: GoldAction | None = None
    action_correct: bool | None = Field(default=None, description="Never true for refuse.")

    @property
    def key(self) -> tuple[str, str]:
        return (self.dataset, self.answer_id)


CONTRACT: tuple[type[ClaimDecisionRecord], type[ResponseDecisionRecord]] = (
    ClaimSelectiveClaimRecord,
    ClaimSelectiveResponseRecord,
)
"""This kind's claim and response records, as the core contract they follow (mypy checks)."""


class ClaimCertificate(BaseModel):
    """A claim's part of its response's certificate: its status and evidence links."""

    model_config = ConfigDict(frozen=True)

    claim_id: str
    native: ClaimStatus
    decision: ClaimDecision
    reason: ClaimReason
    links: list[EvidenceLink]
    certificate_valid: bool | None


class CertificateRecord(BaseModel):
    """One line of `policies/<name>/certificates.jsonl`; `certificate_sha256` is the sha256
    of the canonical JSON of every other field, so a reader can verify it."""

    model_config = ConfigDict(frozen=True)

    dataset: str
    answer_id: str
    policy: PolicyStamp
    family: str | None
    thresholds: dict[str, str]
    certificate_standard: dict[str, str]
    native: NativeAction
    outcome: ResponseOutcome
    input_sha256: str = Field(description="sha256 of the canonical response input consumed.")
    claims: list[ClaimCertificate]
    verifier: VerifierInfo | None = Field(
        default=None, description="The verifier and model behind the scores (from the run)."
    )
    certificate_sha256: str = ""

    def sealed(self) -> CertificateRecord:
        """This certificate with its `certificate_sha256` filled in."""
        body = self.model_dump(mode="json", exclude={"certificate_sha256"})
        return self.model_copy(update={"certificate_sha256": canonical_sha256(body)})

    def verifies(self) -> bool:
        body = self.model_dump(mode="json", exclude={"certificate_sha256"})
        return canonical_sha256(body) == self.certificate_sha256


class Decisions(BaseModel):
    """What `decide` returns, each list ordered by (dataset, answer_id) then claim order."""

    model_config = ConfigDict(frozen=True)

    responses: list[ClaimSelectiveResponseRecord]
    claims: list[ClaimSelectiveClaimRecord]
    certificates: list[CertificateRecord]


__all__ = [
    "CONTRACT",
    "DECISION_OF",
    "EXPRESSED_STATUSES",
    "OUTCOME_OF",
    "CertificateRecord",
    "ClaimCertificate",
    "ClaimReason",
    "ClaimSelectiveClaimRecord",
    "ClaimSelectiveResponseRecord",
    "ClaimStatus",
    "Decisions",
    "EvidenceLink",
    "IgnoredReference",
    "LinkRole",
    "NativeAction",
    "PolicyStamp",
    "PooledScores",
    "ResponseReason",
    "Stamped",
]
