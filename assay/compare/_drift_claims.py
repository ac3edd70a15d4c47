"""How far a re-run's decomposer drifted: per decomposer, the answers both runs split,
the share of them whose sentences are byte-identical, the share whose claims are, and
how many claims each run found on those answers.

An answer's sentences are compared as (sentence id, text, status) in order, its claims
as (sentence id, claim text) in order: an LLM decomposer that words one claim
differently, splits one more time, or fails once on an answer has drifted on it, and
the verdicts of the verifiers downstream are then on other claims.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from assay.core.records import ClaimRecord, SentenceRecord
from assay.core.rundir import CLAIMS_FILE, SENTENCES_FILE, latest

Answer = tuple[str, str]  # (dataset, answer id)


class DecomposerDrift(BaseModel):
    """One decomposer's output in the original run against the re-run."""

    decomposer: str = Field(description="The decomposer's id.")
    compared: int = Field(description="Answers both runs decomposed (at least one sentence).")
    only_original: int = Field(description="Answers only the original run decomposed.")
    only_rerun: int = Field(description="Answers only the re-run decomposed.")
    identical_sentences: float | None = Field(
        description="Share of compared answers whose sentences (text and status) are "
        "byte-identical."
    )
    identical_claims: float | None = Field(
        description="Share of compared answers whose claims are byte-identical, in order."
    )
    claims_original: int = Field(description="Claims of the compared answers, originally.")
    claims_rerun: int = Field(description="Claims of the compared answers, in the re-run.")
    changed: list[str] = Field(
        default_factory=list, description="Up to 5 answers (dataset/id) whose claims changed."
    )

    @property
    def claims_delta(self) -> int:
        """rerun - original claims over the compared answers."""
        return self.claims_rerun - self.claims_original

    @property
    def drift_free(self) -> bool:
        return (
            not self.only_original
            and not self.only_rerun
            and self.identical_sentences in (None, 1.0)
            and self.identical_claims in (None, 1.0)
            and self.claims_delta == 0
        )


Split = dict[str, dict[Answer, list[Any]]]  # decomposer -> answer -> its parts, in order


def _add(out: Split, decomposer: str, answer: Answer, part: Any) -> None:
    out.setdefault(decomposer, {}).setdefault(answer, []).append(part)


def _sentences(run: Path) -> Split:
    out: Split = {}
    path = run / SENTENCES_FILE
    if path.is_file():
        for r in sorted(latest(path, SentenceRecord).values(), key=lambda r: r.key):
            part = (r.sentence_id, r.sentence, str(r.status))
            out.setdefault(r.decomposer_id, {}).setdefault((r.dataset, r.answer_id), []).append(
                part
            )
    return out


def _claims(run: Path) -> Split:
    """Claims in file order (the order the decomposer gave them), each with its sentence."""
    out: Split = {}
    path = run / CLAIMS_FILE
    if path.is_file():
        records = sorted(latest(path, ClaimRecord).values(), key=lambda r: r.sentence_id)
        for r in records:
            part = (r.sentence_id, r.claim)
            out.setdefault(r.decomposer_id, {}).setdefault((r.dataset, r.answer_id), []).append(
                part
            )
    return out


def _share(same: list[bool]) -> float | None:
    return sum(same) / len(same) if same else None


def _one(name: str, sentences: tuple[Split, Split], claims: tuple[Split, Split]) -> DecomposerDrift:
    sa, sb = sentences[0].get(name, {}), sentences[1].get(name, {})
    ca, cb = claims[0].get(name, {}), claims[1].get(name, {})
    keys = sorted(k for k in sa if k in sb)
    same_claims = [ca.get(k, []) == cb.get(k, []) for k in keys]
    return DecomposerDrift(
        decomposer=name,
        compared=len(keys),
        only_original=len(sa) - len(keys),
        only_rerun=len(sb) - len(keys),
        identical_sentences=_share([sa[k] == sb[k] for k in keys]),
        identical_claims=_share(same_claims),
        claims_original=sum(len(ca.get(k, [])) for k in keys),
        claims_rerun=sum(len(cb.get(k, [])) for k in keys),
        changed=["/".join(k) for k, same in zip(keys, same_claims, strict=True) if not same][:5],
    )


def decomposer_drift(original: Path, rerun: Path) -> list[DecomposerDrift]:
    """Each decomposer's drift (one per run, usually), in id order; [] without one."""
    sentences = (_sentences(original), _sentences(rerun))
    claims = (_claims(original), _claims(rerun))
    names = sorted(set(sentences[0]) | set(sentences[1]))
    return [_one(name, sentences, claims) for name in names]


__all__ = ["DecomposerDrift", "decomposer_drift"]
