"""The evidence gate's output record: one `gate_decisions.jsonl` line per question.

It keeps the paper's log fields (question, system, gold label, ANSWER/NO_ANSWER, evidence
count, aggregate score, threshold, citations) and adds what an auditor needs to redo the
decision: the policy identity and hash, the rule that fired, both pool scores, the
parameters, the reranker fingerprint and the hash of the gate record read. Every field is
plain JSON (canonical-JSON ready); metrics and composition read these records alone.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from assay.core.decisions import GateOutcome
from assay.policies.evidence_gate._config import (
    CitationQuality,
    EvidenceLabel,
    GateRule,
    NativeDecision,
    RefusalReason,
    SupportLevel,
)

PoolUsed = Literal["initial", "expanded", "none"]


def gate_confidence(s_initial: float | None, s_expanded: float | None) -> float:
    """`g(q) = max(s_initial, s_expanded)`, 0.0 without candidates (AURC)."""
    return max((s for s in (s_initial, s_expanded) if s is not None), default=0.0)


class GateCitation(BaseModel):
    """One cited (document, page): the best-scored admissible passage on it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    doc_id: str | None = Field(description="The cited document.")
    page: int | str | None = Field(description="The cited page.")
    passage_id: str = Field(description="Its best-scored admissible passage.")
    score: float = Field(description="That passage's gate score.")


class RerankerRef(BaseModel):
    """Which reranker produced the scores (model id and its weights' sha256)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field(description="The reranker's model id.")
    fingerprint: str | None = Field(default=None, description="The sha256 of its weights.")
    normalization: str | None = Field(default=None, description="How its outputs became scores.")


class GateDecisionRecord(BaseModel):
    """The gate's decision on one question, with everything it was decided from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str | None = Field(default=None, description="The run the gate records came from.")
    dataset: str = Field(description="The dataset's name.")
    question_id: str = Field(description="The question's id.")
    gate_id: str | None = Field(default=None, description="The gate whose scores were read.")
    policy_id: str = Field(description="The policy's name.")
    policy_version: int = Field(description="The kind's version.")
    policy_sha256: str = Field(description="Hash of the policy's resolved configuration.")
    decision: NativeDecision = Field(description="ANSWER, NO_ANSWER or REFUSE (the paper's names).")
    outcome: GateOutcome = Field(description="pass, abstain or refuse.")
    rule: GateRule = Field(description="The branch of the decision rule that decided.")
    reason: RefusalReason | None = Field(default=None, description="Why refused (rule error).")
    tau: str = Field(description="Pass threshold (decimal text).")
    tau_min: str = Field(description="Admissibility threshold (decimal text).")
    k1_initial: int = Field(description="The initial pool's depth.")
    k1_expanded: int = Field(description="The expanded pool's depth.")
    top_k: int = Field(description="Evidence passages kept at most.")
    s_initial: float | None = Field(description="Max score over retrieval ranks <= k1_initial.")
    s_expanded: float | None = Field(description="Max score over ranks <= k1_expanded.")
    s_final: float | None = Field(description="The score the decision used.")
    reassessed: bool = Field(description="Whether the expanded pool was consulted.")
    n_candidates: int = Field(description="Scored candidates in the expanded pool.")
    pool_used: PoolUsed = Field(description="The pool the decision read.")
    evidence_count: int = Field(description="Distinct (doc_id, page) pairs of E(q).")
    citations: list[GateCitation] = Field(description="The cited (document, page) pairs of E(q).")
    evidence: list[str] = Field(description="Passage ids of E(q): all generation may use.")
    label: EvidenceLabel | None = Field(
        default=None, description="Gold: the question's evidence label."
    )
    correct: bool | None = Field(description="Null without label; false for REFUSE.")
    support: SupportLevel | None = Field(
        default=None, description="Gold: how much of the answer the evidence supports."
    )
    citation_quality: CitationQuality | None = Field(
        default=None, description="Gold: the citations' grade."
    )
    reranker: RerankerRef | None = Field(
        default=None, description="The reranker that scored the passages."
    )
    gate_record_sha256: str | None = Field(
        default=None, description="Hash of the gate record read."
    )

    @property
    def key(self) -> tuple[str, str]:
        return (self.dataset, self.question_id)

    @property
    def confidence(self) -> float:
        return gate_confidence(self.s_initial, self.s_expanded)


__all__ = ["GateCitation", "GateDecisionRecord", "PoolUsed", "RerankerRef", "gate_confidence"]
