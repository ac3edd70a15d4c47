"""Verifiers label a claim against evidence or model knowledge.

Kinds: internal knowledge, provided context, retrieved corpus and NLI prompt (one
`LLMVerifier` class), a local transformers NLI model (`LocalNLIVerifier`, needs the
`local` extra, imported lazily), and `OverlapVerifier`, a baseline that needs no model.
Each kind is one factory in `assay.core.registry.VERIFIERS` (see `assay.core.building`).
"""

from typing import Any

from assay.core.registry import VERIFIERS
from assay.core.verification import ClaimToVerify, EvidenceUse, Verdict, VerdictLabel, Verifier
from assay.parsing._verification import (
    LEGACY_PARSER_VERSION,
    LEGACY_PARSER_VERSIONS,
    VERIFY_PARSER_VERSION,
    LegacyRule,
    ParsedVerification,
    parse_nli,
    parse_true_false,
    parse_true_false_legacy,
)
from assay.verifiers._baseline import OverlapVerifier
from assay.verifiers._llm import LLMVerifier, Retriever, VerifierKind
from assay.verifiers._llm_kinds import LLMVerifierParams

VERIFIERS.add_lazy(
    "nli-local",
    "assay.verifiers._nli_kind:nli_local",
    description="a local NLI classifier (transformers, model = hf-nli/<dir>), no API",
)


def __getattr__(name: str) -> Any:
    if name == "LocalNLIVerifier":  # torch/transformers load only when asked for
        from assay.verifiers._nli_local import LocalNLIVerifier

        return LocalNLIVerifier
    raise AttributeError(name)


__all__ = [
    "LEGACY_PARSER_VERSION",
    "LEGACY_PARSER_VERSIONS",
    "VERIFY_PARSER_VERSION",
    "LegacyRule",
    "ClaimToVerify",
    "EvidenceUse",
    "LLMVerifier",
    "LLMVerifierParams",
    "LocalNLIVerifier",
    "OverlapVerifier",
    "ParsedVerification",
    "Retriever",
    "Verdict",
    "VerdictLabel",
    "Verifier",
    "VerifierKind",
    "parse_nli",
    "parse_true_false",
    "parse_true_false_legacy",
]
