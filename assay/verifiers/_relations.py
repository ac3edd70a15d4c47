"""Relation triples of a (claim, premise) pair from token overlap and a cue lexicon.

A claim-level policy pools three signals per claim
(docs/reference/policies/claim-selective.md#pooled-scores): support, conflict and limitation. Where
no model gives them, they come from `relation-cues@1`, a frozen word list shipped as package data
and hashed into the verifier's describe():

    ov(c, e)    = share of the claim's content tokens present in premise e (0 if none)
    cue(e, L)   = 1 if a phrase of list L occurs in e (word boundaries, any case), else 0
    lexical:      s_support = ov, s_conflict = ov * cue(e, conflict),
                  s_limitation = ov * cue(e, limitation)

Every verifier's default limitation score is the lexical one (weighting the cue by ov
keeps a cue in an unrelated passage from limiting the claim).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from assay.judges._baseline_lexicons import lexicon, lexicon_digest
from assay.judges._baseline_text import content_tokens

RELATION_LEXICON = "relation-cues@1"
TOKENS_LEXICON = "tokens@1"

CueList = Literal["conflict", "limitation"]

#: the lexical relation source (the overlap baseline's pairs)
FORMULAS = {
    "overlap": "share of the claim's content tokens present in the premise (0 if none)",
    "cue": "1 if a phrase of the list occurs in the premise on word boundaries, any case",
    "s_support": "overlap",
    "s_conflict": "overlap * cue(conflict)",
    "s_limitation": "overlap * cue(limitation)",
}
_LEXICON_LIMITATION = "overlap * cue(limitation) on the premise text (the lexicon's)"
#: a local NLI model's pairs (`nli-local`): its probabilities, the lexicon's limitation
NLI_FORMULAS = {
    "overlap": FORMULAS["overlap"],
    "cue": FORMULAS["cue"],
    "s_support": "p_entail (the model's softmax probability of entailment)",
    "s_conflict": "p_contradict (its probability of contradiction; null without that class)",
    "s_limitation": _LEXICON_LIMITATION,
}


def llm_formulas(nli_prompt: bool) -> dict[str, str]:
    """A language-model verifier's pair formulas: an NLI prompt states probabilities, a
    True/False prompt gives a label with confidence 1 (`label_confidence`); an
    answer stating `support` / `conflict` / `limitation` numbers sets them itself."""
    stated = " (the answer's `{}` number when it states relation scores)"
    if nli_prompt:
        support = "p_entail, the entailment probability the answer states"
        conflict = "p_contradict, the answer's contradiction_probability (null if absent)"
    else:
        support = "label confidence: 1 when the answer is True (supported), else 0"
        conflict = "label confidence: 1 when the answer labels the claim contradicted, else 0"
    return {
        "overlap": FORMULAS["overlap"],
        "cue": FORMULAS["cue"],
        "s_support": support + stated.format("support"),
        "s_conflict": conflict + stated.format("conflict"),
        "s_limitation": "the answer's `limitation` number when stated, else " + _LEXICON_LIMITATION,
    }


@cache
def cue_pattern(name: CueList) -> re.Pattern[str]:
    """One regex for every phrase of a cue list; inner whitespace matches any run."""
    phrases = lexicon(RELATION_LEXICON).words(name)
    alternatives = "|".join(r"\s+".join(map(re.escape, p.split())) for p in phrases)
    return re.compile(rf"\b(?:{alternatives})\b", re.IGNORECASE)


def cue(text: str, name: CueList) -> int:
    """1 when some phrase of the cue list `name` occurs in `text`, else 0."""
    return 1 if cue_pattern(name).search(text) else 0


def claim_tokens(claim: str) -> frozenset[str]:
    """The claim's distinct content tokens (lower-cased, stop-words removed)."""
    return frozenset(content_tokens(claim))


def overlap_share(tokens: frozenset[str], text: str) -> float:
    """ov: the share of `tokens` (a claim's) found among the content tokens of `text`."""
    if not tokens:
        return 0.0
    return len(tokens & set(content_tokens(text))) / len(tokens)


@dataclass(frozen=True)
class Triple:
    """(s_support, s_conflict, s_limitation) of one pair, each in [0, 1]."""

    support: float
    conflict: float
    limitation: float


def lexical_triple(tokens: frozenset[str], text: str) -> Triple:
    """The `lexical` relation source for one premise."""
    ov = overlap_share(tokens, text)
    return Triple(ov, ov * cue(text, "conflict"), ov * cue(text, "limitation"))


def lexicon_limitation(tokens: frozenset[str], text: str) -> float:
    """The default limitation score of a pair: ov(c, e) * cue(e, limitation)."""
    return overlap_share(tokens, text) * cue(text, "limitation")


def describe_relations(
    keys: Iterable[str] = (RELATION_LEXICON, TOKENS_LEXICON),
    formulas: Mapping[str, str] = FORMULAS,
) -> dict[str, Any]:
    """The lexicons (SHA-256 of each file) and formulas behind pair scores, for the
    verifier's describe(): a changed word list shows in the run manifest. Each verifier
    passes its own `formulas` (lexical by default, `NLI_FORMULAS`, `llm_formulas`)."""
    digest = lexicon_digest(tuple(keys))
    combined = hashlib.sha256("".join(f"{k}={v}\n" for k, v in digest.items()).encode())
    return {
        "lexicons": digest,
        "lexicon_sha256": combined.hexdigest()[:16],
        "formulas": dict(formulas),
    }
