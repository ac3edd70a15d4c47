"""Reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009) and a hybrid retriever."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any, TypeVar

from assay.retrieval._corpus import Corpus, Hit, Retriever, check_k
from assay.retrieval._normalise import describe_normalization

T = TypeVar("T", bound=Hashable)


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[T]], *, rrf_k: float = 60
) -> list[tuple[T, float]]:
    """Fuse ranked lists of ids: score(d) = Σ_lists 1 / (rrf_k + rank(d)), rank from 1.

    An id absent from a list contributes nothing for it. Returns every id once, best
    first; ties go to the better best rank, then to the earlier list.
    """
    if rrf_k < 0:
        raise ValueError(f"rrf_k must be >= 0, got {rrf_k!r}")
    score: dict[T, float] = {}
    best: dict[T, tuple[int, int]] = {}  # id -> (best rank, list index achieving it)
    for li, ranking in enumerate(rankings):
        seen: set[T] = set()
        for rank, item in enumerate(ranking, start=1):
            if item in seen:
                raise ValueError(f"ranking {li} lists {item!r} twice")
            seen.add(item)
            score[item] = score.get(item, 0.0) + 1.0 / (rrf_k + rank)
            if item not in best or rank < best[item][0]:
                best[item] = (rank, li)
    order = sorted(score, key=lambda item: (-score[item], best[item]))
    return [(item, score[item]) for item in order]


class HybridRetriever:
    """BM25 and dense rankings fused with reciprocal rank fusion.

    Each component returns its top `max(candidates, k)` passages; their rankings are
    fused with `reciprocal_rank_fusion(rrf_k=rrf_k)` (BM25 first, so it wins exact ties)
    and the top `k` come back, `score` being the fused score.
    """

    kind = "hybrid"
    score_normalization = "best_fused"

    def __init__(
        self,
        bm25: Retriever,
        dense: Retriever,
        *,
        method: str = "rrf",
        rrf_k: float = 60,
        candidates: int = 100,
    ) -> None:
        if method != "rrf":
            raise ValueError(f"unknown fusion method {method!r}; known: 'rrf'")
        if rrf_k < 0:
            raise ValueError(f"rrf_k must be >= 0, got {rrf_k!r}")
        check_k(candidates)
        a, b = bm25.corpus, dense.corpus
        if a is not b and (a.sha256 != b.sha256 or len(a) != len(b)):
            raise ValueError("the two retrievers must search the same corpus")
        self.bm25 = bm25
        self.dense = dense
        self.method = method
        self.rrf_k = rrf_k
        self.candidates = candidates

    @property
    def corpus(self) -> Corpus:
        return self.bm25.corpus

    def _fuse(self, lexical: list[Hit], semantic: list[Hit], k: int) -> list[Hit]:
        fused = reciprocal_rank_fusion(
            [[h.id for h in lexical], [h.id for h in semantic]], rrf_k=self.rrf_k
        )
        corpus = self.bm25.corpus
        return [
            Hit(passage=corpus.get(pid), score=s, rank=r)
            for r, (pid, s) in enumerate(fused[:k], start=1)
        ]

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """The top `k` passages by fused score; [] for a blank query."""
        return self.search_many([query], k)[0]

    def search_many(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        check_k(k)
        depth = max(self.candidates, k)
        lexical = self.bm25.search_many(queries, depth)
        semantic = self.dense.search_many(queries, depth)
        return [
            self._fuse(lex, sem, k) if q.strip() else []
            for q, lex, sem in zip(queries, lexical, semantic, strict=True)
        ]

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "method": self.method,
            "rrf_k": self.rrf_k,
            "candidates": self.candidates,
            "formula": "sum over rankings of 1 / (rrf_k + rank), rank from 1",
            "components": {"bm25": self.bm25.describe(), "dense": self.dense.describe()},
            "score_normalization": describe_normalization(self.score_normalization),
        }
