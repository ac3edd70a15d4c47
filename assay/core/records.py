"""The per-judgment record written to `judgments.jsonl`, one JSON object per line."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from assay.core.answer_fields import (
    CLAIM_FIELDS,
    RESPONSE_FIELDS,
    ClaimFields,
    ResponseFields,
    omit_absent,
)
from assay.core.decomposition import Claim
from assay.core.outcomes import CallAccounting, PromptProvenance, Status
from assay.core.pairs import Axis, Member
from assay.core.verification import ScoredPair, SetScore


class JudgmentRecord(PromptProvenance, CallAccounting):
    """Everything about one judgment of one pair member by one judge.

    Carries the pair's axis and severity so metrics can be recomputed from this file
    alone. The key `(dataset, pair_id, member, judge_id)` is unique within a run; if a
    line for a key ever appears twice (a retried error), the last one wins.
    """

    model_config = ConfigDict(extra="ignore")

    dataset: str
    pair_id: str
    member: Member
    judge_id: str
    axis: Axis | None = None
    severity: int | None = None
    model_returned: str | None = None
    parser_version: str | None = None
    status: Status
    label: str | None = None
    score: float | None = None
    finish_reason: str | None = None
    raw_output: str | None = None
    refusal: str | None = None
    parsed: dict[str, Any] | None = None
    error: str | None = None
    recorded_at: datetime | None = None

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.dataset, self.pair_id, self.member.value, self.judge_id)


class SentenceRecord(PromptProvenance, CallAccounting):
    """How one sentence of an answer was decomposed (`sentences.jsonl`).

    Written after the sentence's claims, so its presence means the sentence is done; a
    sentence with zero claims is `ok` with `n_claims == 0`.
    """

    model_config = ConfigDict(extra="ignore")

    dataset: str
    answer_id: str
    sentence_id: int
    sentence: str
    span: tuple[int, int] | None = None
    decomposer_id: str
    status: Status
    n_claims: int = 0
    claims: list[Claim] = Field(
        default_factory=list, description="The sentence's claims; claims.jsonl is derived."
    )
    raw_output: str | None = None
    error: str | None = None
    recorded_at: datetime | None = None

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.dataset, self.answer_id, self.sentence_id)


class ClaimRecord(PromptProvenance, ClaimFields):
    """One claim (`claims.jsonl`) and what produced it, with the dataset's claim fields
    when it gives them."""

    model_config = ConfigDict(extra="ignore")

    dataset: str
    answer_id: str
    sentence_id: int
    claim_id: str
    claim: str
    span: tuple[int, int] | None = None
    decomposer_id: str
    gold_label: str | None = Field(default=None, description="From datasets that ship labels.")

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.dataset, self.answer_id, self.claim_id)

    @model_serializer(mode="wrap")
    def _omit_absent_fields(self, handler: SerializerFunctionWrapHandler) -> Any:
        """Claims of datasets without the policy fields dump byte for byte as before."""
        return omit_absent(handler(self), CLAIM_FIELDS)


class VerificationRecord(PromptProvenance, CallAccounting):
    """One verifier's verdict on one claim (`verifications.jsonl`)."""

    model_config = ConfigDict(extra="ignore")

    dataset: str
    answer_id: str
    claim_id: str
    sentence_id: int | None = None
    claim: str
    verifier_id: str
    parser_version: str | None = None
    status: Status
    label: str | None = Field(default=None, description="supported | unsupported | contradicted")
    score: float | None = None
    evidence: list[dict[str, Any]] = Field(default_factory=list)
    pairs: list[ScoredPair] = Field(
        default_factory=list, description="Every scored (claim, passage/span) pair."
    )
    set_scores: list[SetScore] = Field(default_factory=list)
    pairs_dropped_by_cap: int = Field(
        default=0, ge=0, description="Premises a cost cap left unscored."
    )
    gold_label: str | None = None
    finish_reason: str | None = None
    raw_output: str | None = None
    parsed: dict[str, Any] | None = None
    error: str | None = None
    recorded_at: datetime | None = None

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.dataset, self.answer_id, self.claim_id, self.verifier_id)

    @model_serializer(mode="wrap")
    def _omit_empty_pairs(self, handler: SerializerFunctionWrapHandler) -> Any:
        """No `pairs`/`set_scores`/`pairs_dropped_by_cap` keys when empty or 0 (imported
        verdicts, failures, no cap hit): such records dump byte for byte as before."""
        data = handler(self)
        if isinstance(data, dict):
            for key in ("pairs", "set_scores", "pairs_dropped_by_cap"):
                if not data.get(key):
                    data.pop(key, None)
        return data


class AnswerRecord(ResponseFields):
    """One line of answers.jsonl: the response universe of a factuality run, so metrics
    (and policies, from the dataset fields) rebuild from the run directory (an answer with
    no claim exists only here)."""

    dataset: str
    answer_id: str
    question: str | None = None
    answer_chars: int | None = None
    gold_factuality: float | None = None
    source: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.dataset, self.answer_id)

    @model_serializer(mode="wrap")
    def _omit_absent_fields(self, handler: SerializerFunctionWrapHandler) -> Any:
        """Answers of datasets without the policy fields dump byte for byte as before."""
        return omit_absent(handler(self), (*RESPONSE_FIELDS, "source"))


Preference = Literal["A", "B", "tie"]
Order = Literal["ab", "ba"]


class ItemRecord(BaseModel):
    """One line of items.jsonl: an item of an items dataset and its gold, so agreement
    metrics rebuild from the run directory (gold lives here, not in each judgment)."""

    model_config = ConfigDict(extra="ignore")

    dataset: str
    item_id: str
    line: int | None = None
    pairwise: bool = False
    gold_label: str | None = None
    gold_score: float | None = None
    gold_preference: Preference | None = None
    ratings: dict[str, str | None] = Field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str]:
        return (self.dataset, self.item_id)


class ItemJudgmentRecord(PromptProvenance, CallAccounting):
    """One judge's judgment of one item (`item_judgments.jsonl`).

    A pairwise item is judged twice: `order` "ab" shows response A first, "ba" shows
    response B first. `label` is what the judge answered about the slots it saw;
    `preference` is that verdict mapped back to the dataset's responses (A, B or tie).
    The key `(dataset, item_id, order, judge_id)` is unique; a later line wins.
    """

    model_config = ConfigDict(extra="ignore")

    dataset: str
    item_id: str
    judge_id: str
    order: Order | None = None
    model_returned: str | None = None
    parser_version: str | None = None
    status: Status
    label: str | None = None
    score: float | None = None
    raw_score: float | None = Field(
        default=None, description="The answer's value on the prompt's declared scale."
    )
    preference: Preference | None = None
    finish_reason: str | None = None
    raw_output: str | None = None
    refusal: str | None = None
    parsed: dict[str, Any] | None = None
    error: str | None = None
    recorded_at: datetime | None = None

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.dataset, self.item_id, self.order or "", self.judge_id)


class GateReranker(BaseModel):
    """The cross-encoder that scored a gate record's pairs and how a raw output became a
    score: raw logits (identity activation), then `normalization` (sigmoid or identity)."""

    model_config = ConfigDict(extra="ignore")

    model: str
    model_sha256: str | None = None
    max_length: int | None = None
    activation: Literal["identity"] = "identity"
    normalization: Literal["sigmoid", "identity"] = "sigmoid"


class GateRetriever(BaseModel):
    """The retriever that proposed a gate record's candidates (its settings' hash)."""

    model_config = ConfigDict(extra="ignore")

    kind: str
    config_sha256: str | None = None
    score_normalization: str | None = Field(
        default=None, description="How retrieval_score was mapped to [0, 1] from the raw score."
    )


class GateCandidate(BaseModel):
    """One retrieved passage of a question, with its retrieval rank and reranker score."""

    model_config = ConfigDict(extra="ignore")

    passage_id: str
    doc_id: str | None = None
    page: int | str | None = None
    retrieval_rank: int = Field(ge=1, description="1 = best; s_initial reads ranks <= k1_initial.")
    retrieval_score_raw: float | None = None
    retrieval_score: float | None = Field(default=None, description="Normalised to [0, 1].")
    rerank_logit: float | None = None
    rerank_score: float | None = Field(default=None, description="normalization(rerank_logit).")


class GateRecord(BaseModel):
    """One question's gate scores (`gates.jsonl`): the top `k1_expanded`
    retrieved passages, each scored by a cross-encoder. `s_initial` / `s_expanded` are the
    maxima of `rerank_score` over ranks <= `k1_initial` / <= `k1_expanded` (None without
    candidates). A non-ok `status` means the scores are unusable (the gate refuses).
    The key `(dataset, question_id, gate_id)` is unique; a later line wins."""

    model_config = ConfigDict(extra="ignore")

    dataset: str
    question_id: str
    gate_id: str
    status: Status
    error: str | None = None
    reranker: GateReranker
    retriever: GateRetriever
    k1_initial: int = Field(ge=1)
    k1_expanded: int = Field(ge=1)
    top_k: int = Field(ge=1)
    candidates: list[GateCandidate] = Field(default_factory=list)
    s_initial: float | None = None
    s_expanded: float | None = None
    latency_s: float = 0.0
    cache_hit: bool = False

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.dataset, self.question_id, self.gate_id)
