"""Okapi BM25 over a local corpus: the index and scoring are bm25s's, the analyser ours.

bm25s (`method="lucene"`, float64) builds the sparse term→passage score matrix once; a
query sums its tokens' rows. bm25s's Lucene variant leaves out the constant (k1 + 1)
factor of the textbook formula; it is multiplied back so scores stay those of assay 0.1
(tests/test_libraries_bm25.py compares them with rankings recorded from the old code).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from importlib.metadata import version
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.retrieval._corpus import Corpus, Hit, check_k, make_hits, top_k
from assay.retrieval._normalise import describe_normalization
from assay.retrieval._tokenize import DEFAULT_TOKENIZER, describe_tokenizer

#: bm25s's name for the scoring variant used (Lucene's idf, Robertson's tf saturation).
BM25S_METHOD = "lucene"


def _passage_text(corpus: Corpus, i: int) -> str:
    passage = corpus.passages[i]
    return f"{passage.title}\n{passage.text}" if passage.title else passage.text


class BM25Retriever:
    """Okapi BM25 with Lucene's non-negative idf.

    score(q, d) = Σ_{t ∈ q} qtf(t) · idf(t) · tf(t,d)·(k1+1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl))
    idf(t)      = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))

    `qtf` counts repeated query tokens; |d| is the passage's token count (title and text);
    avgdl the mean over the corpus. Only passages sharing at least one token with the
    query are returned, so a search may give fewer than `k` hits. Ties keep corpus order.
    """

    kind = "bm25"
    version = "1"
    score_normalization = "query_max"

    def __init__(
        self,
        corpus: Corpus,
        *,
        k1: float = 1.5,
        b: float = 0.75,
        tokenizer: Callable[[str], list[str]] = DEFAULT_TOKENIZER,
    ) -> None:
        if not (math.isfinite(k1) and k1 >= 0):
            raise ValueError(f"k1 must be a finite number >= 0, got {k1!r}")
        if not (0.0 <= b <= 1.0):
            raise ValueError(f"b must be in [0, 1], got {b!r}")
        import bm25s  # imports scipy.sparse: paid when an index is built, not on import

        self._corpus = corpus
        self.k1 = float(k1)
        self.b = float(b)
        self.tokenizer = tokenizer
        tokens = [tokenizer(_passage_text(corpus, i)) for i in range(len(corpus))]
        lengths = [len(t) for t in tokens]
        self.avgdl = float(np.mean(lengths)) if lengths else 0.0
        self._index: Any = bm25s.BM25(
            k1=self.k1, b=self.b, method=BM25S_METHOD, dtype="float64", int_dtype="int64"
        )
        self._vocab: dict[str, int] = {}
        if any(lengths):  # bm25s cannot index a corpus without a single token
            self._index.index(tokens, show_progress=False)
            self._vocab = {t: i for t, i in self._index.vocab_dict.items() if t}

    @property
    def corpus(self) -> Corpus:
        return self._corpus

    @property
    def vocabulary_size(self) -> int:
        return len(self._vocab)

    def idf(self, term: str) -> float:
        """idf of an (already tokenized) term; 0.0 when no passage contains it."""
        tid = self._vocab.get(term)
        if tid is None:
            return 0.0
        indptr = self._index.scores["indptr"]
        df = int(indptr[tid + 1] - indptr[tid])
        return math.log1p((len(self._corpus) - df + 0.5) / (df + 0.5))

    def scores(self, query: str) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """(indices of passages matching the query ascending, their BM25 scores)."""
        ids = [self._vocab[t] for t in self.tokenizer(query) if t in self._vocab]
        if not ids:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        dense = np.asarray(self._index.get_scores_from_ids(ids), dtype=np.float64)
        hit = np.flatnonzero(dense > 0.0)
        return hit.astype(np.int64, copy=False), dense[hit] * (self.k1 + 1.0)

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """The top `k` passages for `query`; [] when no query token is in the corpus."""
        check_k(k)
        ids, scores = self.scores(query)
        return make_hits(self._corpus, top_k(ids, scores, k))

    def search_many(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        """`search` for each query, in order."""
        check_k(k)
        return [self.search(q, k) for q in queries]

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "version": self.version,
            "k1": self.k1,
            "b": self.b,
            "idf": "ln(1 + (N - df + 0.5) / (df + 0.5))",
            "fields": ["title", "text"],
            "library": {"name": "bm25s", "version": version("bm25s"), "method": BM25S_METHOD},
            "tokenizer": describe_tokenizer(self.tokenizer),
            "corpus": self._corpus.describe(),
            "score_normalization": describe_normalization(self.score_normalization),
        }

    def __repr__(self) -> str:
        return f"BM25Retriever(k1={self.k1}, b={self.b}, corpus={self._corpus!r})"
