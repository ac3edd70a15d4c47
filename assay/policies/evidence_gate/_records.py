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

    doc_id: str | None
    page: int | str | None
    passage_id: str
    score: float


class RerankerRef(BaseModel):
    """Which reranker produced the scores (model id and its weights' sha256)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str
    fingerprint: str | None = None
    normalization: str | None = None


class GateDecisionRecord(BaseModel):
    """The gate's decision on one question, with everything it was decided from."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str | None = None
    dataset: str
    question_id: str
    gate_id: str | None = None
    policy_id: str
    policy_version: int
    policy_sha256: str
    decision: NativeDecision
    outcome: GateOutcome
    rule: GateRule
    reason: RefusalReason | None = Field(default=None, description="Why refused (rule error).")
    tau: str
    tau_min: str
    k1_initial: int
    k1_expanded: int
    top_k: int
    s_initial: float | None = Field(description="Max score over retrieval ranks <= k1_initial.")
    s_expanded: float | None = Field(description="Max score over ranks <= k1_expanded.")
    s_final: float | None = Field(description="The score the decision used.")
    reassessed: bool
    n_candidates: int = Field(description="Scored candidates in the expanded pool.")
    pool_used: PoolUsed
    evidence_count: int = Field(description="Distinct (doc_id, page) pairs of E(q).")
    citations: list[GateCitation]
    evidence: list[str] = Field(description="Passage ids of E(q): all generation may use.")
    label: EvidenceLabel | None = None
    correct: bool | None = Field(description="Null without label; false for REFUSE.")
    support: SupportLevel | None = None
    citation_quality: CitationQuality | None = None
    reranker: RerankerRef | None = None
    gate_record_sha256: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.dataset, self.question_id)

    @property
    def confidence(self) -> float:
        return gate_confidence(self.s_initial, self.s_expanded)


__all__ = ["GateCitation", "GateDecisionRecord", "PoolUsed", "RerankerRef", "gate_confidence"]
