"""Premise windows: each evidence passage split into overlapping token windows that fit
the NLI model next to the claim, with boundaries between words; or, by sentence, each
sentence of a passage as its own premise (windowed only when it alone is too long)."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from assay.core.answers import Passage
from assay.core.verification import ClaimToVerify
from assay.verifiers._spans import sentence_spans

Premise = Literal["chunk", "sentence"]

Encoded = Mapping[str, tuple[list[tuple[int, int]], list[int | None]]]


@dataclass(frozen=True)
class EvidenceChunk:
    """A window of one passage: what the model reads as the premise."""

    passage_id: str
    span: tuple[int, int]  # characters of passage.text
    tokens: tuple[int, int]  # tokens of the passage, without special tokens
    text: str
    span_id: str | None = None  # the sentence this window lies in (premise "sentence")


def token_windows(word_ids: Sequence[int | None], size: int, overlap: int) -> list[tuple[int, int]]:
    """Windows of at most `size` tokens covering all tokens, consecutive ones sharing
    about `overlap` tokens; boundaries fall between words unless a word alone is longer
    than a window."""
    n = len(word_ids)
    if n == 0:
        return []

    def continues(i: int) -> bool:  # token i is inside the word of token i - 1
        return word_ids[i] is not None and word_ids[i] == word_ids[i - 1]

    out: list[tuple[int, int]] = []
    start = 0
    while True:
        end = min(start + size, n)
        if end < n:
            b = end
            while b > start + 1 and continues(b):
                b -= 1
            if not continues(b):
                end = b
        out.append((start, end))
        if end >= n:
            return out
        nxt = max(end - overlap, start + 1)
        b = nxt
        while b > start + 1 and continues(b):
            b -= 1
        start = nxt if continues(b) else b


class PassageChunker:
    """Splits passages into premise windows for one tokenizer and token limit.

    A window holds at most `chunk_tokens` (default: all that fit beside the claim and
    the special tokens); consecutive windows share about `chunk_stride` tokens.
    """

    def __init__(
        self, tokenizer: Any, limit: int, *, chunk_tokens: int | None, chunk_stride: int
    ) -> None:
        self.tokenizer = tokenizer
        self.limit = limit
        self.chunk_tokens = chunk_tokens
        self.chunk_stride = chunk_stride

    def size(self, claim_tokens: int) -> int:
        specials = int(self.tokenizer.num_special_tokens_to_add(pair=True))
        budget = self.limit - specials - claim_tokens
        return max(1, min(self.chunk_tokens or budget, budget))

    def claim_fits(self, claim_tokens: int) -> bool:
        """A claim may use at most half the window; a longer one is not judged."""
        return claim_tokens <= self.limit // 2

    def claim_lengths(self, claims: Sequence[str]) -> list[int]:
        if not claims:
            return []
        encoded = self.tokenizer(list(claims), add_special_tokens=False)
        return [len(ids) for ids in encoded["input_ids"]]

    def encode(
        self, texts: Sequence[str]
    ) -> dict[str, tuple[list[tuple[int, int]], list[int | None]]]:
        """Character offsets and word ids of each distinct passage text."""
        unique = list(dict.fromkeys(texts))
        if not unique:
            return {}
        enc = self.tokenizer(unique, add_special_tokens=False, return_offsets_mapping=True)
        return {
            text: ([(int(a), int(b)) for a, b in enc["offset_mapping"][i]], enc.word_ids(i))
            for i, text in enumerate(unique)
        }

    def chunks(
        self, item: ClaimToVerify, size: int, encoded: Encoded, premise: Premise = "chunk"
    ) -> list[EvidenceChunk]:
        """The premises of a claim, passage by passage, in order."""
        overlap = min(self.chunk_stride, size // 2)
        out: list[EvidenceChunk] = []
        for passage in item.evidence:
            offsets, word_ids = encoded[passage.text]
            if premise == "sentence":
                out += _sentence_windows(passage, offsets, word_ids, size, overlap)
                continue
            for s, e in token_windows(word_ids, size, overlap):
                span = (offsets[s][0], offsets[e - 1][1])
                out.append(EvidenceChunk(passage.id, span, (s, e), passage.text[span[0] : span[1]]))
        return out


def _sentence_windows(
    passage: Passage,
    offsets: list[tuple[int, int]],
    word_ids: list[int | None],
    size: int,
    overlap: int,
) -> list[EvidenceChunk]:
    """One premise per sentence of the passage: its tokens, windowed like a passage when
    the sentence alone does not fit. A sentence with no token is not scored."""
    starts = [a for a, _ in offsets]
    ends = [b for _, b in offsets]
    out: list[EvidenceChunk] = []
    for sentence in sentence_spans(passage.id, passage.text):
        lo = bisect_right(ends, sentence.start)  # a token with a leading space counts
        hi = max(lo, bisect_left(starts, sentence.end))
        for s, e in token_windows(word_ids[lo:hi], size, overlap):
            first, last = lo + s, lo + e
            span = (
                max(offsets[first][0], sentence.start),
                min(offsets[last - 1][1], sentence.end),
            )
            text = passage.text[span[0] : span[1]]
            out.append(EvidenceChunk(passage.id, span, (first, last), text, sentence.span_id))
    return out
