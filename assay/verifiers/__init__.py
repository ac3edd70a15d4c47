"""Verifiers label a claim against evidence or model knowledge."""

from assay.verifiers._types import ClaimToVerify, EvidenceUse, Verdict, VerdictLabel, Verifier

__all__ = ["ClaimToVerify", "EvidenceUse", "Verdict", "VerdictLabel", "Verifier"]
