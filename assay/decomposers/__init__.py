"""Decomposers split an answer into verifiable claims."""

from assay.decomposers._types import Claim, Decomposer, Decomposition, Sentence

__all__ = ["Claim", "Decomposer", "Decomposition", "Sentence"]
