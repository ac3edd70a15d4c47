"""Verification, sentence and claim records as the factuality metrics read them.

Records come as models, dicts or DataFrame rows; each is read into a small frozen entry
holding only the fields metrics use, and checked (a verification with status ok must carry
a verdict label). Last record per key wins.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias, get_args

import pandas as pd
from pydantic import BaseModel

from assay.core.answer_fields import GoldClaimLabel
from assay.core.outcomes import Status
from assay.core.records import ClaimRecord, SentenceRecord, VerificationRecord
from assay.metrics._record_fields import (
    ProducerMeta,
    opt_int,
    opt_str,
    producer_fields,
    record_rows,
    req_str,
)

VerificationInput: TypeAlias = Iterable[VerificationRecord | Mapping[str, Any]] | pd.DataFrame
SentenceInput: TypeAlias = Iterable[SentenceRecord | Mapping[str, Any]] | pd.DataFrame
ClaimInput: TypeAlias = Iterable[ClaimRecord | Mapping[str, Any]] | pd.DataFrame
ResponseKey: TypeAlias = tuple[str, str]
"""(dataset, answer_id)"""
ClaimKey: TypeAlias = tuple[str, str, str]
"""(dataset, answer_id, claim_id)"""

SUPPORTED = "supported"
NOT_SUPPORTED = "not_supported"
VERDICT_LABELS = ("supported", "unsupported", "contradicted")
"""Labels a verification with status ok may carry; anything else is an error."""
GOLD_LABELS: tuple[str, ...] = get_args(GoldClaimLabel)
"""Gold labels the datasets use. Mapping to positive/negative is the `positive` parameter."""
MISSING = "missing"
"""Pseudo-status of a claim that a verifier has no record for."""
UNSCORED_STATUSES = ("parse_error", "refusal", "truncated", "api_error", MISSING)
GIVEN_DECOMPOSER = "given"
"""`decomposer_id` of sentence records holding claims a dataset ships."""

OK = Status.OK.value
_STATUSES = frozenset(s.value for s in Status)
_VERIFICATION_FIELDS = (
    ("dataset", "answer_id", "claim_id", "verifier_id", "status"),
    ("label", "gold_label", "model", "prompt_id", "prompt_version"),
)
_SENTENCE_FIELDS = (
    ("dataset", "answer_id", "sentence_id", "status"),
    ("n_claims", "claims", "decomposer_id", "span"),
)
_CLAIM_FIELDS = (("dataset", "answer_id", "claim_id"), ("gold_label",))


@dataclass(frozen=True, slots=True)
class VerdictEntry:
    """One verifier's latest verification of one claim."""

    dataset: str
    answer_id: str
    claim_id: str
    verifier_id: str
    status: str
    label: str | None
    gold_label: str | None
    model: str | None
    prompt_id: str | None
    prompt_version: int | None

    @property
    def claim_key(self) -> ClaimKey:
        return (self.dataset, self.answer_id, self.claim_id)


@dataclass(frozen=True, slots=True)
class SentenceEntry:
    """One decomposed sentence: its status and the claims it produced."""

    dataset: str
    answer_id: str
    sentence_id: int
    status: str
    n_claims: int
    claim_ids: tuple[str, ...]
    unsplit: bool = False
    """The whole answer as a pseudo-sentence: given claims not mapped to sentences."""


@dataclass(frozen=True, slots=True)
class ClaimEntry:
    dataset: str
    answer_id: str
    claim_id: str
    gold_label: str | None


def _status(v: object) -> str:
    if isinstance(v, Status):
        return v.value
    s = opt_str(v)
    if s not in _STATUSES:
        raise ValueError(f"unknown status {v!r}; expected one of {sorted(_STATUSES)}")
    return s


def _fields(r: BaseModel | Mapping[str, Any]) -> Mapping[str, Any]:
    return r if isinstance(r, Mapping) else r.__dict__


def read_verdict(r: VerificationRecord | Mapping[str, Any]) -> VerdictEntry:
    row = _fields(r)
    v = VerdictEntry(
        **producer_fields(row, "verifier_id"),
        answer_id=req_str(row, "answer_id"),
        claim_id=req_str(row, "claim_id"),
        status=_status(row.get("status")),
        label=opt_str(row.get("label")),
        gold_label=opt_str(row.get("gold_label")),
    )
    if v.status == OK and v.label not in VERDICT_LABELS:
        raise ValueError(
            f"verification {(*v.claim_key, v.verifier_id)} has status ok "
            f"but label {v.label!r}; expected one of {list(VERDICT_LABELS)}"
        )
    return v


def read_sentence(r: SentenceRecord | Mapping[str, Any]) -> SentenceEntry:
    row = _fields(r)
    sid = opt_int(row.get("sentence_id"))
    if sid is None:
        raise ValueError(f"record is missing required field 'sentence_id': {dict(row)!r}")
    return SentenceEntry(
        dataset=req_str(row, "dataset"),
        answer_id=req_str(row, "answer_id"),
        sentence_id=sid,
        status=_status(row.get("status")),
        n_claims=opt_int(row.get("n_claims")) or 0,
        claim_ids=_sentence_claim_ids(row.get("claims")),
        unsplit=_unsplit(row),
    )


def _unsplit(row: Mapping[str, Any]) -> bool:
    """Given claims that could not be mapped to sentences are written as one record for
    the whole answer, with no span (see assay.runs.stages._factuality)."""
    return row.get("decomposer_id") == GIVEN_DECOMPOSER and _missing_span(row.get("span"))


def _missing_span(span: object) -> bool:
    return span is None or (isinstance(span, float) and math.isnan(span))


def _sentence_claim_ids(claims: object) -> tuple[str, ...]:
    """Ids of the claims a sentence record carries (`Claim` models or their dicts)."""
    if claims is None or isinstance(claims, str | float):  # absent, or NaN in a frame
        return ()
    ids: list[str] = []
    for c in claims if isinstance(claims, Iterable) else ():
        cid = c.get("id") if isinstance(c, Mapping) else getattr(c, "id", None)
        if cid is None:
            raise ValueError(f"sentence record claim without an id: {c!r}")
        ids.append(str(cid))
    return tuple(ids)


def read_claim(r: ClaimRecord | Mapping[str, Any]) -> ClaimEntry:
    row = _fields(r)
    return ClaimEntry(
        dataset=req_str(row, "dataset"),
        answer_id=req_str(row, "answer_id"),
        claim_id=req_str(row, "claim_id"),
        gold_label=opt_str(row.get("gold_label")),
    )


def latest_verifications(
    records: VerificationInput,
) -> tuple[dict[str, dict[ClaimKey, VerdictEntry]], dict[str, ProducerMeta]]:
    """Latest verification per (claim, verifier), grouped by verifier; metadata per verifier."""
    by_verifier: dict[str, dict[ClaimKey, VerdictEntry]] = {}
    meta: dict[str, ProducerMeta] = {}
    for r in record_rows(records, *_VERIFICATION_FIELDS):
        v = read_verdict(r)
        by_verifier.setdefault(v.verifier_id, {})[v.claim_key] = v
        meta.setdefault(v.verifier_id, ProducerMeta()).absorb(
            v.model, v.prompt_id, v.prompt_version
        )
    return by_verifier, meta


def latest_sentences(records: SentenceInput | None) -> dict[tuple[str, str, int], SentenceEntry]:
    """Latest sentence record per (dataset, answer_id, sentence_id)."""
    latest: dict[tuple[str, str, int], SentenceEntry] = {}
    for r in () if records is None else record_rows(records, *_SENTENCE_FIELDS):
        s = read_sentence(r)
        latest[(s.dataset, s.answer_id, s.sentence_id)] = s
    return latest


def latest_claims(records: ClaimInput | None) -> dict[ClaimKey, ClaimEntry]:
    """Latest claim record per (dataset, answer_id, claim_id)."""
    latest: dict[ClaimKey, ClaimEntry] = {}
    for r in () if records is None else record_rows(records, *_CLAIM_FIELDS):
        c = read_claim(r)
        latest[(c.dataset, c.answer_id, c.claim_id)] = c
    return latest
