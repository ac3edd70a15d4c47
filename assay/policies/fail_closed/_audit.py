"""The audit export: one JSON object per question with everything an auditor needs
to re-check the rendering by hand, and what debug mode shows.

It holds the question, a retrieval summary, the claim IR, every recorded pair and set
score (marked counted or not), each claim's state with a rule-based sentence ("highest
entailment 0.7 is below 0.85"), the references the policy ignored, the verifier and the
configuration hashes. Texts are data: JSON-escaped by the writer, never interpreted.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict

from assay.policies.fail_closed._certificate import RunContext, VerifierInfo
from assay.policies.fail_closed._config import FailClosedConfig, Mode
from assay.policies.fail_closed._inputs import FCClaim, FCPair, FCResponse, FCSetScore
from assay.policies.fail_closed._lint import atomicity_flags
from assay.policies.fail_closed._records import (
    Decision,
    FailClosedClaimRecord,
    Reason,
    ReferenceNote,
)
from assay.policies.fail_closed._render import render


class RetrievedChunk(BaseModel):
    model_config = ConfigDict(frozen=True)

    chunk_id: str
    doc_id: str | None
    page: int | str | None
    rank: int | None
    score_raw: float | None
    score: float | None


class AuditScores(BaseModel):
    """A recorded pair or set score as recorded; non-finite numbers become null with
    `valid` false (canonical JSON has no NaN)."""

    model_config = ConfigDict(frozen=True)

    span_ids: list[str]
    p_entail: float | None
    p_contradict: float | None
    p_neutral: float | None
    valid: bool
    counted: bool
    score_source: str | None = None


class AuditClaim(BaseModel):
    model_config = ConfigDict(frozen=True)

    claim_id: str
    text: str
    type: str | None
    fields: dict[str, Any]
    evidence_candidates: list[str]
    unsupported_by_design: bool
    atomicity_flags: list[str]
    verification_status: str | None
    pairs: list[AuditScores]
    set_scores: list[AuditScores]
    state: str
    reason: Reason
    displayed: dict[str, bool]
    explanation: str


class AuditRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    dataset: str
    answer_id: str
    question_id: str | None
    question: str
    retrieval: list[RetrievedChunk]
    claims: list[AuditClaim]
    references: list[ReferenceNote]
    outcome: str
    run_id: str | None
    verifier: VerifierInfo
    policy_sha256: str
    retrieval_config_sha256: str | None
    inputs_sha256: str


def number(value: float | None) -> str:
    """A score as text: Python's shortest form, at least two decimals (0.70, 0.849)."""
    if value is None:
        return "none"
    text = repr(float(value))
    decimals = len(text.split(".")[1]) if "." in text and "e" not in text else 2
    return text if decimals >= 2 else f"{value:.2f}"


def explain(record: FailClosedClaimRecord, config: FailClosedConfig) -> str:
    """The rule-based sentence behind a claim's state."""
    tau, tau_c = number(config.tau_entail_value), number(config.tau_contradict_value)
    best = number(record.max_entail)
    fixed = {
        Reason.NO_EVIDENCE: "no span was scored for this claim",
        Reason.CAP_EXCEEDED: "its pairs were dropped by the cost caps",
        Reason.VERIFICATION_NOT_OK: f"the verification ended {record.verification_status}",
        Reason.MISSING_VERIFICATION: "there is no verification record",
        Reason.INVALID_SCORE: "a score is missing, NaN, infinite or outside [0, 1]",
        Reason.NO_ENTAILMENT_SCORES: "the verifier recorded no entailment probability",
        Reason.UNSUPPORTED_BY_DESIGN: "the claim is flagged unsupported by design",
        Reason.NON_ATOMIC: "the claim is not atomic: " + ", ".join(record.atomicity_flags),
        Reason.GATE_ABSTAINED: "the evidence gate abstained on this question",
        Reason.GATE_REFUSED: "the evidence gate refused this question",
        Reason.BELOW_TAU_ENTAIL: f"highest entailment {best} is below {tau}",
        Reason.ENTAIL_NOT_TOP_LABEL: f"entailment reaches {tau} but is not the top label",
    }
    if record.reason in fixed:
        return fixed[record.reason]
    if record.reason is Reason.CONTRADICTION:
        spans = ", ".join(record.contradicting)
        return f"contradiction {number(record.max_contradict)} reaches {tau_c} (spans {spans})"
    score = record.mse_score.p_entail if record.mse_score is not None else None
    return (
        f"entailment {number(score)} on {len(record.mse)} span(s) reaches {tau}; "
        f"highest contradiction {number(record.max_contradict)} is below {tau_c}"
    )


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def _scores(unit: FCPair | FCSetScore, counted: bool) -> AuditScores:
    values = (unit.p_entail, unit.p_contradict, unit.p_neutral)
    valid = all(v is not None and math.isfinite(v) and 0 <= v <= 1 for v in values)
    ids = [unit.span_id] if isinstance(unit, FCPair) else list(unit.span_ids)
    return AuditScores(
        span_ids=ids,
        p_entail=_finite(unit.p_entail),
        p_contradict=_finite(unit.p_contradict),
        p_neutral=_finite(unit.p_neutral),
        valid=valid,
        counted=counted,
        score_source=unit.score_source if isinstance(unit, FCPair) else None,
    )


def _claim(claim: FCClaim, record: FailClosedClaimRecord, config: FailClosedConfig) -> AuditClaim:
    scored = set(record.spans_scored)
    strict, mixed = (render(m, [record]) for m in (Mode.STRICT, Mode.MIXED))
    return AuditClaim(
        claim_id=claim.claim_id,
        text=claim.text,
        type=claim.type,
        fields=claim.fields,
        evidence_candidates=claim.evidence_candidates,
        unsupported_by_design=claim.unsupported_by_design,
        atomicity_flags=atomicity_flags(claim.text, config.max_claim_tokens),
        verification_status=claim.verification_status,
        pairs=[_scores(p, p.span_id in scored) for p in claim.pairs],
        set_scores=[_scores(s, set(s.span_ids) <= scored) for s in claim.set_scores],
        state=record.native.value,
        reason=record.reason,
        displayed={"strict": bool(strict.shown), "mixed": bool(mixed.shown or mixed.collapsed)},
        explanation=explain(record, config),
    )


def audit_record(
    config: FailClosedConfig,
    response: FCResponse,
    decision: Decision,
    context: RunContext | None = None,
) -> AuditRecord:
    """The audit object of one decided answer."""
    context = context or RunContext()
    chunks = sorted(
        response.chunks or (),
        key=lambda c: (c.retrieval_rank is None, c.retrieval_rank or 0, c.chunk_id),
    )
    return AuditRecord(
        dataset=response.dataset,
        answer_id=response.answer_id,
        question_id=response.question_id,
        question=response.question,
        retrieval=[
            RetrievedChunk(
                chunk_id=c.chunk_id,
                doc_id=c.doc_id,
                page=c.page,
                rank=c.retrieval_rank,
                score_raw=_finite(c.retrieval_score_raw),
                score=c.retrieval_score,
            )
            for c in chunks
        ],
        claims=[
            _claim(claim, record, config)
            for claim, record in zip(response.claims, decision.claims, strict=True)
        ],
        references=decision.references,
        outcome=decision.response.outcome.value,
        run_id=context.run_id,
        verifier=context.verifier,
        policy_sha256=config.sha256,
        retrieval_config_sha256=context.retrieval_config_sha256,
        inputs_sha256=response.inputs_sha256(),
    )


__all__ = ["AuditClaim", "AuditRecord", "AuditScores", "audit_record", "explain", "number"]
