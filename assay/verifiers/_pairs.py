"""Scored pairs as each built-in verifier records them.

A verdict keeps its best evidence; policies need every (claim, premise) pair a verifier
scored, with the three NLI probabilities where the verifier has them and the relation
triple (support, conflict, limitation) of
docs/reference/policies/claim-selective.md#pooled-scores. These builders turn what a verifier
computed into `ScoredPair`s; nothing here changes a verdict.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from assay.core.answers import Passage
from assay.core.verification import ContextPassage, ScoredPair, VerdictLabel
from assay.verifiers._nli_chunks import EvidenceChunk
from assay.verifiers._relations import lexical_triple, lexicon_limitation
from assay.verifiers._spans import chunk_id

__all__ = [
    "LEXICAL_LABELS",
    "lexical_pair",
    "lexical_probabilities",
    "llm_pair",
    "nli_pair",
    "nli_pairs",
    "probability",
]


def probability(value: float | None) -> float | None:
    """A model probability into [0, 1]: float32 softmax may land a hair outside it."""
    if value is None:
        return None
    return min(1.0, max(0.0, float(value)))


LEXICAL_LABELS = (
    "contradiction if s_conflict > 0 and s_conflict >= threshold, else entailment if "
    "overlap >= threshold, else neutral; p_label = overlap (1 - overlap for neutral), "
    "the other two 0"
)


def lexical_probabilities(
    ov: float, conflict: float, threshold: float
) -> tuple[float, float, float]:
    """(p_entail, p_contradict, p_neutral) of a lexical pair in the `label_confidence` mode
    form: contradiction when s_conflict (ov times a conflict cue) is positive and reaches
    the verifier's threshold, else entailment when ov reaches it, else neutral. The
    label's confidence is ov (1 - ov for neutral); the other two are 0."""
    if conflict > 0.0 and conflict >= threshold:
        return 0.0, ov, 0.0
    if ov >= threshold:
        return ov, 0.0, 0.0
    return 0.0, 0.0, 1.0 - ov


def lexical_pair(tokens: frozenset[str], passage: Passage, threshold: float) -> ScoredPair:
    """The overlap verifier's pair for one whole passage: the lexical relation triple and
    a label with its confidence (so a fail-closed policy can read it)."""
    triple = lexical_triple(tokens, passage.text)
    p_entail, p_contradict, p_neutral = lexical_probabilities(
        triple.support, triple.conflict, threshold
    )
    return ScoredPair(
        passage_id=passage.id,
        doc_id=passage.doc_id,
        page=passage.page,
        p_entail=p_entail,
        p_contradict=p_contradict,
        p_neutral=p_neutral,
        s_support=triple.support,
        s_conflict=triple.conflict,
        s_limitation=triple.limitation,
        relation_source="lexical",
        score_source="label_confidence",
        limitation_source="lexicon",
    )


def nli_pair(
    probs: Mapping[str, float],
    limitation: float,
    *,
    passage: Passage,
    chunk_id: str,
    span: tuple[int, int],
    span_id: str | None = None,
) -> ScoredPair:
    """A local NLI model's pair: its class probabilities, s_support = p_entail and
    s_conflict = p_contradict (null for a model without a contradiction class)."""
    p_entail = probability(probs["entailment"])
    p_contradict = probability(probs.get("contradiction"))
    return ScoredPair(
        passage_id=passage.id,
        doc_id=passage.doc_id,
        page=passage.page,
        chunk_id=chunk_id,
        span_id=span_id,
        start=span[0],
        end=span[1],
        p_entail=p_entail,
        p_contradict=p_contradict,
        p_neutral=probability(probs.get("neutral")),
        s_support=p_entail,
        s_conflict=p_contradict,
        s_limitation=limitation,
        relation_source="nli",
        score_source="nli_softmax",
        limitation_source="lexicon",
    )


def nli_pairs(
    chunks: Sequence[EvidenceChunk],
    probs: Sequence[Mapping[str, float]],
    tokens: frozenset[str],
    passages: Mapping[str, Passage],
) -> list[ScoredPair]:
    """One pair per scored window, in scoring order; windows are numbered per passage
    (`<passage_id>#c<k>`) and the limitation score reads the window's own text."""
    seen: Counter[str] = Counter()
    out: list[ScoredPair] = []
    for chunk, p in zip(chunks, probs, strict=True):
        index = seen[chunk.passage_id]
        seen[chunk.passage_id] += 1
        out.append(
            nli_pair(
                p,
                lexicon_limitation(tokens, chunk.text),
                passage=passages[chunk.passage_id],
                chunk_id=chunk_id(chunk.passage_id, index),
                span=chunk.span,
                span_id=chunk.span_id,
            )
        )
    return out


def _number(obj: Mapping[str, Any] | None, key: str) -> float | None:
    """A numeric answer field as given (a policy checks its range); else None."""
    value = (obj or {}).get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _label_probabilities(label: VerdictLabel | None) -> tuple[float, float, float]:
    """(p_entail, p_contradict, p_neutral) of a bare verdict: its label with
    confidence 1, the other two 0 (`label_confidence`; unsupported = neutral)."""
    if label is VerdictLabel.SUPPORTED:
        return 1.0, 0.0, 0.0
    if label is VerdictLabel.CONTRADICTED:
        return 0.0, 1.0, 0.0
    return 0.0, 0.0, 1.0


def _where(context: Sequence[ContextPassage]) -> dict[str, Any]:
    """Identity fields: one passage's own, or the list of several (`passage_id` null)."""
    if len(context) == 1:
        return context[0].model_dump()
    return {"context": list(context)}


def llm_pair(
    *,
    nli: bool,
    label: VerdictLabel | None,
    entail_probability: float | None,
    answer: Mapping[str, Any] | None,
    context: Sequence[ContextPassage],
    premise: str,
    tokens: frozenset[str],
    retrieval_normalization: str | None = None,
) -> ScoredPair:
    """An LLM verifier's single pair: everything it was shown, read together.

    An NLI prompt gives p_entail (and p_contradict / p_neutral when the answer states
    `contradiction_probability` / `neutral_probability`); a True/False prompt gives a
    label (`label_confidence`). An answer with `support` / `conflict` / `limitation`
    numbers sets the relation triple itself (source `llm`); the limitation score is
    otherwise the lexicon's over the whole premise.
    """
    if nli:
        p = (
            entail_probability,
            _number(answer, "contradiction_probability"),
            _number(answer, "neutral_probability"),
        )
    else:
        p = _label_probabilities(label)
    stated = {k: _number(answer, k) for k in ("support", "conflict", "limitation")}
    own = any(v is not None for v in stated.values())
    limitation = stated["limitation"]
    return ScoredPair(
        **_where(context),
        retrieval_normalization=retrieval_normalization,
        p_entail=p[0],
        p_contradict=p[1],
        p_neutral=p[2],
        s_support=stated["support"] if own else p[0],
        s_conflict=stated["conflict"] if own else p[1],
        s_limitation=lexicon_limitation(tokens, premise) if limitation is None else limitation,
        relation_source="llm" if own or not nli else "nli",
        score_source="llm_probability" if nli else "label_confidence",
        limitation_source="lexicon" if limitation is None else "llm",
    )
