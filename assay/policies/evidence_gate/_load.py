"""Run records -> `evidence_gate` inputs, and the gate links of chained policies
(docs/reference/policies/evidence-gate.md#chaining-a-gate).

The gate stage writes one `gates.jsonl` record per question with `question_id` = the answer id, so a
question is a run answer: every answer is a question (one without a gate record is refused, never
counted as correct), and a gate record of a question the run has no answer for is a question too.
Gold (`evidence_label`, `gold_support`, `gold_citation_quality`) comes from the answer records.
"""

from __future__ import annotations

from typing import Any

from assay.errors import SpecError
from assay.policies.engine._run_inputs import RunInputs
from assay.policies.evidence_gate._compose import gate_chains
from assay.policies.evidence_gate._config import GateInputs, GateQuestion


def resolve_gate(run: RunInputs, wanted: str | None, *, file: str) -> str:
    """The gate_id a policy reads: the named one, or the run's only one."""
    found = ", ".join(sorted(run.gates)) or "none: add a [gate] block to the run spec"
    if wanted is None:
        if len(run.gates) == 1:
            return next(iter(run.gates))
        raise SpecError(
            f"name the gate to read (the run's gates: {found})", file=file, field="gate"
        )
    if wanted not in run.gates:
        raise SpecError(
            f"gate {wanted!r} is not in the run (its gates: {found})", file=file, field="gate"
        )
    return wanted


def gate_inputs(run: RunInputs, gate_id: str) -> GateInputs:
    """One question per run answer (and, unless restricted to a split, per gate record
    without an answer)."""
    records = run.gates.get(gate_id, {})
    answers = {(a.dataset, a.answer_id): a for a in run.answers}
    questions = []
    keys = set(answers) if run.split is not None else set(answers) | set(records)
    for key in sorted(keys):
        answer = answers.get(key)
        gold = answer.record if answer else None
        questions.append(
            GateQuestion(
                dataset=key[0],
                question_id=key[1],
                record=records.get(key),
                label=gold.evidence_label if gold else None,
                support=gold.gold_support if gold else None,
                citation_quality=gold.gold_citation_quality if gold else None,
            )
        )
    return GateInputs(run_id=run.run_id, questions=questions)


def short_pools(run: RunInputs, gate_id: str, k1_expanded: int) -> int:
    """How many gate records scored fewer ranks than the policy's `k1_expanded` (the gate
    refuses those, `pool_too_small`)."""
    return sum(1 for r in run.gates.get(gate_id, {}).values() if r.k1_expanded < k1_expanded)


def chain_links(gate: Any, run: RunInputs, gate_id: str) -> dict[tuple[str, str], dict[str, Any]]:
    """(dataset, answer_id) -> the gate decision as the claim-level kinds take it."""
    decisions = gate.decide(gate_inputs(run, gate_id))
    keys = [(a.dataset, a.answer_id) for a in run.answers]
    chains = gate_chains(decisions, keys, policy_id=gate.name)
    return {key: chain.as_link() for key, chain in chains.items()}


__all__ = ["chain_links", "gate_inputs", "resolve_gate", "short_pools"]
