"""A gate in front of a claim-level policy (`after = "<gate>"`,
docs/reference/policies/evidence-gate.md#chaining-a-gate).

The claim-level policy first looks up the gate's decision for its question: abstain →
the response abstains and every claim is withheld (`gate_abstained`); refuse, or no gate
decision at all → the response is refused and every claim withheld
(`gate_refused`); pass → the policy decides as usual, with only the passages of the
gate's evidence set E(q) counting as evidence (any other passage a verification names is
ignored and logged by the claim-level kinds as `outside_gate_evidence`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from assay.core.decisions import ClaimDecision, GateOutcome, ResponseOutcome
from assay.policies.evidence_gate._config import GateRule
from assay.policies.evidence_gate._records import GateDecisionRecord

GATE_ABSTAINED = "gate_abstained"
GATE_REFUSED = "gate_refused"
OUTSIDE_GATE_EVIDENCE = "outside_gate_evidence"


class GateSummary(BaseModel):
    """The `gate` field of a chained policy's `responses.jsonl` line."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    policy_id: str
    gate_id: str | None = None
    outcome: GateOutcome
    rule: GateRule
    s_final: float | None


class GateChain(BaseModel):
    """What a chained claim-level policy must do for one question."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    gate: GateSummary
    evidence: tuple[str, ...] = ()

    @property
    def decides(self) -> bool:
        """True when the gate passed: the claim-level policy decides, on E(q) only."""
        return self.gate.outcome is GateOutcome.PASS

    @property
    def response_outcome(self) -> ResponseOutcome | None:
        """The forced response outcome (abstain / refuse); None when the policy decides."""
        return {
            GateOutcome.ABSTAIN: ResponseOutcome.ABSTAIN,
            GateOutcome.REFUSE: ResponseOutcome.REFUSE,
        }.get(self.gate.outcome)

    @property
    def claim_decision(self) -> ClaimDecision | None:
        """Every claim is withheld unless the gate passed."""
        return None if self.decides else ClaimDecision.WITHHOLD

    @property
    def claim_reason(self) -> str | None:
        return {
            GateOutcome.ABSTAIN: GATE_ABSTAINED,
            GateOutcome.REFUSE: GATE_REFUSED,
        }.get(self.gate.outcome)

    def admits(self, passage_id: str) -> bool:
        """Whether a passage is in E(q) (nothing is, unless the gate passed)."""
        return self.decides and passage_id in self.evidence

    def split(self, passage_ids: Iterable[str]) -> tuple[list[str], list[str]]:
        """(kept, ignored) passages of a verification: kept are in E(q); the ignored ones
        are what the claim-level policy logs as `outside_gate_evidence`."""
        kept: list[str] = []
        ignored: list[str] = []
        for passage_id in passage_ids:
            (kept if self.admits(passage_id) else ignored).append(passage_id)
        return kept, ignored

    def as_link(self) -> dict[str, Any]:
        """The gate as the claim-level kinds' inputs take it (`GateLink` of
        claim_selective, `FCGate` of fail_closed: both ignore keys they do not know)."""
        evidence = list(self.evidence)
        return {
            **self.gate.model_dump(mode="json"),
            "evidence": evidence,
            "evidence_ids": evidence,
        }


def gate_chain(decision: GateDecisionRecord | None, *, policy_id: str) -> GateChain:
    """The chain for one question from its gate decision; a missing decision refuses."""
    if decision is None:
        summary = GateSummary(
            policy_id=policy_id, outcome=GateOutcome.REFUSE, rule=GateRule.ERROR, s_final=None
        )
        return GateChain(gate=summary)
    summary = GateSummary(
        policy_id=decision.policy_id,
        gate_id=decision.gate_id,
        outcome=decision.outcome,
        rule=decision.rule,
        s_final=decision.s_final,
    )
    return GateChain(gate=summary, evidence=tuple(decision.evidence))


def gate_chains(
    decisions: Sequence[GateDecisionRecord], keys: Iterable[tuple[str, str]], *, policy_id: str
) -> dict[tuple[str, str], GateChain]:
    """A chain per (dataset, question_id) of `keys`, refusing keys the gate never decided."""
    by_key = {d.key: d for d in decisions}
    return {key: gate_chain(by_key.get(key), policy_id=policy_id) for key in keys}


__all__ = [
    "GATE_ABSTAINED",
    "GATE_REFUSED",
    "OUTSIDE_GATE_EVIDENCE",
    "GateChain",
    "GateSummary",
    "gate_chain",
    "gate_chains",
]
