"""The `evidence_gate` policy kind: a question-level answer/abstain gate on reranker
scores (the evidence-gate paper, spec §3), registered in `POLICIES`.

`EvidenceGatePolicy(config).decide(GateInputs(...))` returns one decision-log record per
question, ordered by (dataset, question_id); `metrics(decisions)` computes §3.6. The
object holds only its configuration: deciding twice, or in another input order, gives
the same records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from assay.core.registry import POLICIES
from assay.policies.engine._canonical import canonical_sha256
from assay.policies.evidence_gate._config import KIND, VERSION, EvidenceGateConfig, GateQuestion
from assay.policies.evidence_gate._decide import Identity, decide_question, pool_scores
from assay.policies.evidence_gate._metrics import GateMetrics, gate_metrics
from assay.policies.evidence_gate._records import GateDecisionRecord


class GateInputs(BaseModel):
    """What the gate reads for one run: each question with its gate record and gold."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str | None = None
    questions: list[GateQuestion] = Field(default_factory=list)


def ordered_questions(questions: Sequence[GateQuestion]) -> list[GateQuestion]:
    """Questions by (dataset, question_id); a repeated key is a caller's bug (the run
    reader resolves duplicates, last line wins, before this)."""
    by_key: dict[tuple[str, str], GateQuestion] = {}
    for question in questions:
        if question.key in by_key:
            raise ValueError(f"question {question.key} given twice")
        by_key[question.key] = question
    return [by_key[key] for key in sorted(by_key)]


@POLICIES.register(KIND, description="question-level answer/abstain gate on reranker scores")
class EvidenceGatePolicy:
    """Pass a question when its best reranked passage reaches `tau` (reassessing on the
    expanded pool when it is admissible but short), abstain otherwise, refuse when its
    gate record is missing, failed or invalid."""

    kind = KIND
    version = VERSION

    def __init__(self, config: EvidenceGateConfig | Mapping[str, Any]) -> None:
        self.config = (
            config if isinstance(config, EvidenceGateConfig) else EvidenceGateConfig.parse(config)
        )

    @property
    def name(self) -> str:
        return self.config.name

    def describe(self) -> dict[str, Any]:
        """The resolved configuration with the kind's version (what `policy_sha256`
        hashes: changing any threshold or the version changes it)."""
        return {**self.config.model_dump(mode="json"), "version": self.version}

    @property
    def sha256(self) -> str:
        return canonical_sha256(self.describe())

    def identity(self, run_id: str | None = None) -> Identity:
        return Identity(self.name, self.version, self.sha256, run_id)

    def decide(self, inputs: GateInputs) -> list[GateDecisionRecord]:
        """One decision per question, in (dataset, question_id) order."""
        identity = self.identity(inputs.run_id)
        return [
            decide_question(q, pool_scores(q.record, self.config), self.config, identity)
            for q in ordered_questions(inputs.questions)
        ]

    def metrics(
        self,
        decisions: Sequence[GateDecisionRecord],
        *,
        resamples: int = 1000,
        random_state: int = 0,
        confidence: float = 0.95,
    ) -> GateMetrics:
        """§3.6 over these decisions, with this policy's `alpha`."""
        return gate_metrics(
            decisions,
            alpha=self.config.alpha,
            resamples=resamples,
            random_state=random_state,
            confidence=confidence,
        )


__all__ = ["EvidenceGatePolicy", "GateInputs", "ordered_questions"]
