"""What the item and answer pages show, as pydantic models: the server renders them
(escaping every string), so nothing here is HTML. Offsets are Python str indices (code
points) into the text they name, so a template can cut `text[start:end]` and escape
each part to highlight a span."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from assay.adjudication import Adjudication

#: messages_status values: how far the shown messages can be trusted.
EXACT = "exact"  # rebuilt from the prompt file whose sha256 the record names
PROMPT_CHANGED = "prompt changed"  # the file is there but its hash differs
PROMPT_MISSING = "prompt missing"  # the file (and no built-in copy) is gone
DATASET_CHANGED = "dataset changed"  # the variables come from a changed or missing file
NO_PROMPT = "no prompt"  # baselines and Python judges send no messages
EVIDENCE_MISSING = "evidence missing"  # a verifier's passages are not in the dataset
NO_REQUEST = "no request"  # a verifier with nothing to check against asks no model


class Message(BaseModel):
    """One chat message as sent."""

    role: str
    content: str


class JudgmentDetail(BaseModel):
    """One judge's (or verifier's) judgment of one item, with the request rebuilt."""

    judge_id: str
    variant: str | None = Field(description="member (pairs), order (pairwise) or None.")
    model: str | None
    model_returned: str | None = None
    prompt_id: str | None
    prompt_version: int | None
    prompt_sha256: str | None
    prompt_file: str | None = Field(default=None, description="The prompt file read.")
    messages: list[Message] | None
    messages_status: str
    messages_note: str | None = None
    status: str
    label: str | None = None
    score: float | None = None
    preference: str | None = None
    raw_output: str | None = None
    parsed: dict[str, Any] | None = None
    error: str | None = None
    refusal: str | None = None
    finish_reason: str | None = None
    attempts: int = 0
    latency_s: float = 0.0
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    cache_hit: bool = False
    recorded_at: str | None = None
    sample_of: str | None = Field(
        default=None, description="A sampled judge's base id (`j#2` -> `j`)."
    )
    sample_index: int | None = None
    jury: dict[str, Any] | None = Field(
        default=None, description="A jury's judgment: its members, vote, weights and votes."
    )


class MajorityVote(BaseModel):
    """The samples of one sampled judge on one item (per variant), and their vote."""

    judge_id: str = Field(description="The base judge id with `#majority`, as metrics name it.")
    variant: str | None
    labels: list[str | None] = Field(description="Each sample's label, by sample index.")
    label: str | None = Field(description="The most common label (ties: None).")
    agreement: float | None = Field(description="Share of labelled samples giving `label`.")


class ItemDetail(BaseModel):
    """One item of a run: what the judges saw, its gold, and every judgment."""

    dataset: str
    item_id: str
    unit: str = Field(description='"pair" | "item" | "claim"')
    pairwise: bool
    variants: list[str] = Field(default_factory=list, description="Variants judged, in order.")
    variables: dict[str, Any] | None
    variables_by_variant: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="The variables each variant rendered with."
    )
    variables_note: str | None = None
    dataset_file: str | None = None
    gold: dict[str, Any] = Field(default_factory=dict)
    ratings: dict[str, str | None] = Field(default_factory=dict)
    adjudication: Adjudication | None = None
    history: list[Adjudication] = Field(default_factory=list)
    labels: list[str] = Field(default_factory=list)
    judgments: list[JudgmentDetail] = Field(default_factory=list)
    majorities: list[MajorityVote] = Field(default_factory=list)


class Highlight(BaseModel):
    """A span of a passage a verdict rests on: `text[start:end]`."""

    start: int
    end: int
    source: str = Field(description="verdict | pair | policy: which record named it.")
    score: float | None = None
    label: str | None = Field(default=None, description="span id, chunk id or role.")


class EvidencePassage(BaseModel):
    """A passage shown to a verifier, its text (when known) and the spans to highlight."""

    passage_id: str
    text: str | None
    title: str | None = None
    doc_id: str | None = None
    page: int | str | None = None
    score: float | None = None
    highlights: list[Highlight] = Field(default_factory=list)
    note: str | None = Field(default=None, description="Why the text is missing.")


class VerdictDetail(BaseModel):
    """One verifier's verdict on one claim, its evidence and its rebuilt request."""

    judgment: JudgmentDetail
    evidence: list[EvidencePassage] = Field(default_factory=list)
    pairs: list[dict[str, Any]] = Field(default_factory=list, description="Scored pairs.")


class PolicyClaim(BaseModel):
    """What one applied policy did with one claim."""

    policy: str
    kind: str | None
    action: str | None = Field(description="The decision (assert, withhold, ...).")
    reason: str | None = Field(description="The reason code.")
    native: str | None = Field(default=None, description="The kind's own state.")
    record: dict[str, Any] = Field(default_factory=dict, description="The whole record.")


class PolicyAnswer(BaseModel):
    """What one applied policy did with the answer, and its certificate."""

    policy: str
    kind: str | None
    outcome: str | None = None
    reason: str | None = None
    native: str | None = None
    response: dict[str, Any] | None = Field(default=None, description="responses.jsonl line.")
    certificate: dict[str, Any] | None = Field(default=None, description="certificates.jsonl.")
    gate_decision: dict[str, Any] | None = Field(default=None, description="evidence_gate.")


class ClaimDetail(BaseModel):
    """A claim of a sentence, its verdicts and what each policy did with it."""

    claim_id: str
    claim: str
    span: tuple[int, int] | None = None
    gold_label: str | None = None
    verdicts: list[VerdictDetail] = Field(default_factory=list)
    policies: list[PolicyClaim] = Field(default_factory=list)


class SentenceDetail(BaseModel):
    """A sentence of the answer and its claims."""

    sentence_id: int
    sentence: str
    span: tuple[int, int] | None = None
    status: str | None = None
    error: str | None = None
    claims: list[ClaimDetail] = Field(default_factory=list)


class AnswerSummary(BaseModel):
    """One answer of a factuality run, for the answers list."""

    dataset: str
    answer_id: str
    question: str | None
    n_sentences: int
    n_claims: int
    labels: dict[str, dict[str, int]] = Field(
        default_factory=dict, description="verifier -> label -> claims."
    )


class AnswerDetail(BaseModel):
    """answer -> sentences -> claims -> verdicts, and the policies applied to it."""

    dataset: str
    answer_id: str
    question: str | None
    answer: str | None = Field(description="The answer's text (dataset, else its sentences).")
    answer_note: str | None = None
    record: dict[str, Any] | None = Field(default=None, description="answers.jsonl line.")
    sentences: list[SentenceDetail] = Field(default_factory=list)
    unplaced_claims: list[ClaimDetail] = Field(
        default_factory=list, description="Claims whose sentence has no record."
    )
    policies: list[PolicyAnswer] = Field(default_factory=list)
