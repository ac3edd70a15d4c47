"""What the fail-closed policy reads: evidence chunks with sentence spans, the
claim IR, and per-claim verification records holding one score triple per (claim, span)
pair and optional set scores for several spans together.

Texts (question, claim, chunk, span) are carried so certificates and audits can show and
hash them; the decision never reads them. Scores are kept as given, even NaN or
out of range, because an invalid score is itself a decision input (`invalid_score`).
"""

from __future__ import annotations

import hashlib
import math
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from assay.core.answer_fields import GoldAction
from assay.core.outcomes import Status
from assay.policies.engine._canonical import canonical_sha256

GoldClaim = Literal["supported", "unsupported", "contradicted"]
_GOLD_ALIASES: dict[str, GoldClaim] = {
    "supported": "supported",
    "unsupported": "unsupported",
    "not-supported": "unsupported",
    "contradicted": "contradicted",
    "entailed": "supported",  # the CertiRAG design's labels
    "not_enough_info": "unsupported",
    "entailment": "supported",  # NLI labels
    "neutral": "unsupported",
    "contradiction": "contradicted",
}


def text_sha256(text: str) -> str:
    """sha256 of a text's UTF-8 bytes (what `sha256sum` of the text prints)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class FCSpan(BaseModel):
    """A sentence of a chunk: `chunk.text[start:end] == text` (code points)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    span_id: str
    start: int = Field(ge=0)
    end: int = Field(ge=0)
    text: str


class FCChunk(BaseModel):
    """An evidence chunk of the retrieval set, with its sentence spans."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    chunk_id: str
    doc_id: str | None = None
    text: str
    title: str | None = None
    url: str | None = None
    section: str | None = None
    page: int | str | None = None
    retrieval_rank: int | None = Field(default=None, ge=0)
    retrieval_score_raw: float | None = None
    retrieval_score: float | None = Field(default=None, ge=0.0, le=1.0)
    spans: list[FCSpan] = Field(default_factory=list)

    @model_validator(mode="after")
    def _spans_match_text(self) -> FCChunk:
        for span in self.spans:
            if not span.start <= span.end <= len(self.text):
                raise ValueError(
                    f"span {span.span_id!r} [{span.start}, {span.end}) lies outside the chunk "
                    f"text ({len(self.text)} characters)"
                )
            if self.text[span.start : span.end] != span.text:
                raise ValueError(
                    f"span {span.span_id!r}: chunk text[{span.start}:{span.end}] is not the "
                    "span text"
                )
        return self

    @classmethod
    def from_text(cls, chunk_id: str, text: str, **fields: Any) -> FCChunk:
        """A chunk whose spans are its sentences (the project's sentence splitter)."""
        return cls(chunk_id=chunk_id, text=text, spans=sentence_spans(chunk_id, text), **fields)


def sentence_spans(chunk_id: str, text: str) -> list[FCSpan]:
    """The sentences of `text` as spans `<chunk_id>#s<k>` with code-point offsets: the
    verifiers' sentence spans (one splitter, one id scheme), with their text."""
    from assay.verifiers._spans import sentence_spans as passage_spans  # heavy: on use

    return [
        FCSpan(span_id=s.span_id, start=s.start, end=s.end, text=text[s.start : s.end])
        for s in passage_spans(chunk_id, text)
    ]


class FCPair(BaseModel):
    """The verifier's scores for one (claim, span) pair (ids and numbers only).
    Fields a verifier cannot know are None; a score that is None is invalid."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    span_id: str
    chunk_id: str | None = None
    doc_id: str | None = None
    passage_id: str | None = None
    page: int | str | None = None
    start: int | None = None
    end: int | None = None
    retrieval_rank: int | None = None
    p_entail: float | None = None
    p_contradict: float | None = None
    p_neutral: float | None = None
    score_source: str | None = None
    logits: tuple[float, float, float] | None = Field(
        default=None, description="(entail, contradict, neutral) logits, for temperature scaling."
    )


class FCSetScore(BaseModel):
    """The verifier applied to several spans concatenated (span ids sorted on input)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    span_ids: tuple[str, ...] = Field(min_length=1)
    p_entail: float | None = None
    p_contradict: float | None = None
    p_neutral: float | None = None
    logits: tuple[float, float, float] | None = None

    @field_validator("span_ids")
    @classmethod
    def _sorted(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(value)) != len(value):
            raise ValueError("a set score names a span twice")
        return tuple(sorted(value))


class FCClaim(BaseModel):
    """One claim of the claim IR with its verification record (None: no record)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    claim_id: str
    text: str = ""
    type: str | None = None
    fields: dict[str, Any] = Field(default_factory=dict)
    evidence_candidates: list[str] = Field(default_factory=list)
    unsupported_by_design: bool = False
    verification_status: Status | None = None
    pairs: list[FCPair] = Field(default_factory=list)
    set_scores: list[FCSetScore] = Field(default_factory=list)
    pairs_dropped_by_cap: int = Field(
        default=0, ge=0, description="Pairs the verifier's cost cap left unscored."
    )
    gold: GoldClaim | None = None

    @field_validator("gold", mode="before")
    @classmethod
    def _gold_alias(cls, value: object) -> object:
        if isinstance(value, str) and value.strip().lower() in _GOLD_ALIASES:
            return _GOLD_ALIASES[value.strip().lower()]
        return value

    @model_validator(mode="after")
    def _one_pair_per_span(self) -> FCClaim:
        seen: set[str] = set()
        for pair in self.pairs:
            if pair.span_id in seen:
                raise ValueError(f"claim {self.claim_id!r} scores span {pair.span_id!r} twice")
            seen.add(pair.span_id)
        return self

    def verification_view(self) -> dict[str, Any]:
        """The verification record the policy consumes (what `inputs_sha256` hashes);
        a non-finite score is written as its name ("nan", "inf"), as JSON has none;
        `pairs_dropped_by_cap` only when a cap dropped some (see `_omit_no_drop`)."""
        keys = {"claim_id", "verification_status", "pairs", "set_scores", "pairs_dropped_by_cap"}
        view = self.model_dump(mode="python", include=keys)
        return {k: _finite_json(v) for k, v in view.items()}

    @model_serializer(mode="wrap")
    def _omit_no_drop(self, handler: SerializerFunctionWrapHandler) -> Any:
        """No `pairs_dropped_by_cap` key when no cap dropped a pair: claims and hashes
        stay as they were before the field existed."""
        data = handler(self)
        if isinstance(data, dict) and not data.get("pairs_dropped_by_cap"):
            data.pop("pairs_dropped_by_cap", None)
        return data


def _finite_json(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite_json(v) for v in value]
    return value


class FCGate(BaseModel):
    """A preceding evidence gate's decision and its evidence set E(q) (chunk or
    passage ids; None: the gate names none, so no pair is filtered)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    outcome: Literal["pass", "abstain", "refuse"]
    evidence_ids: list[str] | None = None


class FCResponse(BaseModel):
    """One answer to verify and render: its question, claims in IR order, and the
    retrieval set (None: unknown, so pairs are not checked against it)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    dataset: str
    answer_id: str
    question_id: str | None = None
    question: str = ""
    claims: list[FCClaim] = Field(default_factory=list)
    chunks: list[FCChunk] | None = None
    gate: FCGate | None = None
    gold_action: GoldAction | None = None

    @model_validator(mode="after")
    def _unique_ids(self) -> FCResponse:
        claim_ids = [c.claim_id for c in self.claims]
        if len(set(claim_ids)) != len(claim_ids):
            raise ValueError(f"answer {self.answer_id!r} repeats a claim id")
        span_ids = [s.span_id for c in self.chunks or () for s in c.spans]
        if len(set(span_ids)) != len(span_ids):
            raise ValueError(f"answer {self.answer_id!r} repeats a span id in its chunks")
        return self

    def span_index(self) -> dict[str, tuple[FCChunk, FCSpan]]:
        """Every span of the retrieval set by id, with its chunk."""
        return {s.span_id: (c, s) for c in self.chunks or () for s in c.spans}

    def inputs_sha256(self) -> str:
        """Hash of the canonical verification records consumed for this response."""
        return canonical_sha256([c.verification_view() for c in self.claims])


__all__ = [
    "FCChunk",
    "FCClaim",
    "FCGate",
    "FCPair",
    "FCResponse",
    "FCSetScore",
    "FCSpan",
    "GoldAction",
    "GoldClaim",
    "sentence_spans",
    "text_sha256",
]
