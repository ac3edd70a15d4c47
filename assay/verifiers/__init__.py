"""Verifiers label a claim against evidence or model knowledge.

Concrete verifiers (internal knowledge, provided context, retrieval, NLI) arrive with
the factuality issue; this package holds the shared verdict contract.
"""

from assay.verifiers._types import Verdict, VerdictLabel, Verifier

__all__ = ["Verdict", "VerdictLabel", "Verifier"]
