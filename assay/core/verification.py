"""The verifier contract: one typed verdict per claim, whatever the method."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from assay.core.answers import Passage
from assay.core.outcomes import CallAccounting, Status

# `defer_build=True`: a model's validator is built when first used, not on import, so a
# command that never uses these models (a ForceBench run uses none of factuality's, items'
# or the gate's) does not pay for building them (~30 ms of start-up over core's models).


class VerdictLabel(StrEnum):
    SUPPORTED = "supported"
    UNSUPPORTED = "unsupported"
    CONTRADICTED = "contradicted"


class ClaimToVerify(BaseModel):
    """A claim plus everything a verifier may use: question, answer, given evidence."""

    model_config = ConfigDict(defer_build=True)

    claim_id: str
    claim: str
    question: str | None = None
    answer: str | None = None
    evidence: list[Passage] = Field(default_factory=list)


class EvidenceUse(BaseModel):
    """Which passage (and which part of it) a verdict rests on."""

    model_config = ConfigDict(defer_build=True)

    passage_id: str
    span: tuple[int, int] | None = None
    score: float | None = None


#: Where a pair's relation triple (s_support, s_conflict, s_limitation) comes from.
RelationSource = Literal["nli", "llm", "lexical"]
#: How a pair's scores were obtained: a local NLI model's softmax, probabilities stated in
#: an LLM's answer, a label with its confidence (the other classes 0), token overlap.
ScoreSource = Literal["nli_softmax", "llm_probability", "label_confidence", "lexical"]
LimitationSource = Literal["lexicon", "llm"]


class SentenceSpan(BaseModel):
    """A sentence of an evidence passage: `text[start:end]` in code points (Python str
    indices); `span_id` is unique within a claim's evidence (`<passage_id>#s<index>`)."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    span_id: str
    passage_id: str
    start: int = Field(ge=0)
    end: int = Field(ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> SentenceSpan:
        if self.end < self.start:
            raise ValueError(f"span {self.span_id!r} ends before it starts")
        return self


class ContextPassage(BaseModel):
    """One passage of a premise made of several (an LLM shown the whole context)."""

    model_config = ConfigDict(defer_build=True)

    passage_id: str = Field(description="The passage's id in the corpus.")
    doc_id: str | None = Field(default=None, description="The passage's document.")
    page: int | str | None = Field(default=None, description="The passage's page in its document.")
    retrieval_rank: int | None = Field(
        default=None, description="The passage's retrieval rank, 1 = best."
    )
    retrieval_score_raw: float | None = Field(
        default=None, description="The retriever's own score."
    )
    retrieval_score: float | None = Field(
        default=None, description="The retrieval score mapped to [0, 1]."
    )


class ScoredPair(BaseModel):
    """One scored (claim, premise) pair: the evidence a policy may use.

    The premise is a passage, a window of one (`chunk_id`, `start`/`end`), a sentence
    (`span_id`), or several passages read together (`context`, `passage_id` null).
    `start`/`end` are code-point offsets into the passage text. Fields a verifier cannot
    know are null. Scores are recorded as produced and not range-checked here: a policy
    must see a NaN or out-of-range score to withhold the claim, not a load error.
    """

    model_config = ConfigDict(defer_build=True)

    passage_id: str | None = Field(
        default=None, description="The premise's passage; null for a context of several."
    )
    doc_id: str | None = Field(default=None, description="The passage's document.")
    page: int | str | None = Field(default=None, description="The passage's page in its document.")
    chunk_id: str | None = Field(
        default=None, description="The window of the passage scored, if a window."
    )
    span_id: str | None = Field(default=None, description="The sentence scored, if a sentence.")
    start: int | None = Field(
        default=None, description="Start of the premise in the passage (code points)."
    )
    end: int | None = Field(
        default=None, description="End of the premise in the passage (code points)."
    )
    context: list[ContextPassage] | None = Field(
        default=None, description="The passages of a premise read together."
    )
    retrieval_rank: int | None = Field(
        default=None, description="The passage's retrieval rank, 1 = best."
    )
    retrieval_score_raw: float | None = Field(
        default=None, description="The retriever's own score."
    )
    retrieval_score: float | None = Field(
        default=None, description="The retrieval score mapped to [0, 1]."
    )
    retrieval_normalization: str | None = Field(
        default=None, description="How retrieval_score was mapped from the raw score."
    )
    p_entail: float | None = Field(
        default=None, description="Probability the premise entails the claim."
    )
    p_contradict: float | None = Field(
        default=None, description="Probability the premise contradicts the claim."
    )
    p_neutral: float | None = Field(default=None, description="Probability it does neither.")
    s_support: float | None = Field(default=None, description="Support score the policies read.")
    s_conflict: float | None = Field(default=None, description="Conflict score the policies read.")
    s_limitation: float | None = Field(
        default=None, description="Limitation score: the premise qualifies the claim."
    )
    relation_source: RelationSource = Field(description="What related the claim to the premise.")
    score_source: ScoreSource = Field(description="How the scores were obtained.")
    limitation_source: LimitationSource | None = Field(
        default=None, description="What gave s_limitation."
    )


class SetScore(BaseModel):
    """A verifier's scores for several spans read together
    (docs/reference/policies/fail-closed.md#inputs-and-scores)."""

    model_config = ConfigDict(defer_build=True)

    span_ids: list[str] = Field(min_length=1, description="The spans read together, sorted.")
    p_entail: float | None = Field(
        default=None, description="Probability the spans together entail the claim."
    )
    p_contradict: float | None = Field(default=None, description="Probability they contradict it.")
    p_neutral: float | None = Field(default=None, description="Probability they do neither.")

    @field_validator("span_ids")
    @classmethod
    def _sorted(cls, ids: list[str]) -> list[str]:
        return sorted(ids)


class Verdict(CallAccounting):
    """`label` is None unless `status` is ok: a failure is never read as a label.

    `pairs` are every (claim, premise) pair the verifier scored, whatever the verdict
    rests on; `evidence` stays the verdict's own best evidence. `pairs_dropped_by_cap`
    counts the premises a cost cap kept the verifier from scoring (absent from `pairs`).
    """

    model_config = ConfigDict(defer_build=True)

    status: Status
    label: VerdictLabel | None = None
    score: float | None = Field(default=None, ge=0.0, le=1.0)
    evidence: list[EvidenceUse] = Field(default_factory=list)
    pairs: list[ScoredPair] = Field(default_factory=list)
    set_scores: list[SetScore] = Field(default_factory=list)
    pairs_dropped_by_cap: int = Field(
        default=0, ge=0, description="Premises a cost cap left unscored (policies: never scored)."
    )
    raw_output: str | None = None
    parsed: dict[str, Any] | None = None
    error: str | None = None


@runtime_checkable
class Verifier(Protocol):
    @property
    def id(self) -> str: ...

    def describe(self) -> dict[str, Any]: ...

    async def verify(self, item: ClaimToVerify) -> Verdict: ...
