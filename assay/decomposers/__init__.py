"""Decomposers split an answer into verifiable claims.

Each kind (sentence, llm, given) is one factory in `assay.core.registry.DECOMPOSERS`.
"""

from assay.core.decomposition import Claim, Decomposer, Decomposition, Sentence
from assay.decomposers._baseline import GivenDecomposer, SentenceDecomposer
from assay.decomposers._llm import LLMDecomposer, LLMDecomposerParams, claim_id
from assay.decomposers._sentences import SPLITTER_VERSION, split_sentences
from assay.parsing._claims import (
    DECOMPOSE_PARSER_VERSION,
    NO_CLAIM,
    ParsedClaims,
    parse_claims,
)

__all__ = [
    "DECOMPOSE_PARSER_VERSION",
    "NO_CLAIM",
    "SPLITTER_VERSION",
    "Claim",
    "Decomposer",
    "Decomposition",
    "GivenDecomposer",
    "LLMDecomposer",
    "LLMDecomposerParams",
    "ParsedClaims",
    "Sentence",
    "SentenceDecomposer",
    "claim_id",
    "parse_claims",
    "split_sentences",
]
