"""Sentence spans of evidence passages, with code-point offsets.

A fail-closed renderer shows a claim as verified only with the sentences that entail
it, so evidence is addressed by sentence: `text[start:end]` is the sentence exactly
(Python string indices are code points). The split is the project's rule-based
sentence splitter, the one that splits answers.
"""

from __future__ import annotations

from assay.core.verification import SentenceSpan
from assay.decomposers._sentences import SPLITTER_VERSION, split_sentences

__all__ = ["SPLITTER_VERSION", "chunk_id", "sentence_spans", "span_id"]


def span_id(passage_id: str, index: int) -> str:
    """The id of a passage's `index`-th sentence: unique within a claim's evidence."""
    return f"{passage_id}#s{index}"


def chunk_id(passage_id: str, index: int) -> str:
    """The id of a passage's `index`-th scored window."""
    return f"{passage_id}#c{index}"


def sentence_spans(passage_id: str, text: str) -> list[SentenceSpan]:
    """The sentences of one passage in order; blank text has none."""
    return [
        SentenceSpan(
            span_id=span_id(passage_id, s.id), passage_id=passage_id, start=s.span[0], end=s.span[1]
        )
        for s in split_sentences(text)
    ]
