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

    policy_id: str = Field(description="The policy's name.")
    kind: str = Field(default="claim_selective", description="The policy's kind.")
    policy_version: int = Field(description="The kind's version.")
    policy_sha256: str = Field(description="Hash of the kind, version and resolved configuration.")
    reference: bool = Field(default=False, description="A comparison system, not a policy.")


class Stamped(BaseModel):
    """The policy fields every claim and response record starts with."""

    model_config = ConfigDict(frozen=True)

    policy_id: str = Field(description="The policy's name.")
    policy_kind: str = Field(default="claim_selective", description="The policy's kind.")
    policy_version: int = Field(description="The kind's version.")
    policy_sha256: str = Field(description="Hash of the kind, version and resolved configuration.")
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

    s_support: float = Field(description="S_sup: the highest support score in the pool.")
    s_conflict: float = Field(description="S_conf: the highest conflict score.")
    s_limitation: float = Field(description="S_lim: the highest limitation score.")


class EvidenceLink(BaseModel):
    """A passage behind a claim's status, with the thresholds it was judged by."""

    model_config = ConfigDict(frozen=True)

    passage_id: str | None = Field(description="The passage; null for a context of several.")
    context: list[str] | None = Field(
        default=None, description="The passages of a context read together."
    )
    doc_id: str | None = Field(default=None, description="The passage's document.")
    page: int | str | None = Field(default=None, description="The passage's page.")
    span_id: str | None = Field(default=None, description="The sentence scored, if a sentence.")
    roles: list[LinkRole] = Field(description="What the passage did for the claim's status.")
    s_support: float | None = Field(description="Its support score.")
    s_conflict: float | None = Field(description="Its conflict score.")
    s_limitation: float | None = Field(description="Its limitation score.")
    relation_source: str = Field(description="What related it to the claim (nli, llm, lexical).")
    thresholds: dict[str, str] = Field(
        description="The thresholds it was judged by (decimal text)."
    )


class IgnoredReference(BaseModel):
    """Evidence that is not evidence: a cited passage with no score record, or a
    scored passage outside the response's evidence pool or the gate's E(q)."""

    model_config = ConfigDict(frozen=True)

    passage_id: str = Field(description="The passage.")
    reason: Literal["unscored_reference", "outside_evidence_pool", "outside_gate_evidence"] = Field(
        description="Why it is not evidence."
    )


class ClaimSelectiveClaimRecord(Stamped):
    """One line of `policies/<name>/claims.jsonl` (a `core.decisions.ClaimDecisionRecord`)."""

    dataset: str = Field(description="The dataset's name.")
    answer_id: str = Field(description="The answer's id.")
    claim_id: str = Field(description="The claim's id.")
    claim: str | None = Field(default=None, description="The claim's text.")
    verifier_id: str | None = Field(description="The verifier whose scores were read.")
    verification_status: str = Field(description="ok | parse_error | ... | missing")
    verification_ok: bool = Field(description="Verification ok and every score valid.")
    pooled: PooledScores | None = Field(
        description="The claim's pooled scores (null when verification failed)."
    )
    native: ClaimStatus = Field(description="The claim's status under the policy.")
    decision: ClaimDecision = Field(description="What is done with the claim.")
    reason: ClaimReason = Field(description="The reason code.")
    family: str | None = Field(description="The threshold family applied.")
    thresholds: dict[str, str] = Field(description="The thresholds applied (decimal text).")
    critical: bool = Field(description="Whether the claim is critical.")
    required: bool = Field(description="Whether the answer needs the claim.")
    claim_type: str | None = Field(default=None, description="The claim's type.")
    links: list[EvidenceLink] = Field(
        default_factory=list, description="The passages behind its status."
    )
    certificate_valid: bool | None = Field(
        default=None, description="Expressed claims: under the policy's certificate standard."
    )
    priors: list[str] = Field(
        default_factory=list, description="Source-family priors that applied."
    )
    ignored_references: list[IgnoredReference] = Field(
        default_factory=list, description="Cited or scored passages that were not evidence."
    )
    gold_status: GoldStatus | None = Field(default=None, description="Gold: the claim's status.")
    gold_usable: bool | None = Field(
        default=None, description="Gold: whether the claim may be expressed."
    )
    correct: bool | None = Field(
        default=None, description="native == gold_status; never true when the inputs failed."
    )

    @property
    def expressed(self) -> bool:
        return self.native in EXPRESSED_STATUSES


class ClaimSelectiveResponseRecord(Stamped):
    """One line of `policies/<name>/responses.jsonl` (a `ResponseDecisionRecord`)."""

    dataset: str = Field(description="The dataset's name.")
    answer_id: str = Field(description="The answer's id.")
    native: NativeAction = Field(description="The response's action under the policy.")
    outcome: ResponseOutcome = Field(description="What is done with the response.")
    reason: ResponseReason = Field(description="The reason code.")
    n_claims: int = Field(description="Claims of the response.")
    status_counts: dict[str, int] = Field(description="Claims per status.")
    family: str | None = Field(description="The threshold family applied.")
    intent: str | None = Field(default=None, description="The question's intent.")
    source: str | None = Field(default=None, description="Where the answer came from.")
    claim_type: str | None = Field(default=None, description="The response's type.")
    split: str | None = Field(default=None, description="The tuning split.")
    priors: list[str] = Field(
        default_factory=list, description="Source-family priors that applied."
    )
    gate: GateLink | None = Field(
        default=None, description="The preceding evidence gate's decision, if chained."
    )
    gold_action: GoldAction | None = Field(
        default=None, description="Gold: what should be done with the response."
    )
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

    claim_id: str = Field(description="The claim's id.")
    native: ClaimStatus = Field(description="Its status.")
    decision: ClaimDecision = Field(description="What is done with it.")
    reason: ClaimReason = Field(description="The reason code.")
    links: list[EvidenceLink] = Field(description="The passages behind its status.")
    certificate_valid: bool | None = Field(description="Whether it meets the certificate standard.")


class CertificateRecord(BaseModel):
    """One line of `policies/<name>/certificates.jsonl`; `certificate_sha256` is the sha256
    of the canonical JSON of every other field, so a reader can verify it."""

    model_config = ConfigDict(frozen=True)

    dataset: str = Field(description="The dataset's name.")
    answer_id: str = Field(description="The answer's id.")
    policy: PolicyStamp = Field(description="Which policy decided.")
    family: str | None = Field(description="The threshold family applied.")
    thresholds: dict[str, str] = Field(description="The thresholds applied (decimal text).")
    certificate_standard: dict[str, str] = Field(description="What a certified claim must show.")
    native: NativeAction = Field(description="The response's action.")
    outcome: ResponseOutcome = Field(description="What is done with the response.")
    input_sha256: str = Field(description="sha256 of the canonical response input consumed.")
    claims: list[ClaimCertificate] = Field(description="Each claim's status and evidence.")
    verifier: VerifierInfo | None = Field(
        default=None, description="The verifier and model behind the scores (from the run)."
    )
    certificate_sha256: str = Field(
        default="", description="sha256 of the canonical JSON of every other field."
    )

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
