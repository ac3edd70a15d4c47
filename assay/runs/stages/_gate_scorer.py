"""The gate scorer: retrieve a question's top `k1_expanded` passages, score every
(question, passage) pair with the gate's reranker, and build its `GateRecord`.

The reranker (`_gate_rerankers`) is a local cross-encoder run through a `Model` (response
cache, retries, accounting) like every other model, or the lexical baseline; the
retriever is one of `assay.retrieval`'s (BM25, dense, RRF fusion), the same classes the
retrieval verifier uses. A pair's passage text is `title\\ntext` (the text alone without
a title), the fields the retrievers index.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.core.answers import Passage
from assay.core.outcomes import Status
from assay.core.records import (
    GateCandidate,
    GateRecord,
    GateReranker,
    GateRetriever,
)
from assay.errors import ModelConfigError
from assay.models import ResponseCache
from assay.models._ray_pool import local_models_on, ray_placement
from assay.retrieval import Corpus, Hit, Retriever, load_corpus, normalised_hits
from assay.retrieval._identity import config_sha256
from assay.runs.spec._gate import GateRetrieval, GateSpec
from assay.runs.stages._gate_rerankers import PairScorer, PassagePair, Scored, pair_scorer


@dataclass(frozen=True)
class GateQuestion:
    """One question to gate: the answer it belongs to names it."""

    dataset: str
    question_id: str
    text: str


def passage_text(passage: Passage) -> str:
    return f"{passage.title}\n{passage.text}" if passage.title else passage.text


def build_retriever(corpus: Corpus, retrieval: GateRetrieval) -> Retriever:
    """BM25, dense, or the two fused by reciprocal rank (as the retrieval verifier)."""
    from assay.retrieval import (
        BM25Retriever,
        DenseRetriever,
        HybridRetriever,
        TransformersEmbedder,
    )

    if retrieval.kind == "bm25":
        return BM25Retriever(corpus)
    assert retrieval.dense_model is not None  # GateSpec refuses dense/hybrid without it
    dense = DenseRetriever(corpus, TransformersEmbedder(retrieval.dense_model))
    return dense if retrieval.kind == "dense" else HybridRetriever(BM25Retriever(corpus), dense)


def maxima(candidates: Sequence[GateCandidate], k1: int) -> float | None:
    """The best rerank score among candidates of retrieval rank <= k1 (None if none)."""
    scores = [c.rerank_score for c in candidates if c.retrieval_rank <= k1]
    kept = [s for s in scores if s is not None]
    return max(kept) if kept else None


class GateScorer:
    """Scores questions for one `[gate]`: retrieval, reranking, records.

    The corpus is read at construction (a bad file fails before the run starts); the
    retriever index and the reranker load on first use or in `preflight`.
    """

    def __init__(
        self,
        spec: GateSpec,
        retrieval: GateRetrieval,
        *,
        base_dir: Path,
        spec_path: str | None = None,
        cache: ResponseCache | None = None,
        use_cache: bool = True,
        refresh_cache: bool = False,
    ) -> None:
        self.spec = spec
        self.retrieval = retrieval
        self.spec_path = spec_path
        self.corpus = load_corpus(base_dir / retrieval.corpus)
        self.reranker: PairScorer = pair_scorer(
            spec,
            spec_path=spec_path,
            cache=cache,
            use_cache=use_cache,
            refresh_cache=refresh_cache,
        )
        self._retriever: Retriever | None = None
        self._placement = ray_placement()  # a dense index built later embeds where it was asked
        self._identity: tuple[GateReranker, GateRetriever] | None = None

    @property
    def gate_id(self) -> str:
        return self.spec.gate_id

    def retriever(self) -> Retriever:
        if self._retriever is None:
            with local_models_on(self._placement):
                self._retriever = build_retriever(self.corpus, self.retrieval)
        return self._retriever

    def preflight(self) -> None:
        """Load the reranker and build the index now, so a bad model fails early."""
        self.reranker.preflight()
        self.retriever()

    def identity(self) -> tuple[GateReranker, GateRetriever]:
        """The reranker and retriever blocks every record of this gate carries."""
        if self._identity is None:
            retriever = self.retriever()
            reranker = self.reranker.identity()
            described = retriever.describe()
            kind = str(described.get("kind", self.retrieval.kind))
            method = getattr(retriever, "score_normalization", None)
            found = GateRetriever(
                kind=kind, config_sha256=config_sha256(described), score_normalization=method
            )
            self._identity = (reranker, found)
        return self._identity

    def describe(self) -> dict[str, Any]:
        """For the manifest: the gate's settings, reranker and retriever. Never raises."""
        settings = self.spec.model_dump(exclude={"model", "name"})
        settings.update(corpus_field=self.retrieval.corpus_field, retriever=self.retrieval.kind)
        retriever: dict[str, Any] = {"kind": self.retrieval.kind, "corpus": self.corpus.describe()}
        if self._retriever is not None:
            retriever = self._retriever.describe()
        return {
            "id": self.gate_id,
            "reranker": self.reranker.describe(),
            "retriever": retriever,
            "settings": settings,
        }

    # ---- scoring -------------------------------------------------------------------
    async def score_many(self, questions: Sequence[GateQuestion]) -> list[GateRecord]:
        """One record per question, in order. Retrieval or inference failures become
        `api_error` records; a model that cannot load raises `ModelConfigError`."""
        if not questions:
            return []
        started = time.perf_counter()
        try:
            hits = await asyncio.to_thread(
                self.retriever().search_many, [q.text for q in questions], self.spec.k1_expanded
            )
        except ModelConfigError:
            raise
        except Exception as exc:  # a retriever that failed: every question's api_error
            error = f"retrieval failed: {type(exc).__name__}: {exc}"
            return [self._failed(q, [], error, started) for q in questions]
        pairs, rows = self._pairs(questions, hits)
        results = await self.reranker.score(pairs)
        return [
            self.record(q, h, [results[i] for i in r], started)
            for q, h, r in zip(questions, hits, rows, strict=True)
        ]

    def _pairs(
        self, questions: Sequence[GateQuestion], hits: Sequence[list[Hit]]
    ) -> tuple[list[PassagePair], list[list[int]]]:
        """The distinct (question, passage) pairs, and each question's rows in them."""
        pairs: list[PassagePair] = []
        row_of: dict[PassagePair, int] = {}
        rows: list[list[int]] = []
        for question, found in zip(questions, hits, strict=True):
            mine = []
            for hit in found:
                pair = PassagePair(query=question.text, passage=passage_text(hit.passage))
                if pair not in row_of:
                    row_of[pair] = len(pairs)
                    pairs.append(pair)
                mine.append(row_of[pair])
            rows.append(mine)
        return pairs, rows

    def record(
        self,
        question: GateQuestion,
        hits: list[Hit],
        results: list[Scored],
        started: float,
    ) -> GateRecord:
        """One question's record from its hits (best first) and the reranker's result
        for each hit: candidates, their scores and the two pool maxima. One failed pair
        fails the question (its scores are withheld, the logits kept)."""
        retrieval = normalised_hits(hits, self.identity()[1].score_normalization)
        failed = next((r.error for r in results if r.error is not None), None)
        candidates = [
            GateCandidate(
                passage_id=h.passage.id,
                doc_id=h.passage.doc_id,
                page=h.passage.page,
                retrieval_rank=h.rank,
                retrieval_score_raw=h.score,
                retrieval_score=retrieval[i],
                rerank_logit=results[i].logit,
                rerank_score=None if failed is not None else results[i].score,
            )
            for i, h in enumerate(hits)
        ]
        if failed is not None:
            return self._failed(question, candidates, failed, started)
        return self._base(
            question,
            candidates,
            started,
            status=Status.OK,
            s_initial=maxima(candidates, self.spec.k1_initial),
            s_expanded=maxima(candidates, self.spec.k1_expanded),
            cache_hit=bool(results) and all(r.cache_hit for r in results),
        )

    def _base(
        self,
        question: GateQuestion,
        candidates: list[GateCandidate],
        started: float,
        **fields: Any,
    ) -> GateRecord:
        reranker, retriever = self.identity()
        return GateRecord(
            dataset=question.dataset,
            question_id=question.question_id,
            gate_id=self.gate_id,
            reranker=reranker,
            retriever=retriever,
            k1_initial=self.spec.k1_initial,
            k1_expanded=self.spec.k1_expanded,
            top_k=self.spec.top_k,
            candidates=candidates,
            latency_s=round(time.perf_counter() - started, 6),
            **fields,
        )

    def _failed(
        self, question: GateQuestion, candidates: list[GateCandidate], error: str, started: float
    ) -> GateRecord:
        return self._base(question, candidates, started, status=Status.API_ERROR, error=error)
