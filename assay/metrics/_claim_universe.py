"""The claims and responses every verifier is scored on, after last-record-wins.

The claims of a response are every claim seen in `claims`, in any verifier's records or
in its sentence records' claim lists, plus claims that `sentences` declare (`n_claims`)
but that have no record. Every verifier is scored on the same claims and responses, so a
claim one verifier never verified is "missing" for it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TypeAlias

import pandas as pd

from assay.metrics._claim_records import (
    OK,
    ClaimEntry,
    ClaimInput,
    ClaimKey,
    ResponseKey,
    SentenceEntry,
    SentenceInput,
    VerdictEntry,
    VerificationInput,
    latest_claims,
    latest_sentences,
    latest_verifications,
)
from assay.metrics._record_fields import ProducerMeta

ResponseInput: TypeAlias = Iterable[tuple[str, str]] | pd.DataFrame
"""Extra (dataset, answer_id) pairs: responses with no records at all."""


@dataclass(slots=True)
class SentenceTally:
    """Per response: sentences, failed sentences, claims declared; and unmapped answers."""

    n_sentences: dict[ResponseKey, int] = field(default_factory=dict)
    n_failed: dict[ResponseKey, int] = field(default_factory=dict)
    n_declared: dict[ResponseKey, int] = field(default_factory=dict)
    unsplit: set[ResponseKey] = field(default_factory=set)

    def add(self, s: SentenceEntry) -> None:
        rk = (s.dataset, s.answer_id)
        self.n_sentences[rk] = self.n_sentences.get(rk, 0) + 1
        self.n_failed[rk] = self.n_failed.get(rk, 0) + int(s.status != OK)
        self.n_declared[rk] = self.n_declared.get(rk, 0) + s.n_claims
        if s.unsplit:
            self.unsplit.add(rk)


@dataclass(slots=True)
class ClaimUniverse:
    """Everything the factuality metrics need, after last-record-wins deduplication."""

    responses: list[ResponseKey]
    claims: dict[ResponseKey, list[ClaimKey]]
    n_unrecorded: dict[ResponseKey, int]
    has_sentences: bool
    n_sentences: dict[ResponseKey, int]
    n_sentences_failed: dict[ResponseKey, int]
    verdicts: dict[str, dict[ClaimKey, VerdictEntry]]
    meta: dict[str, ProducerMeta]
    gold: dict[ClaimKey, str]
    unsplit: set[ResponseKey] = field(default_factory=set)

    def datasets(self) -> list[str]:
        return sorted({rk[0] for rk in self.responses} | {ck[0] for ck in self.gold})

    def subset(self, dataset: str) -> ClaimUniverse:
        """The same universe restricted to one dataset (for per-dataset rows)."""

        def keep(key: tuple[str, ...]) -> bool:
            return key[0] == dataset

        return replace(
            self,
            responses=[rk for rk in self.responses if keep(rk)],
            claims={rk: v for rk, v in self.claims.items() if keep(rk)},
            n_unrecorded={rk: v for rk, v in self.n_unrecorded.items() if keep(rk)},
            n_sentences={rk: v for rk, v in self.n_sentences.items() if keep(rk)},
            n_sentences_failed={rk: v for rk, v in self.n_sentences_failed.items() if keep(rk)},
            verdicts={
                vid: {ck: v for ck, v in per.items() if keep(ck)}
                for vid, per in self.verdicts.items()
            },
            gold={ck: v for ck, v in self.gold.items() if keep(ck)},
            unsplit={rk for rk in self.unsplit if keep(rk)},
        )


def claim_universe(
    verifications: VerificationInput,
    sentences: SentenceInput | None,
    claims: ClaimInput | None,
    responses: ResponseInput | None = None,
    *,
    with_gold: bool = False,
) -> ClaimUniverse:
    """The responses and claims of every input; with `with_gold`, also gold claim labels
    (conflicting labels are an error)."""
    verdicts, meta = latest_verifications(verifications)
    recorded_claims = latest_claims(claims)
    claim_keys: set[ClaimKey] = set(recorded_claims)
    for per_claim in verdicts.values():
        claim_keys.update(per_claim)
    tally = SentenceTally()
    for s in latest_sentences(sentences).values():
        claim_keys.update((s.dataset, s.answer_id, cid) for cid in s.claim_ids)
        tally.add(s)
    by_response: dict[ResponseKey, list[ClaimKey]] = {}
    for ck in sorted(claim_keys):
        by_response.setdefault((ck[0], ck[1]), []).append(ck)
    unrecorded = {
        rk: max(0, n - len(by_response.get(rk, ()))) for rk, n in tally.n_declared.items() if n > 0
    }
    return ClaimUniverse(
        responses=sorted({*by_response, *tally.n_sentences, *_response_keys(responses)}),
        claims=by_response,
        n_unrecorded=unrecorded,
        has_sentences=sentences is not None,
        n_sentences=tally.n_sentences,
        n_sentences_failed=tally.n_failed,
        verdicts=verdicts,
        meta=meta,
        gold=_gold_labels(recorded_claims, verdicts) if with_gold else {},
        unsplit=tally.unsplit,
    )


def _response_keys(responses: ResponseInput | None) -> set[ResponseKey]:
    if responses is None:
        return set()
    if isinstance(responses, pd.DataFrame):
        pairs = zip(responses["dataset"], responses["answer_id"], strict=True)
        return {(str(d), str(a)) for d, a in pairs}
    return {(str(d), str(a)) for d, a in responses}


def _gold_labels(
    claims: dict[ClaimKey, ClaimEntry], verdicts: dict[str, dict[ClaimKey, VerdictEntry]]
) -> dict[ClaimKey, str]:
    """Gold label per claim, from claim records first, then from verifications."""
    gold: dict[ClaimKey, str] = {}
    labelled = [(ck, c.gold_label) for ck, c in claims.items()]
    labelled += [(ck, v.gold_label) for per in verdicts.values() for ck, v in per.items()]
    for key, label in labelled:
        if label is None:
            continue
        old = gold.setdefault(key, label)
        if old != label:
            raise ValueError(f"claim {key} has conflicting gold labels {old!r} and {label!r}")
    return gold
