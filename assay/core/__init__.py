"""The contracts every other part of assay is written against.

Outcomes, the items judged (ForceBench pairs, answers and passages), the judge /
decomposer / verifier protocols and their results, the records written to a run
directory, and the registries plugins add to. `core` imports nothing from the rest of
assay except `errors`, so every other subpackage can import it.
"""

from assay.core.answers import AnswerItem, GoldClaim, Passage
from assay.core.decomposition import Claim, Decomposer, Decomposition, Sentence
from assay.core.judging import Judge, JudgeItem, Judgment
from assay.core.outcomes import Status, Usage
from assay.core.pairs import Axis, ForcePair, Member
from assay.core.records import (
    AnswerRecord,
    ClaimRecord,
    JudgmentRecord,
    SentenceRecord,
    VerificationRecord,
)
from assay.core.verification import ClaimToVerify, EvidenceUse, Verdict, VerdictLabel, Verifier

__all__ = [
    "AnswerItem",
    "AnswerRecord",
    "Axis",
    "Claim",
    "ClaimRecord",
    "ClaimToVerify",
    "Decomposer",
    "Decomposition",
    "EvidenceUse",
    "ForcePair",
    "GoldClaim",
    "Judge",
    "JudgeItem",
    "Judgment",
    "JudgmentRecord",
    "Member",
    "Passage",
    "Sentence",
    "SentenceRecord",
    "Status",
    "Usage",
    "Verdict",
    "VerdictLabel",
    "VerificationRecord",
    "Verifier",
]
