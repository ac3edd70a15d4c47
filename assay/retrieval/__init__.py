"""Retrieval over a local passage corpus: BM25, optional dense embeddings, RRF fusion.

Importing this package loads numpy only; torch and transformers (the `local` extra)
load when a `TransformersEmbedder` is built. See docs/reference/retrieval.md.
"""

from assay.retrieval._bm25 import BM25Retriever
from assay.retrieval._corpus import Corpus, Hit, Retriever, load_corpus
from assay.retrieval._dense import DenseRetriever, Embedder, TransformersEmbedder
from assay.retrieval._fusion import HybridRetriever, reciprocal_rank_fusion
from assay.retrieval._normalise import (
    NORMALIZATIONS,
    ScoreNormalization,
    normalise_scores,
    normalised_hits,
)
from assay.retrieval._tokenize import STOPWORDS, Tokenizer, tokenize

__all__ = [
    "NORMALIZATIONS",
    "STOPWORDS",
    "BM25Retriever",
    "Corpus",
    "DenseRetriever",
    "Embedder",
    "Hit",
    "HybridRetriever",
    "Retriever",
    "ScoreNormalization",
    "Tokenizer",
    "TransformersEmbedder",
    "load_corpus",
    "normalise_scores",
    "normalised_hits",
    "reciprocal_rank_fusion",
    "tokenize",
]
