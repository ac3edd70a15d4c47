"""The fail-closed decision: per claim a render state and a reason, per answer an
outcome and its renderings (docs/reference/policies/fail-closed.md#claim-states).

    failed inputs (missing / non-ok verification, invalid score,
          no pair with an entailment probability)            -> UNVERIFIED <reason>
    unsupported_by_design, non_atomic (opt-in), caps         -> UNVERIFIED <reason>
    no scored span                                           -> UNVERIFIED no_evidence
    max p_contradict over scored spans >= tau_contradict     -> BLOCKED    contradiction
    minimal sufficient evidence non-empty                    -> VERIFIED   entailed
    some unit >= tau_entail without entailment on top        -> UNVERIFIED entail_not_top_label
    otherwise                                                -> UNVERIFIED below_tau_entail

Only ids and numbers are read; texts are carried into evidence for certificates.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from assay.policies.fail_closed._caps import Capped, admit, apply_caps
from assay.policies.fail_closed._config import KIND, VERSION, FailClosedConfig
from assay.policies.fail_closed._inputs import FCClaim, FCResponse, text_sha256
from assay.policies.fail_closed._lint import atomicity_flags
from assay.policies.fail_closed._mse import ScoredSpan, minimal_sufficient_evidence, unit_triple
from assay.policies.fail_closed._records import (
    COMMON_DECISION,
    INPUT_FAILED,
    Decision,
    EvidenceSpan,
    FailClosedClaimRecord,
    Reason,
    RenderState,
    Triple,
)
from assay.policies.fail_closed._render import response_record


@dataclass
class _Budget:
    """Pairs of `max_pairs` left after the spans, for set scores (one pair each)."""

    left: int


@dataclass
class _Judged:
    state: RenderState
    reason: Reason
    spans: list[ScoredSpan] = field(default_factory=list)
    mse: list[ScoredSpan] = field(default_factory=list)
    mse_score: Triple | None = None
    set_lookups: int = 0


def _unverified(reason: Reason, spans: list[ScoredSpan] | None = None) -> _Judged:
    return _Judged(RenderState.UNVERIFIED, reason, spans=spans or [])


def _scored_spans(capped: Capped, config: FailClosedConfig) -> list[ScoredSpan] | None:
    spans: list[ScoredSpan] = []
    for pair in capped.kept:
        triple = unit_triple(pair, config.calibration)
        if triple is None:
            return None
        spans.append(ScoredSpan(pair=pair, triple=triple, position=capped.position[pair.span_id]))
    return spans


def _set_triples(capped: Capped, config: FailClosedConfig) -> dict[tuple[str, ...], Triple] | None:
    triples: dict[tuple[str, ...], Triple] = {}
    for score in capped.set_scores:
        triple = unit_triple(score, config.calibration)
        if triple is None:
            return None
        triples[score.span_ids] = triple  # a repeated span set: the last one wins
    return triples


def _judge(
    claim: FCClaim, capped: Capped, flags: list[str], config: FailClosedConfig, budget: _Budget
) -> _Judged:
    if claim.verification_status is None:
        return _unverified(Reason.MISSING_VERIFICATION)
    if claim.verification_status != "ok":
        return _unverified(Reason.VERIFICATION_NOT_OK)
    if claim.pairs and all(p.p_entail is None for p in claim.pairs):
        # a failed input, named: a label-only verifier
        return _unverified(Reason.NO_ENTAILMENT_SCORES)
    spans = _scored_spans(capped, config)
    sets = _set_triples(capped, config)
    if spans is None or sets is None:
        return _unverified(Reason.INVALID_SCORE)
    if claim.unsupported_by_design:
        return _unverified(Reason.UNSUPPORTED_BY_DESIGN, spans)
    if flags and config.reject_non_atomic:
        return _unverified(Reason.NON_ATOMIC, spans)
    if not spans:  # cap_exceeded: every pair dropped by a cap (the policy's or the verifier's)
        capped_out = capped.truncated or claim.pairs_dropped_by_cap > 0
        return _unverified(Reason.CAP_EXCEEDED if capped_out else Reason.NO_EVIDENCE)
    return _rule(spans, sets, config, budget)


def _rule(
    spans: list[ScoredSpan],
    sets: dict[tuple[str, ...], Triple],
    config: FailClosedConfig,
    budget: _Budget,
) -> _Judged:
    tau_entail = config.tau_entail_value
    mse = minimal_sufficient_evidence(
        spans, sets, tau_entail=tau_entail, max_spans=config.mse_max_spans, budget=budget.left
    )
    budget.left -= mse.set_lookups
    judged = _Judged(
        RenderState.UNVERIFIED,
        Reason.BELOW_TAU_ENTAIL,
        spans=spans,
        mse=mse.spans,
        mse_score=mse.score,
        set_lookups=mse.set_lookups,
    )
    if max(s.triple.p_contradict for s in spans) >= config.tau_contradict_value:
        judged.state, judged.reason = RenderState.BLOCKED, Reason.CONTRADICTION
    elif mse.spans:
        judged.state, judged.reason = RenderState.VERIFIED, Reason.ENTAILED
    elif mse.entail_not_top or max(s.triple.p_entail for s in spans) >= tau_entail:
        judged.reason = Reason.ENTAIL_NOT_TOP_LABEL
    return judged


def _evidence(response: FCResponse, spans: list[ScoredSpan]) -> list[EvidenceSpan]:
    pool = response.span_index()
    out = []
    for span in spans:
        pair = span.pair
        chunk, located = pool.get(pair.span_id, (None, None))
        text = located.text if located is not None else None
        out.append(
            EvidenceSpan(
                doc_id=chunk.doc_id if chunk is not None else pair.doc_id,
                chunk_id=chunk.chunk_id if chunk is not None else pair.chunk_id,
                span_id=pair.span_id,
                page=chunk.page if chunk is not None else pair.page,
                start=located.start if located is not None else pair.start,
                end=located.end if located is not None else pair.end,
                text=text,
                text_sha256=text_sha256(text) if text is not None else None,
                p_entail=span.triple.p_entail,
                p_contradict=span.triple.p_contradict,
            )
        )
    return out


def _correct(claim: FCClaim, judged: _Judged) -> bool | None:
    if claim.gold is None:
        return None
    if judged.reason in INPUT_FAILED:
        return False  # a failed input never counts as a right call
    return (judged.state is RenderState.VERIFIED) == (claim.gold == "supported")


def _claim_record(
    response: FCResponse,
    index: int,
    claim: FCClaim,
    capped: Capped,
    flags: list[str],
    judged: _Judged,
    config: FailClosedConfig,
) -> FailClosedClaimRecord:
    spans = judged.spans
    verified = judged.state is RenderState.VERIFIED
    return FailClosedClaimRecord(
        dataset=response.dataset,
        answer_id=response.answer_id,
        question_id=response.question_id,
        claim_id=claim.claim_id,
        claim_index=index,
        policy_id=config.name,
        policy_version=VERSION,
        policy_sha256=config.sha256,
        tau_entail=config.tau_entail,
        tau_contradict=config.tau_contradict,
        verification_status=claim.verification_status,
        native=judged.state,
        decision=COMMON_DECISION[judged.state],
        reason=judged.reason,
        max_entail=max((s.triple.p_entail for s in spans), default=None),
        max_contradict=max((s.triple.p_contradict for s in spans), default=None),
        mse=[s.pair.span_id for s in judged.mse],
        mse_score=judged.mse_score,
        evidence=_evidence(response, judged.mse) if verified else [],
        contradicting=[
            s.pair.span_id for s in spans if s.triple.p_contradict >= config.tau_contradict_value
        ],
        spans_scored=[p.span_id for p in capped.kept],
        n_pairs_recorded=len(claim.pairs),
        n_pairs_scored=len(capped.kept) + judged.set_lookups,
        truncated=capped.truncated or claim.pairs_dropped_by_cap > 0,
        atomicity_flags=flags,
        unsupported_by_design=claim.unsupported_by_design,
        gold=claim.gold,
        correct=_correct(claim, judged),
    )


def _gate_judged(response: FCResponse) -> Reason | None:
    gate = response.gate
    if gate is None or gate.outcome == "pass":
        return None
    return Reason.GATE_ABSTAINED if gate.outcome == "abstain" else Reason.GATE_REFUSED


def decide_response(config: FailClosedConfig, response: FCResponse) -> Decision:
    """Every claim's state and the answer's outcome, renderings and ignored references."""
    admitted = [admit(response, claim) for claim in response.claims]
    capped = apply_caps(response, admitted, config.caps)
    budget = _Budget(left=config.caps.max_pairs - sum(len(c.kept) for c in capped))
    gate_reason = _gate_judged(response)
    records: list[FailClosedClaimRecord] = []
    for index, claim in enumerate(response.claims):
        flags = atomicity_flags(claim.text, config.max_claim_tokens)
        if gate_reason is not None:
            judged = _unverified(gate_reason)
            kept = Capped(kept=[], n_admitted=len(admitted[index].pairs), beyond_max_claims=False)
        else:
            judged = _judge(claim, capped[index], flags, config, budget)
            kept = capped[index]
        records.append(_claim_record(response, index, claim, kept, flags, judged, config))
    notes = [] if gate_reason is not None else [n for a in admitted for n in a.notes]
    return Decision(
        response=response_record(
            response, records, config, pairs_used=sum(r.n_pairs_scored for r in records)
        ),
        claims=records,
        references=notes,
    )


__all__ = ["KIND", "decide_response"]
