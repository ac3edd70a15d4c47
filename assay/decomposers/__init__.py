"""Decomposers split an answer into verifiable claims.

The decomposition pipeline (sentence splitting, condition-aware and atomic-fact LLM
decomposers) is specified in the factuality issue; this package holds its contract.
"""

from assay.decomposers._types import Claim, Decomposer, Decomposition

__all__ = ["Claim", "Decomposer", "Decomposition"]
