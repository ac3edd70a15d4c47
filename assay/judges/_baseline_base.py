"""The baseline judge base class and the three judges that read no force cues.

``BaselineJudge`` holds the shared plumbing (id, ``describe()`` with the SHA-256 of every
lexicon file the judge reads, label from threshold, the async call); citation presence,
token overlap and entity overlap are the reference points that ignore force.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from assay.core.judging import JudgeItem, Judgment, Status
from assay.errors import SpecError
from assay.judges._baseline_lexicons import lexicon_digest
from assay.judges._baseline_text import (
    APOSTROPHES,
    RAW_TOKEN_RE,
    SENTENCE_BREAK_RE,
    STOPWORDS,
    TOKENS,
    all_tokens,
    norm_token,
    overlap,
)

SUPPORTED = "supported"
UNSUPPORTED = "unsupported"

_ENTITY_YEAR_MIN = TOKENS.param("year_min", "entity")
_ENTITY_YEAR_MAX = TOKENS.param("year_max", "entity")


def unit(name: str, value: object) -> float:
    """A parameter that must be a real number in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SpecError(f"{name} must be a number in [0, 1], got {value!r}", field=name)
    v = float(value)
    if not 0.0 <= v <= 1.0:
        raise SpecError(f"{name} must be in [0, 1], got {v}", field=name)
    return v


def penalties(
    default: object, overrides: Mapping[str, object] | None, keys: tuple[str, ...], what: str
) -> dict[str, float]:
    """One penalty per key: `default`, overridden per key by `overrides`."""
    base = unit("penalty", default)
    out = dict.fromkeys(keys, base)
    for key, value in (overrides or {}).items():
        if key not in out:
            raise SpecError(f"unknown {what} {key!r}; known: {', '.join(keys)}", field="penalties")
        out[key] = unit(f"penalties.{key}", value)
    return out


class BaselineJudge(ABC):
    """Shared plumbing: id, describe(), label from threshold, the async call.

    Subclasses implement `score(item) -> (score, features)`; the score is clipped to
    [0, 1] and rounded to 6 decimals so that judgments are bit-for-bit reproducible.
    `lexicons` names the lexicon files (``id@version``) the judge reads; describe()
    records each file's SHA-256, so a changed list shows in the run manifest.
    """

    name: ClassVar[str]
    version: ClassVar[str] = "1"
    labels: ClassVar[tuple[str, ...]] = (SUPPORTED, UNSUPPORTED)  # gold is checked against
    lexicons: ClassVar[tuple[str, ...]] = ()

    def __init__(self, *, threshold: float = 0.5) -> None:
        self.threshold = unit("threshold", threshold)

    @property
    def id(self) -> str:
        return f"baseline:{self.name}"

    def params(self) -> dict[str, Any]:
        """Every constructor parameter, resolved."""
        return {"threshold": self.threshold}

    def describe(self) -> dict[str, Any]:
        digest = lexicon_digest(self.lexicons)
        combined = hashlib.sha256()
        for key, sha in digest.items():
            combined.update(f"{key}={sha}\n".encode())
        return {
            "id": self.id,
            "name": self.name,
            "kind": "baseline",
            "version": self.version,
            "lexicons": digest,
            "lexicon_sha256": combined.hexdigest()[:16],
            **self.params(),
        }

    @abstractmethod
    def score(self, item: JudgeItem) -> tuple[float, dict[str, Any]]:
        """(unclipped score, the feature values that produced it)."""

    def judge(self, item: JudgeItem) -> Judgment:
        """Synchronous form of `__call__`."""
        raw, features = self.score(item)
        value = round(min(1.0, max(0.0, raw)), 6)
        return Judgment(
            status=Status.OK,
            label=SUPPORTED if value >= self.threshold else UNSUPPORTED,
            score=value,
            parsed=features,
            attempts=0,
            cache_hit=False,
        )

    async def __call__(self, item: JudgeItem) -> Judgment:
        return self.judge(item)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"


class CitationPresenceJudge(BaselineJudge):
    """1.0 whenever any evidence is cited (non-blank), else 0.0. Ignores the claim."""

    name = "citation-presence"
    lexicons = ()

    def score(self, item: JudgeItem) -> tuple[float, dict[str, Any]]:
        present = bool(item.evidence.strip())
        return (1.0 if present else 0.0), {
            "evidence_present": present,
            "evidence_chars": len(item.evidence.strip()),
        }


class TokenOverlapJudge(BaselineJudge):
    """Fraction of the claim's unique content tokens that also occur in the evidence."""

    name = "token-overlap"
    lexicons = ("tokens@1",)

    def score(self, item: JudgeItem) -> tuple[float, dict[str, Any]]:
        value, matched, missing = overlap(item.claim, item.evidence)
        features: dict[str, Any] = {
            "overlap": round(value, 6),
            "claim_tokens": len(matched) + len(missing),
            "matched": matched,
            "missing": missing,
        }
        if not matched and not missing:
            features["note"] = "claim has no content tokens"
        return value, features


def _is_acronym(word: str) -> bool:
    return len(word) > 1 and word.isupper()


def _name_entity(run: list[str], run_at_start: bool) -> tuple[str, str, str] | None:
    """A run of capitalised words as a name, or None (see EntityOverlapJudge)."""
    words = list(run)
    while words and words[0].lower() in STOPWORDS and not _is_acronym(words[0]):
        words = words[1:]
    if words and (not run_at_start or len(words) > 1 or len(run) > 1 or _is_acronym(words[0])):
        key = " ".join(norm_token(w.lower()) for w in words)
        return " ".join(words), key, "name"
    return None


def _number_entity(tok: str) -> tuple[str, str, str]:
    key = norm_token(tok)
    plain = key.rstrip("%")
    is_year = (
        len(plain) == 4 and plain.isdigit() and _ENTITY_YEAR_MIN <= int(plain) <= _ENTITY_YEAR_MAX
    )
    return tok, key, "year" if is_year else "number"


class EntityOverlapJudge(BaselineJudge):
    """Fraction of the claim's entities (names, acronyms, numbers, years) in the evidence.

    A name is a run of capitalised words (leading stopwords such as "The" dropped). A
    single capitalised word at the start of a sentence is not a name (it is usually
    just capitalised), unless it is an acronym ("WHO", "US"). Names match the evidence
    as a contiguous, case-insensitive, normalised token sequence; numbers match a
    normalised number token. With no entities in the claim, the score falls back to
    token overlap and `parsed["fallback"]` says so.
    """

    name = "entity-overlap"
    lexicons = ("tokens@1",)

    @staticmethod
    def entities(text: str) -> list[tuple[str, str, str]]:
        """(surface form, normalised key, kind) for each unique entity, in order.

        kind is "name", "number" or "year".
        """
        text = text.translate(APOSTROPHES)
        out: dict[str, tuple[str, str, str]] = {}
        run: list[str] = []
        run_at_start = False
        prev_end = 0
        sentence_start = True

        def flush() -> None:
            if (entity := _name_entity(run, run_at_start)) is not None:
                out.setdefault(entity[1], entity)
            run.clear()

        for m in RAW_TOKEN_RE.finditer(text):
            tok = m.group(0)
            gap = text[prev_end : m.start()]
            if prev_end and SENTENCE_BREAK_RE.search(gap):
                sentence_start = True
            prev_end = m.end()
            if tok[0].isdigit():
                flush()
                entity = _number_entity(tok)
                out.setdefault("#" + entity[1], entity)
            elif tok[0].isupper() and (not run or gap.strip() == ""):
                if not run:
                    run_at_start = sentence_start
                run.append(tok)
            else:
                flush()
                if tok[0].isupper():
                    run_at_start = sentence_start
                    run.append(tok)
            sentence_start = False
        flush()
        return list(out.values())

    def score(self, item: JudgeItem) -> tuple[float, dict[str, Any]]:
        ents = self.entities(item.claim)
        if not ents:
            value, matched, missing = overlap(item.claim, item.evidence)
            return value, {
                "fallback": "token-overlap",
                "entities": [],
                "overlap": round(value, 6),
                "matched": matched,
                "missing": missing,
            }
        ev_seq = " " + " ".join(all_tokens(item.evidence)) + " "
        ev_set = set(ev_seq.split())
        found: list[str] = []
        missing_e: list[str] = []
        for surface, key, kind in ents:
            hit = key in ev_set if kind != "name" else f" {key} " in ev_seq
            (found if hit else missing_e).append(surface)
        return len(found) / len(ents), {
            "fallback": None,
            "entities": [surface for surface, _, _ in ents],
            "years": [surface for surface, _, kind in ents if kind == "year"],
            "found": found,
            "missing": missing_e,
        }
