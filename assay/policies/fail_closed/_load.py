"""Run records -> `fail_closed` inputs (docs/reference/policies/integration.md): one `FCResponse`
per answer. A pair scored on a whole passage (no span id) becomes a pair on a span with
the passage's id that covers the passage, so chunk-level premises stay addressable; a
premise of several passages read together names no single span and is left out (never
scored, so it can never verify a claim: fail closed). A claim's gold is its recorded
`gold_label` where that is a label the design knows (supported / unsupported /
contradicted and their aliases); it is unsupported by design when its record says so (the
dataset's `unsupported_by_design`, carried by the claim record)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from assay.core.answers import Passage
from assay.core.records import ClaimRecord, VerificationRecord
from assay.core.rundir import VERIFICATIONS_FILE
from assay.core.verification import ScoredPair
from assay.errors import RunError, first_problem
from assay.policies.engine._run_inputs import RunAnswer, RunInputs
from assay.policies.fail_closed._inputs import (
    _GOLD_ALIASES,
    FCChunk,
    FCClaim,
    FCGate,
    FCPair,
    FCResponse,
    FCSetScore,
    FCSpan,
)

_PAIR_FIELDS = (
    "chunk_id",
    "doc_id",
    "passage_id",
    "page",
    "start",
    "end",
    "retrieval_rank",
    "p_entail",
    "p_contradict",
    "p_neutral",
    "score_source",
)


def _pair(pair: ScoredPair) -> FCPair | None:
    span_id = pair.span_id or pair.passage_id
    if span_id is None:
        return None
    values = {k: getattr(pair, k) for k in _PAIR_FIELDS}
    if pair.span_id is None:
        values["chunk_id"] = pair.chunk_id or pair.passage_id
    return FCPair(span_id=span_id, **values)


def _claim(claim: ClaimRecord, record: VerificationRecord | None) -> FCClaim:
    pairs = [p for p in (_pair(s) for s in record.pairs) if p] if record else []
    return FCClaim(
        claim_id=claim.claim_id,
        text=claim.claim,
        verification_status=record.status if record else None,
        pairs=pairs,
        set_scores=[FCSetScore(**s.model_dump()) for s in record.set_scores] if record else [],
        pairs_dropped_by_cap=record.pairs_dropped_by_cap if record else 0,
        gold=_GOLD_ALIASES.get((claim.gold_label or "").strip().lower()),
        unsupported_by_design=bool(claim.unsupported_by_design),
    )


def _chunk(passage: Passage, whole: bool) -> FCChunk:
    """A passage with its sentence spans, plus one span over all of it when a verifier
    scored it whole."""
    chunk = FCChunk.from_text(passage.id, passage.text, doc_id=passage.doc_id, page=passage.page)
    if not whole:
        return chunk
    span = FCSpan(span_id=passage.id, start=0, end=len(passage.text), text=passage.text)
    return chunk.model_copy(update={"spans": [*chunk.spans, span]})


def _response(
    run: RunInputs, verifier: str, answer: RunAnswer, link: dict[str, Any] | None
) -> FCResponse:
    records = [run.verification(verifier, c) for c in answer.claims]
    whole = {
        p.passage_id for r in records if r for p in r.pairs if p.span_id is None and p.passage_id
    }
    fields: dict[str, Any] = answer.row.fields if answer.row else {}
    question = answer.question if answer.question is not None else fields.get("question")
    return FCResponse(
        dataset=answer.dataset,
        answer_id=answer.answer_id,
        question=question or "",
        claims=[_claim(c, r) for c, r in zip(answer.claims, records, strict=True)],
        chunks=[_chunk(p, p.id in whole) for p in answer.row.passages()] if answer.row else None,
        gate=FCGate.model_validate(link) if link is not None else None,
        gold_action=answer.record.gold_action
        if answer.record and answer.record.gold_action
        else fields.get("gold_action"),
    )


def fc_inputs(
    run: RunInputs, verifier: str, links: Mapping[tuple[str, str], dict[str, Any]] | None = None
) -> list[FCResponse]:
    """Every answer of the run as a fail-closed input, in (dataset, answer_id) order, with
    its gate decision when chained (`links`); an inconsistent record (a span scored twice)
    is one line naming the answer."""
    out: list[FCResponse] = []
    for answer in run.answers:
        link = None if links is None else links.get((answer.dataset, answer.answer_id))
        try:
            out.append(_response(run, verifier, answer, link))
        except ValidationError as exc:
            message = first_problem(exc, typo_first=False).message
            raise RunError(
                f"answer {answer.answer_id!r}: {message}", file=VERIFICATIONS_FILE, field="pairs"
            ) from None
    return out


__all__ = ["fc_inputs"]
