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
from assay.core.outcomes import CallAccounting, PromptProvenance, Status, TokenLogprob
from assay.core.pairs import Axis, Member
from assay.core.verification import ScoredPair, SetScore


class JudgmentRecord(PromptProvenance, CallAccounting):
    """Everything about one judgment of one pair member by one judge.

    Carries the pair's axis and severity so metrics can be recomputed from this file
    alone. The key `(dataset, pair_id, member, judge_id)` is unique within a run; if a
    line for a key ever appears twice (a retried error), the last one wins.
    """

    model_config = ConfigDict(extra="ignore")

    dataset: str = Field(description="The dataset's name.")
    pair_id: str = Field(description="The pair's id in the dataset.")
    member: Member = Field(description="Which response of the pair was judged.")
    judge_id: str = Field(description="The judge's id.")
    axis: Axis | None = Field(default=None, description="The pair's axis (ForceBench).")
    severity: int | None = Field(default=None, description="The pair's severity (ForceBench).")
    model_returned: str | None = Field(
        default=None, description="The model id the provider reported."
    )
    parser_version: str | None = Field(default=None, description="The output parser's version.")
    status: Status = Field(description="How the judgment ended; only ok carries a label.")
    label: str | None = Field(default=None, description="The parsed verdict.")
    score: float | None = Field(
        default=None, description="The parsed numeric score, if the prompt asks for one."
    )
    finish_reason: str | None = Field(
        default=None, description="Why the model stopped, as the provider says."
    )
    raw_output: str | None = Field(default=None, description="The model's text, as returned.")
    refusal: str | None = Field(default=None, description="The provider's refusal message, if any.")
    parsed: dict[str, Any] | None = Field(default=None, description="The parsed output object.")
    error: str | None = Field(
        default=None, description="What went wrong, for a status other than ok."
    )
    recorded_at: datetime | None = Field(default=None, description="When the line was written.")

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.dataset, self.pair_id, self.member.value, self.judge_id)


# `defer_build=True`: a model's validator is built when first used, not on import, so a
# command that never uses these models (a ForceBench run uses none of factuality's, items'
# or the gate's) does not pay for building them (~30 ms of start-up over core's models).


class SentenceRecord(PromptProvenance, CallAccounting):
    """How one sentence of an answer was decomposed (`sentences.jsonl`).

    Written after the sentence's claims, so its presence means the sentence is done; a
    sentence with zero claims is `ok` with `n_claims == 0`.
    """

    model_config = ConfigDict(defer_build=True, extra="ignore")

    dataset: str = Field(description="The dataset's name.")
    answer_id: str = Field(description="The answer's id.")
    sentence_id: int = Field(description="Position of the sentence in the answer, from 0.")
    sentence: str = Field(description="The sentence's text.")
    span: tuple[int, int] | None = Field(
        default=None, description="Character span [start, end) in the answer."
    )
    decomposer_id: str = Field(description="The decomposer's id.")
    status: Status = Field(description="How the decomposition ended.")
    n_claims: int = Field(default=0, description="Claims found in the sentence.")
    claims: list[Claim] = Field(
        default_factory=list, description="The sentence's claims; claims.jsonl is derived."
    )
    raw_output: str | None = Field(default=None, description="The model's text, as returned.")
    error: str | None = Field(
        default=None, description="What went wrong, for a status other than ok."
    )
    recorded_at: datetime | None = Field(default=None, description="When the line was written.")

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.dataset, self.answer_id, self.sentence_id)


class ClaimRecord(PromptProvenance, ClaimFields):
    """One claim (`claims.jsonl`) and what produced it, with the dataset's claim fields
    when it gives them."""

    model_config = ConfigDict(defer_build=True, extra="ignore")

    dataset: str = Field(description="The dataset's name.")
    answer_id: str = Field(description="The answer's id.")
    sentence_id: int = Field(description="The sentence the claim came from.")
    claim_id: str = Field(description="Unique within the answer.")
    claim: str = Field(description="The claim's text.")
    span: tuple[int, int] | None = Field(
        default=None, description="Character span [start, end) in the answer."
    )
    decomposer_id: str = Field(description="The decomposer's id.")
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

    model_config = ConfigDict(defer_build=True, extra="ignore")

    dataset: str = Field(description="The dataset's name.")
    answer_id: str = Field(description="The answer's id.")
    claim_id: str = Field(description="The claim's id.")
    sentence_id: int | None = Field(default=None, description="The claim's sentence.")
    claim: str = Field(description="The claim's text.")
    verifier_id: str = Field(description="The verifier's id.")
    parser_version: str | None = Field(default=None, description="The output parser's version.")
    status: Status = Field(description="How the verification ended; only ok carries a label.")
    label: str | None = Field(default=None, description="supported | unsupported | contradicted")
    score: float | None = Field(
        default=None, description="The verifier's support score, if it gives one."
    )
    evidence: list[dict[str, Any]] = Field(
        default_factory=list, description="The passages shown to the verifier."
    )
    pairs: list[ScoredPair] = Field(
        default_factory=list, description="Every scored (claim, passage/span) pair."
    )
    set_scores: list[SetScore] = Field(
        default_factory=list, description="Scores of sets of spans taken together."
    )
    pairs_dropped_by_cap: int = Field(
        default=0, ge=0, description="Premises a cost cap left unscored."
    )
    gold_label: str | None = Field(default=None, description="From datasets that ship labels.")
    finish_reason: str | None = Field(
        default=None, description="Why the model stopped, as the provider says."
    )
    raw_output: str | None = Field(default=None, description="The model's text, as returned.")
    parsed: dict[str, Any] | None = Field(default=None, description="The parsed output object.")
    error: str | None = Field(
        default=None, description="What went wrong, for a status other than ok."
    )
    recorded_at: datetime | None = Field(default=None, description="When the line was written.")

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

    model_config = ConfigDict(defer_build=True)

    dataset: str = Field(description="The dataset's name.")
    answer_id: str = Field(description="The answer's id.")
    question: str | None = Field(default=None, description="The question answered.")
    answer_chars: int | None = Field(
        default=None, description="Length of the answer in characters."
    )
    gold_factuality: float | None = Field(
        default=None, description="The dataset's own factuality score of the answer."
    )
    source: str | None = Field(
        default=None, description="Where the answer came from, when the dataset says."
    )

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

    model_config = ConfigDict(defer_build=True, extra="ignore")

    dataset: str = Field(description="The dataset's name.")
    item_id: str = Field(description="The item's id.")
    line: int | None = Field(
        default=None, description="The item's line (or row) in its file, from 1."
    )
    pairwise: bool = Field(default=False, description="Whether it is a pairwise item.")
    gold_label: str | None = Field(default=None, description="The item's gold label.")
    gold_score: float | None = Field(default=None, description="The gold score.")
    gold_preference: Preference | None = Field(
        default=None, description="The gold preference of a pairwise item."
    )
    ratings: dict[str, str | None] = Field(
        default_factory=dict, description="Each rater column's label for the item."
    )
    split: str | None = Field(
        default=None,
        description="The item's split (the dataset's `split_column`), e.g. dev or test.",
        exclude_if=lambda v: v is None,
    )

    @property
    def key(self) -> tuple[str, str]:
        return (self.dataset, self.item_id)


class JuryProvenance(BaseModel):
    """How a jury's judgment was computed from its members' judgments (`[[juries]]`,
    Verga et al. 2024): no request, no model."""

    model_config = ConfigDict(defer_build=True, extra="ignore")

    members: list[str] = Field(description="The member judges, in the spec's order.")
    vote: str = Field(description="majority, mean or weighted.")
    weights: dict[str, float] | None = Field(
        default=None, description="Weighted: each member's weight (fitted: normalised)."
    )
    fit_on: str | None = Field(
        default=None, description="Weighted: the split the weights were fitted on."
    )
    min_members: int = Field(description="Members with a verdict a jury verdict needs.")
    votes: dict[str, str | float] = Field(
        default_factory=dict,
        description="Each member with a verdict on the item: its label, preference or score.",
    )


class ItemJudgmentRecord(PromptProvenance, CallAccounting):
    """One judge's judgment of one item (`item_judgments.jsonl`).

    A pairwise item is judged twice: `order` "ab" shows response A first, "ba" shows
    response B first. `label` is what the judge answered about the slots it saw;
    `preference` is that verdict mapped back to the dataset's responses (A, B or tie).
    The key `(dataset, item_id, order, judge_id)` is unique; a later line wins.
    """

    model_config = ConfigDict(defer_build=True, extra="ignore")

    dataset: str = Field(description="The dataset's name.")
    item_id: str = Field(description="The item's id.")
    judge_id: str = Field(description="The judge's id.")
    order: Order | None = Field(
        default=None, description="Pairwise: ab shows response A first, ba response B."
    )
    model_returned: str | None = Field(
        default=None, description="The model id the provider reported."
    )
    parser_version: str | None = Field(default=None, description="The output parser's version.")
    status: Status = Field(description="How the judgment ended; only ok carries a label.")
    label: str | None = Field(default=None, description="The parsed verdict.")
    score: float | None = Field(
        default=None,
        description="The parsed score, mapped to [0, 1] where the prompt declares a scale.",
    )
    raw_score: float | None = Field(
        default=None, description="The answer's value on the prompt's declared scale."
    )
    preference: Preference | None = Field(
        default=None, description="Pairwise: the verdict mapped back to the dataset's responses."
    )
    finish_reason: str | None = Field(
        default=None, description="Why the model stopped, as the provider says."
    )
    raw_output: str | None = Field(default=None, description="The model's text, as returned.")
    refusal: str | None = Field(default=None, description="The provider's refusal message, if any.")
    parsed: dict[str, Any] | None = Field(default=None, description="The parsed output object.")
    error: str | None = Field(
        default=None, description="What went wrong, for a status other than ok."
    )
    label_probability: float | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="The judge's probability of the label it gave: exp of the summed log "
        "probabilities of the label's tokens (logprobs = true), or the answer's declared "
        "confidence field (confidence_field). Absent when there is none.",
    )
    logprobs: list[TokenLogprob] | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="The output tokens with their log probabilities, when the judge asked "
        "for them (logprobs = true). Absent otherwise.",
    )
    jury: JuryProvenance | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="A jury's judgment: how its members voted (`[[juries]]`). Absent otherwise.",
    )
    recorded_at: datetime | None = Field(default=None, description="When the line was written.")

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.dataset, self.item_id, self.order or "", self.judge_id)


class GateReranker(BaseModel):
    """The cross-encoder that scored a gate record's pairs and how a raw output became a
    score: raw logits (identity activation), then `normalization` (sigmoid or identity)."""

    model_config = ConfigDict(defer_build=True, extra="ignore")

    model: str = Field(description="The reranker (hf-ce/... or baseline:overlap).")
    model_sha256: str | None = Field(default=None, description="Hash of the model's files.")
    max_length: int | None = Field(default=None, description="Input cap, in tokens.")
    activation: Literal["identity"] = Field(
        default="identity", description="Applied to the raw output: none."
    )
    normalization: Literal["sigmoid", "identity"] = Field(
        default="sigmoid", description="Raw output to score."
    )


class GateRetriever(BaseModel):
    """The retriever that proposed a gate record's candidates (its settings' hash)."""

    model_config = ConfigDict(defer_build=True, extra="ignore")

    kind: str = Field(description="bm25, dense or hybrid.")
    config_sha256: str | None = Field(default=None, description="Hash of the retriever's settings.")
    score_normalization: str | None = Field(
        default=None, description="How retrieval_score was mapped to [0, 1] from the raw score."
    )


class GateCandidate(BaseModel):
    """One retrieved passage of a question, with its retrieval rank and reranker score."""

    model_config = ConfigDict(defer_build=True, extra="ignore")

    passage_id: str = Field(description="The passage's id in the corpus.")
    doc_id: str | None = Field(default=None, description="The passage's document.")
    page: int | str | None = Field(default=None, description="The passage's page in its document.")
    retrieval_rank: int = Field(ge=1, description="1 = best; s_initial reads ranks <= k1_initial.")
    retrieval_score_raw: float | None = Field(
        default=None, description="The retriever's own score."
    )
    retrieval_score: float | None = Field(default=None, description="Normalised to [0, 1].")
    rerank_logit: float | None = Field(default=None, description="The reranker's raw output.")
    rerank_score: float | None = Field(default=None, description="normalization(rerank_logit).")


class GateRecord(BaseModel):
    """One question's gate scores (`gates.jsonl`): the top `k1_expanded`
    retrieved passages, each scored by a cross-encoder. `s_initial` / `s_expanded` are the
    maxima of `rerank_score` over ranks <= `k1_initial` / <= `k1_expanded` (None without
    candidates). A non-ok `status` means the scores are unusable (the gate refuses).
    The key `(dataset, question_id, gate_id)` is unique; a later line wins."""

    model_config = ConfigDict(defer_build=True, extra="ignore")

    dataset: str = Field(description="The dataset's name.")
    question_id: str = Field(description="The question's id.")
    gate_id: str = Field(description="The gate's id (its name, else its model).")
    status: Status = Field(description="ok, or why the scores are unusable.")
    error: str | None = Field(
        default=None, description="What went wrong, for a status other than ok."
    )
    reranker: GateReranker = Field(description="What scored the passages.")
    retriever: GateRetriever = Field(description="What retrieved them.")
    k1_initial: int = Field(ge=1, description="The initial pool's depth.")
    k1_expanded: int = Field(ge=1, description="The expanded pool's depth.")
    top_k: int = Field(ge=1, description="Evidence passages to keep.")
    candidates: list[GateCandidate] = Field(
        default_factory=list, description="The retrieved passages, best first."
    )
    s_initial: float | None = Field(default=None, description="Best score in the initial pool.")
    s_expanded: float | None = Field(default=None, description="Best score in the expanded pool.")
    latency_s: float = Field(default=0.0, description="Seconds spent scoring.")
    cache_hit: bool = Field(default=False, description="Whether the scores came from the cache.")

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.dataset, self.question_id, self.gate_id)
