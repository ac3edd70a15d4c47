"""Claims a dataset ships (ExpertQA, WiCE, JSONL `claims`), placed in their answer's sentences.

The data does not say which sentence a claim came from, so a claim is mapped when its
text occurs in exactly one sentence of the split answer, or else when exactly one
sentence holds at least `MIN_SHARE` of its content tokens. When every claim of an answer
maps, the answer gets one sentence record per sentence (claims-per-sentence is then
meaningful); otherwise it gets one record for the whole answer with no span, which the
metrics read as "claims not mapped to sentences" (claims-per-sentence: n/a).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from assay.core.answers import AnswerItem
from assay.core.decomposition import Claim, Sentence
from assay.core.outcomes import Status
from assay.core.records import SentenceRecord
from assay.judges._baseline_text import content_tokens

GIVEN_ID = "given"
MIN_SHARE = 0.8
_CITATION = re.compile(r"\[\d{1,3}(?:[-\u2013,] ?\d{1,3})*\]")
_SPACE = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _SPACE.sub(" ", _CITATION.sub("", text)).strip().lower()


def sentence_of(claim: str, sentences: list[Sentence]) -> int | None:
    """Index of the one sentence that holds `claim`, or None when none or several do."""
    text = _norm(claim)
    if text:
        hits = [i for i, s in enumerate(sentences) if text in _norm(s.text)]
        if len(hits) == 1:
            return hits[0]
        if hits:
            return None
    tokens = set(content_tokens(claim))
    if not tokens:
        return None
    close = [
        i
        for i, s in enumerate(sentences)
        if len(tokens & set(content_tokens(s.text))) / len(tokens) >= MIN_SHARE
    ]
    return close[0] if len(close) == 1 else None


def given_records(dataset: str, item: AnswerItem) -> list[SentenceRecord]:
    """Sentence records holding an answer's given claims (see the module docstring)."""
    from assay.decomposers import split_sentences

    gold = item.gold_claims or []
    sentences = split_sentences(item.answer)
    where = [sentence_of(c.text, sentences) for c in gold]
    if gold and any(w is None for w in where):
        claims = [Claim(id=c.id, text=c.text, sentence_id=0, span=None) for c in gold]
        return [_record(dataset, item, 0, item.answer, None, claims)]
    out: list[SentenceRecord] = []
    for k, sentence in enumerate(sentences):
        claims = [
            Claim(id=c.id, text=c.text, sentence_id=k, span=None)
            for c, w in zip(gold, where, strict=True)
            if w == k
        ]
        out.append(_record(dataset, item, k, sentence.text, sentence.span, claims))
    return out


def _record(
    dataset: str,
    item: AnswerItem,
    sentence_id: int,
    text: str,
    span: tuple[int, int] | None,
    claims: list[Claim],
) -> SentenceRecord:
    return SentenceRecord(
        dataset=dataset,
        answer_id=item.id,
        sentence_id=sentence_id,
        sentence=text,
        span=span,
        decomposer_id=GIVEN_ID,
        status=Status.OK,
        n_claims=len(claims),
        claims=claims,
        recorded_at=datetime.now(UTC),
    )
