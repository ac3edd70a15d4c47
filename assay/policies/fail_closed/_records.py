"""The fail-closed policy's output records, canonical-JSON ready:
one `FailClosedClaimRecord` per claim (`claims.jsonl`), one `FailClosedResponseRecord`
per answer (`responses.jsonl`), and the references the policy ignored. The claim
and response records follow the decision-record contract of `assay.core.decisions`
(`CONTRACT`); their fields keep the order they were first written in (the answer first).

The render state is a structured field set only by the policy; nothing here is ever
derived from claim or evidence text (the badge is never read from text).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from assay.core.decisions import (
    ClaimDecision,
    ClaimDecisionRecord,
    ResponseDecisionRecord,
    ResponseOutcome,
)
from assay.policies.fail_closed._config import Mode
from assay.policies.fail_closed._inputs import GoldAction, GoldClaim


class RenderState(StrEnum):
    """The CertiRAG design's claim states (the `native` status)."""

    VERIFIED = "VERIFIED"
    UNVERIFIED = "UNVERIFIED"
    BLOCKED = "BLOCKED"


COMMON_DECISION = {
    RenderState.VERIFIED: ClaimDecision.ASSERT,
    RenderState.BLOCKED: ClaimDecision.DISPUTE,
    RenderState.UNVERIFIED: ClaimDecision.WITHHOLD,
}


class Reason(StrEnum):
    """Why a claim has its state (docs/reference/policies/fail-closed.md#reason-codes)."""

    ENTAILED = "entailed"
    CONTRADICTION = "contradiction"
    BELOW_TAU_ENTAIL = "below_tau_entail"
    ENTAIL_NOT_TOP_LABEL = "entail_not_top_label"
    NO_EVIDENCE = "no_evidence"
    CAP_EXCEEDED = "cap_exceeded"
    VERIFICATION_NOT_OK = "verification_not_ok"
    MISSING_VERIFICATION = "missing_verification"
    INVALID_SCORE = "invalid_score"
    NO_ENTAILMENT_SCORES = "no_entailment_scores"  # failed input: no pair has a p_entail at all
    UNSUPPORTED_BY_DESIGN = "unsupported_by_design"
    NON_ATOMIC = "non_atomic"
    GATE_ABSTAINED = "gate_abstained"
    GATE_REFUSED = "gate_refused"


FC1_REASONS = frozenset(
    {
        Reason.VERIFICATION_NOT_OK,
        Reason.MISSING_VERIFICATION,
        Reason.INVALID_SCORE,
        Reason.NO_ENTAILMENT_SCORES,
    }
)
"""Reasons meaning the inputs failed: such a claim is never counted as caught or correct,
and a response made only of them is refused (docs/reference/policies/fail-closed.md#invariants)."""

INPUT_FAILED = FC1_REASONS | {Reason.GATE_REFUSED}


class ResponseReason(StrEnum):
    ALL_VERIFIED = "all_verified"
    PARTIALLY_VERIFIED = "partially_verified"
    NO_VERIFIED_CLAIM = "no_verified_claim"
    NO_CLAIMS = "no_claims"
    ALL_VERIFICATIONS_FAILED = "all_verifications_failed"
    NO_ENTAILMENT_SCORES = "no_entailment_scores"  # refused: every claim for that reason
    GATE_ABSTAINED = "gate_abstained"
    GATE_REFUSED = "gate_refused"


NATIVE_OUTCOME = {
    ResponseOutcome.ANSWER_FULL: "all_verified",
    ResponseOutcome.ANSWER_PARTIAL: "partially_verified",
    ResponseOutcome.ABSTAIN: "empty_strict_rendering",
    ResponseOutcome.REFUSE: "inputs_failed",
}
GOLD_OUTCOME = {
    "full": ResponseOutcome.ANSWER_FULL,
    "partial": ResponseOutcome.ANSWER_PARTIAL,
    "conflict": ResponseOutcome.CONFLICT,
    "abstain": ResponseOutcome.ABSTAIN,
}


class Triple(BaseModel):
    """A unit's scores: one span's, or a set score's."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    p_entail: float
    p_contradict: float
    p_neutral: float


class EvidenceSpan(BaseModel):
    """One span of a claim's minimal sufficient evidence, with its own scores. `text` is
    the span as retrieved (None when the run recorded no retrieval set)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    doc_id: str | None
    chunk_id: str | None
    span_id: str
    page: int | str | None
    start: int | None
    end: int | None
    text: str | None
    text_sha256: str | None
    p_entail: float
    p_contradict: float


class FailClosedClaimRecord(BaseModel):
    """One claim's decision (`claims.jsonl`), a `core.decisions.ClaimDecisionRecord`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    dataset: str = Field(description="The dataset's name.")
    answer_id: str = Field(description="The answer's id.")
    question_id: str | None = Field(description="The question's id, if known.")
    claim_id: str = Field(description="The claim's id.")
    claim_index: int = Field(description="Position in the claim IR, from 0.")
    policy_id: str = Field(description="The policy's name.")
    policy_kind: Literal["fail_closed"] = Field(
        default="fail_closed", description="The policy's kind."
    )
    policy_version: int = Field(description="The kind's version.")
    policy_sha256: str = Field(description="Hash of the policy's resolved configuration.")
    tau_entail: str = Field(description="Entailment threshold (decimal text).")
    tau_contradict: str = Field(description="Contradiction threshold (decimal text).")
    verification_status: str | None = Field(
        description="How the claim's verification ended (null: no record)."
    )
    native: RenderState = Field(description="VERIFIED, UNVERIFIED or BLOCKED.")
    decision: ClaimDecision = Field(description="What is done with the claim.")
    reason: Reason = Field(description="The reason code.")
    max_entail: float | None = Field(
        description="Highest entailment probability over the scored spans."
    )
    max_contradict: float | None = Field(
        description="Highest contradiction probability over the scored spans."
    )
    mse: list[str] = Field(description="Span ids of the minimal sufficient evidence.")
    mse_score: Triple | None = Field(description="The scores of the minimal sufficient evidence.")
    evidence: list[EvidenceSpan] = Field(description="The MSE spans of a VERIFIED claim.")
    contradicting: list[str] = Field(description="Spans with p_contradict >= tau_contradict.")
    spans_scored: list[str] = Field(description="Span ids counted after the filters and caps.")
    n_pairs_recorded: int = Field(description="Pairs the verification recorded.")
    n_pairs_scored: int = Field(description="Spans kept by the caps plus set scores used.")
    truncated: bool = Field(description="A cap dropped some of this claim's pairs.")
    atomicity_flags: list[str] = Field(
        description="Signs the claim is not atomic: contains:<word>, too_long."
    )
    unsupported_by_design: bool = Field(description="The claim IR marks it as not to be supported.")
    gold: GoldClaim | None = Field(description="Gold: supported, unsupported or contradicted.")
    correct: bool | None = Field(
        description="VERIFIED iff gold supported; False when the inputs failed."
    )


class Rendered(BaseModel):
    """What a rendering shows, by claim id. `empty`: no VERIFIED claim, so the
    strict rendering is empty."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Mode
    shown: list[str]
    collapsed: list[str]
    hidden: list[str]
    empty: bool


class NotVerified(BaseModel):
    """An entry of the collapsed "not verified" list."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    claim_id: str = Field(description="The claim's id.")
    reason: Reason = Field(description="Why it is not verified.")


class FailClosedResponseRecord(BaseModel):
    """One answer's outcome and rendering (`responses.jsonl`), a `ResponseDecisionRecord`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    dataset: str = Field(description="The dataset's name.")
    answer_id: str = Field(description="The answer's id.")
    question_id: str | None = Field(description="The question's id, if known.")
    policy_id: str = Field(description="The policy's name.")
    policy_kind: Literal["fail_closed"] = Field(
        default="fail_closed", description="The policy's kind."
    )
    policy_version: int = Field(description="The kind's version.")
    policy_sha256: str = Field(description="Hash of the policy's resolved configuration.")
    native: str = Field(description="The outcome in the CertiRAG design's words.")
    outcome: ResponseOutcome = Field(description="What is done with the response.")
    reason: ResponseReason = Field(description="The reason code.")
    n_claims: int = Field(description="Claims of the answer.")
    n_verified: int = Field(description="Claims VERIFIED.")
    n_unverified: int = Field(description="Claims UNVERIFIED.")
    n_blocked: int = Field(description="Claims BLOCKED.")
    n_pairs_used: int = Field(description="Pairs scored over all its claims.")
    rendered: Rendered = Field(description="What the rendering shows, by claim id.")
    not_verified: list[NotVerified] = Field(description="The collapsed not-verified list.")
    gate: Literal["pass", "abstain", "refuse"] | None = Field(
        description="A preceding evidence gate's outcome, if chained."
    )
    gold_action: GoldAction | None = Field(
        description="Gold: what should be done with the response."
    )
    action_correct: bool | None = Field(description="Whether the outcome is the gold action's.")


CONTRACT: tuple[type[ClaimDecisionRecord], type[ResponseDecisionRecord]] = (
    FailClosedClaimRecord,
    FailClosedResponseRecord,
)
"""This kind's claim and response records, as the core contract they follow (mypy checks)."""


class ReferenceNote(BaseModel):
    """Evidence a record named that the policy ignored: an unscored id in
    `evidence_candidates`, a pair or set score naming a span outside the retrieval set,
    or a pair outside a preceding gate's evidence set."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    answer_id: str
    claim_id: str
    reference: str
    source: Literal["evidence_candidates", "pair", "set_score"]
    code: Literal["unscored_reference", "outside_gate_evidence"]


class Decision(BaseModel):
    """Everything `decide` returns for one answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    response: FailClosedResponseRecord
    claims: list[FailClosedClaimRecord]
    references: list[ReferenceNote]


__all__ = [
    "COMMON_DECISION",
    "CONTRACT",
    "FC1_REASONS",
    "GOLD_OUTCOME",
    "INPUT_FAILED",
    "NATIVE_OUTCOME",
    "Decision",
    "EvidenceSpan",
    "FailClosedClaimRecord",
    "FailClosedResponseRecord",
    "NotVerified",
    "Reason",
    "ReferenceNote",
    "RenderState",
    "Rendered",
    "ResponseReason",
    "Triple",
]
