"""Which recorded pairs count as evidence: only scored spans of the retrieval set,
inside a preceding gate's evidence set, within the cost caps.

Caps drop work in a fixed order, never by score: claims beyond `max_claims` (IR order);
chunks beyond `max_chunks` (retrieval rank) and spans beyond `max_spans_per_chunk`
(start offset); each claim's spans ordered by chunk rank then start offset and cut to
`max_spans_per_claim`; then the pair budget filled round-robin, one span per claim per
round. A recorded run that scored more pairs thus gives what a capped verifier would.
Every claim within `max_claims` takes part whatever its verification status (a capped
verifier spends its pairs before it learns the outcome); set scores are paid from what
the spans leave of the budget, one pair each, when the MSE consults them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from assay.policies.fail_closed._config import Caps
from assay.policies.fail_closed._inputs import FCChunk, FCClaim, FCPair, FCResponse, FCSetScore
from assay.policies.fail_closed._records import ReferenceNote

_LAST = float("inf")


@dataclass(frozen=True)
class Admitted:
    """A claim's pairs and set scores that may count as evidence, before caps."""

    pairs: list[FCPair]
    set_scores: list[FCSetScore]
    notes: list[ReferenceNote]


@dataclass(frozen=True)
class Capped:
    """A claim's spans after the caps, in cap order, and what the caps did to it."""

    kept: list[FCPair]
    n_admitted: int
    beyond_max_claims: bool
    set_scores: list[FCSetScore] = field(default_factory=list)
    position: dict[str, tuple[float, str, float]] = field(default_factory=dict)

    @property
    def truncated(self) -> bool:
        return self.beyond_max_claims or len(self.kept) < self.n_admitted


def _note(response: FCResponse, claim: FCClaim, ref: str, source: str, code: str) -> ReferenceNote:
    return ReferenceNote.model_validate(
        {
            "answer_id": response.answer_id,
            "claim_id": claim.claim_id,
            "reference": ref,
            "source": source,
            "code": code,
        }
    )


def _gate_ids(response: FCResponse) -> set[str] | None:
    gate = response.gate
    if gate is None or gate.outcome != "pass" or gate.evidence_ids is None:
        return None
    return set(gate.evidence_ids)


def admit(response: FCResponse, claim: FCClaim) -> Admitted:
    """The claim's scored evidence: pairs naming a span outside the retrieval set
    or outside the gate's evidence set, set scores over spans not admitted, and
    `evidence_candidates` with no score record are ignored and noted."""
    pool = response.span_index() if response.chunks is not None else None
    allowed = _gate_ids(response)
    pairs: list[FCPair] = []
    notes: list[ReferenceNote] = []
    for pair in claim.pairs:
        if pool is not None and pair.span_id not in pool:
            notes.append(_note(response, claim, pair.span_id, "pair", "unscored_reference"))
            continue
        chunk_id = pool[pair.span_id][0].chunk_id if pool is not None else pair.chunk_id
        if allowed is not None and not ({chunk_id, pair.passage_id} & allowed):
            notes.append(_note(response, claim, pair.span_id, "pair", "outside_gate_evidence"))
            continue
        pairs.append(pair)
    span_ids = {p.span_id for p in pairs}
    sets: list[FCSetScore] = []
    for score in claim.set_scores:
        if set(score.span_ids) <= span_ids:
            sets.append(score)
        else:
            ref = "+".join(score.span_ids)
            notes.append(_note(response, claim, ref, "set_score", "unscored_reference"))
    scored = span_ids | {i for p in pairs for i in (p.chunk_id, p.passage_id, p.doc_id) if i}
    if pool is not None:
        scored |= {i for s in span_ids for i in (pool[s][0].chunk_id, pool[s][0].doc_id) if i}
    for ref in claim.evidence_candidates:
        if ref not in scored:
            notes.append(_note(response, claim, ref, "evidence_candidates", "unscored_reference"))
    return Admitted(pairs=pairs, set_scores=sets, notes=notes)


def _rank(value: int | None) -> float:
    return _LAST if value is None else float(value)


class _Positions:
    """Where each span sits: its chunk (None: unknown), its rank, its start offset. The
    retrieval set is authoritative when the run recorded one; otherwise the pairs say.
    Spans of an unknown chunk are ordered by the pair's rank and escape the chunk caps
    (the other caps still bound them)."""

    def __init__(self, response: FCResponse, claims: list[list[FCPair]]) -> None:
        self.chunk_of: dict[str, str | None] = {}
        self.chunk_rank: dict[str, float] = {}
        self.rank: dict[str, float] = {}
        self.start: dict[str, float] = {}
        if response.chunks is not None:
            for chunk in response.chunks:
                self._from_chunk(chunk)
        else:
            for pair in (p for pairs in claims for p in pairs):
                self._from_pair(pair)

    def _from_chunk(self, chunk: FCChunk) -> None:
        rank = _rank(chunk.retrieval_rank)
        self.chunk_rank[chunk.chunk_id] = rank
        for span in chunk.spans:
            self._place(span.span_id, chunk.chunk_id, rank, span.start)

    def _from_pair(self, pair: FCPair) -> None:
        if pair.span_id in self.chunk_of:
            return  # the first claim naming a span places it
        chunk = pair.chunk_id or pair.passage_id
        rank = _rank(pair.retrieval_rank)
        if chunk is not None:
            rank = self.chunk_rank[chunk] = min(self.chunk_rank.get(chunk, _LAST), rank)
        self._place(pair.span_id, chunk, rank, pair.start)

    def _place(self, span_id: str, chunk: str | None, rank: float, start: int | None) -> None:
        self.chunk_of[span_id] = chunk
        self.rank[span_id] = rank
        self.start[span_id] = _rank(start)

    def order(self, span_id: str) -> tuple[float, str, float]:
        """(chunk rank, chunk id, start offset): the cap order and the MSE's tie order.
        Offsets compare only within a chunk (chunks of equal rank go by id), so the
        length of a text never decides a tie."""
        chunk = self.chunk_of[span_id]
        rank = self.chunk_rank[chunk] if chunk is not None else self.rank[span_id]
        return (rank, chunk or "", self.start[span_id])

    def eligible_spans(self, caps: Caps) -> set[str]:
        """Spans of the first `max_chunks` chunks, at most `max_spans_per_chunk` each."""
        chunks = sorted(self.chunk_rank, key=lambda c: (self.chunk_rank[c], c))
        kept_chunks = set(chunks[: caps.max_chunks])
        by_chunk: dict[str, list[str]] = {}
        eligible: set[str] = set()
        for span_id, chunk in self.chunk_of.items():
            if chunk is None:
                eligible.add(span_id)
            elif chunk in kept_chunks:
                by_chunk.setdefault(chunk, []).append(span_id)
        for spans in by_chunk.values():
            spans.sort(key=lambda s: (self.start[s], s))
            eligible.update(spans[: caps.max_spans_per_chunk])
        return eligible


def round_robin(counts: list[int], budget: int) -> list[int]:
    """Round r = 1, 2, ...: each claim in order gets its r-th span while the total is
    below `budget`. (20, 20, 20) with 50 -> (17, 17, 16)."""
    taken = [0] * len(counts)
    total = 0
    progressed = True
    while progressed and total < budget:
        progressed = False
        for i, count in enumerate(counts):
            if taken[i] < count and total < budget:
                taken[i] += 1
                total += 1
                progressed = True
    return taken


def apply_caps(response: FCResponse, admitted: list[Admitted], caps: Caps) -> list[Capped]:
    """Every claim's kept spans, in cap order (chunk rank, start offset, span id)."""
    scored = [a.pairs for a in admitted[: caps.max_claims]]
    positions = _Positions(response, scored)
    eligible = positions.eligible_spans(caps)
    candidates = [
        sorted(
            (p for p in pairs if p.span_id in eligible),
            key=lambda p: (*positions.order(p.span_id), p.span_id),
        )[: caps.max_spans_per_claim]
        for pairs in scored
    ]
    taken = round_robin([len(c) for c in candidates], caps.max_pairs)
    capped: list[Capped] = []
    for index, claim in enumerate(admitted):
        if index >= caps.max_claims:
            capped.append(Capped(kept=[], n_admitted=len(claim.pairs), beyond_max_claims=True))
            continue
        kept = candidates[index][: taken[index]]
        kept_ids = {p.span_id for p in kept}
        sets = [s for s in claim.set_scores if set(s.span_ids) <= kept_ids]
        position = {p.span_id: positions.order(p.span_id) for p in kept}
        capped.append(
            Capped(
                kept=kept,
                n_admitted=len(claim.pairs),
                beyond_max_claims=False,
                set_scores=sets,
                position=position,
            )
        )
    return capped


__all__ = ["Admitted", "Capped", "admit", "apply_caps", "round_robin"]
