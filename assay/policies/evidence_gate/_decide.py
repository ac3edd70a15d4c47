"""The evidence gate's decision for one question, as pure functions.

`pool_scores` reads a gate record once (validating it, fail closed) into the scores of its initial
and expanded pools; `apply_rule` is the decision rule
(docs/reference/policies/evidence-gate.md#decision-rule) at given thresholds, cheap enough to run
for every candidate of a tuning grid or a sweep; `decide_question` adds the evidence set E(q), its
citations and the audit fields of the decision log.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from assay.core.decisions import GateOutcome
from assay.core.outcomes import Status
from assay.core.records import GateCandidate, GateRecord
from assay.policies.engine._canonical import canonical_sha256
from assay.policies.evidence_gate._config import (
    EvidenceGateConfig,
    EvidenceLabel,
    GateQuestion,
    GateRule,
    NativeDecision,
    RefusalReason,
    reranker_scores,
)
from assay.policies.evidence_gate._records import (
    GateCitation,
    GateDecisionRecord,
    PoolUsed,
    RerankerRef,
)

VOLATILE_RECORD_FIELDS = frozenset({"latency_s", "cache_hit", "attempts", "usage", "recorded_at"})
"""Gate-record fields that differ between a fresh and a cached run of the same scores;
left out of `gate_record_sha256` so the hash names what the decision read."""

_NATIVE = {
    GateOutcome.PASS: NativeDecision.ANSWER,
    GateOutcome.ABSTAIN: NativeDecision.NO_ANSWER,
    GateOutcome.REFUSE: NativeDecision.REFUSE,
}


@dataclass(frozen=True)
class ScoredPassage:
    passage_id: str
    doc_id: str | None
    page: int | str | None
    rank: int
    score: float


@dataclass(frozen=True)
class PoolScores:
    """A question's scored candidates up to `k1_expanded`, best first (score descending,
    then retrieval rank, then passage id), and both pool maxima; `refusal` says why the
    record cannot be used (the gate then refuses)."""

    passages: tuple[ScoredPassage, ...] = ()
    s_initial: float | None = None
    s_expanded: float | None = None
    refusal: RefusalReason | None = None

    @property
    def n_candidates(self) -> int:
        return len(self.passages)


@dataclass(frozen=True)
class RuleResult:
    outcome: GateOutcome
    rule: GateRule
    s_final: float | None
    pool_used: PoolUsed
    reassessed: bool = False


def candidate_score(candidate: GateCandidate, normalization: str) -> float | None:
    """The candidate's normalised score (`rerank_score`, else its logit normalised), or None when it
    is absent, NaN, infinite or outside [0, 1] (refused: an invalid score never passes)."""
    value = candidate.rerank_score
    logit = candidate.rerank_logit
    if value is None and logit is not None and math.isfinite(logit):
        value = logit if normalization == "identity" else reranker_scores([logit], "sigmoid")[0]
    if value is None or not math.isfinite(value) or not 0.0 <= value <= 1.0:
        return None
    return value


def _refused(reason: RefusalReason) -> PoolScores:
    return PoolScores(refusal=reason)


def _states_other(recorded: float | None, computed: float | None) -> bool:
    return recorded is not None and recorded != computed


def pool_scores(record: GateRecord | None, config: EvidenceGateConfig) -> PoolScores:
    """Read a gate record into pool scores, or a refusal: missing or non-ok record,
    a record that scored fewer ranks than `k1_expanded`, any invalid score in the pool, or
    recorded maxima that disagree with the candidates."""
    if record is None:
        return _refused(RefusalReason.MISSING_GATE_RECORD)
    if record.status is not Status.OK:
        return _refused(RefusalReason.GATE_NOT_OK)
    if record.k1_expanded < config.k1_expanded:
        return _refused(RefusalReason.POOL_TOO_SMALL)
    normalization = record.reranker.normalization if record.reranker else "sigmoid"
    passages = []
    for candidate in record.candidates:
        if candidate.retrieval_rank > config.k1_expanded:
            continue
        score = candidate_score(candidate, normalization)
        if score is None:
            return _refused(RefusalReason.INVALID_SCORE)
        passages.append(
            ScoredPassage(
                candidate.passage_id,
                candidate.doc_id,
                candidate.page,
                candidate.retrieval_rank,
                score,
            )
        )
    passages.sort(key=lambda p: (-p.score, p.rank, p.passage_id))
    s_initial = max((p.score for p in passages if p.rank <= config.k1_initial), default=None)
    s_expanded = max((p.score for p in passages), default=None)
    same_initial = record.k1_initial == config.k1_initial
    same_expanded = record.k1_expanded == config.k1_expanded
    if (same_initial and _states_other(record.s_initial, s_initial)) or (
        same_expanded and _states_other(record.s_expanded, s_expanded)
    ):
        return _refused(RefusalReason.INCONSISTENT_SCORES)
    return PoolScores(tuple(passages), s_initial, s_expanded)


def apply_rule(scores: PoolScores, tau: float, tau_min: float) -> RuleResult:
    """The decision rule: refuse on an unusable record; abstain without candidates or below
    `tau_min`; pass at `s_initial >= tau`; otherwise reassess on the expanded pool (same thresholds)
    and pass iff its recomputed maximum reaches `tau`. Ties pass / are admissible."""
    if scores.refusal is not None:
        return RuleResult(GateOutcome.REFUSE, GateRule.ERROR, None, "none")
    s_initial = scores.s_initial
    if s_initial is None:
        return RuleResult(GateOutcome.ABSTAIN, GateRule.NO_CANDIDATES, None, "none")
    if s_initial < tau_min:
        return RuleResult(GateOutcome.ABSTAIN, GateRule.BELOW_MIN, s_initial, "initial")
    if s_initial >= tau:
        return RuleResult(GateOutcome.PASS, GateRule.SUFFICIENT, s_initial, "initial")
    s_expanded = scores.s_expanded if scores.s_expanded is not None else s_initial
    if s_expanded >= tau:
        rule = GateRule.SUFFICIENT_AFTER_REASSESS
        return RuleResult(GateOutcome.PASS, rule, s_expanded, "expanded", reassessed=True)
    rule = GateRule.INSUFFICIENT_AFTER_REASSESS
    return RuleResult(GateOutcome.ABSTAIN, rule, s_expanded, "expanded", reassessed=True)


def evidence_set(
    scores: PoolScores, result: RuleResult, config: EvidenceGateConfig
) -> list[ScoredPassage]:
    """E(q) of a pass: the `top_k` best passages of the pool used, admissible ones only
    (score >= tau_min); empty for anything but a pass."""
    if result.outcome is not GateOutcome.PASS:
        return []
    limit = config.k1_initial if result.pool_used == "initial" else config.k1_expanded
    pool = [p for p in scores.passages if p.rank <= limit][: config.top_k]
    return [p for p in pool if p.score >= config.tau_min_value]


def citations(evidence: list[ScoredPassage]) -> list[GateCitation]:
    """Distinct (doc_id, page) of E(q) in its order, each with its best passage; a
    passage without a doc_id is its own document."""
    seen: set[tuple[str, str, object]] = set()
    cited = []
    for p in evidence:
        doc_key = (
            ("doc", p.doc_id, p.page) if p.doc_id is not None else ("passage", p.passage_id, p.page)
        )
        if doc_key not in seen:
            seen.add(doc_key)
            cited.append(
                GateCitation(doc_id=p.doc_id, page=p.page, passage_id=p.passage_id, score=p.score)
            )
    return cited


def is_correct(outcome: GateOutcome, label: EvidenceLabel | None) -> bool | None:
    """Null without a label, false for a refusal, else pass <=> has_evidence."""
    if label is None:
        return None
    if outcome is GateOutcome.REFUSE:
        return False
    return (outcome is GateOutcome.PASS) == (label is EvidenceLabel.HAS_EVIDENCE)


def gate_record_sha256(record: GateRecord) -> str:
    """sha256 of the record's canonical JSON without its timing/caching fields (a NaN a
    broken record may hold is hashed as null, as JSON writes it)."""
    volatile = set(VOLATILE_RECORD_FIELDS & set(type(record).model_fields))
    return canonical_sha256(json.loads(record.model_dump_json(exclude=volatile)))


def _reranker_ref(record: GateRecord | None) -> RerankerRef | None:
    if record is None or record.reranker is None:
        return None
    ranker = record.reranker
    return RerankerRef(
        model=ranker.model, fingerprint=ranker.model_sha256, normalization=ranker.normalization
    )


@dataclass(frozen=True)
class Identity:
    """Who decided: the policy (name, version, hash) and the run it read."""

    policy_id: str
    policy_version: int
    policy_sha256: str
    run_id: str | None = None


def decide_question(
    question: GateQuestion, scores: PoolScores, config: EvidenceGateConfig, identity: Identity
) -> GateDecisionRecord:
    """The full decision-log record of one question."""
    result = apply_rule(scores, config.tau_value, config.tau_min_value)
    evidence = evidence_set(scores, result, config)
    cited = citations(evidence)
    record = question.record
    return GateDecisionRecord(
        run_id=identity.run_id,
        dataset=question.dataset,
        question_id=question.question_id,
        gate_id=record.gate_id if record is not None else config.gate,
        policy_id=identity.policy_id,
        policy_version=identity.policy_version,
        policy_sha256=identity.policy_sha256,
        decision=_NATIVE[result.outcome],
        outcome=result.outcome,
        rule=result.rule,
        reason=scores.refusal,
        tau=config.tau,
        tau_min=config.tau_min,
        k1_initial=config.k1_initial,
        k1_expanded=config.k1_expanded,
        top_k=config.top_k,
        s_initial=scores.s_initial,
        s_expanded=scores.s_expanded,
        s_final=result.s_final,
        reassessed=result.reassessed,
        n_candidates=scores.n_candidates,
        pool_used=result.pool_used,
        evidence_count=len(cited),
        citations=cited,
        evidence=[p.passage_id for p in evidence],
        label=question.label,
        correct=is_correct(result.outcome, question.label),
        support=question.support,
        citation_quality=question.citation_quality,
        reranker=_reranker_ref(record),
        gate_record_sha256=gate_record_sha256(record) if record is not None else None,
    )


__all__ = [
    "VOLATILE_RECORD_FIELDS",
    "Identity",
    "PoolScores",
    "RuleResult",
    "ScoredPassage",
    "apply_rule",
    "candidate_score",
    "citations",
    "decide_question",
    "evidence_set",
    "gate_record_sha256",
    "is_correct",
    "pool_scores",
]
