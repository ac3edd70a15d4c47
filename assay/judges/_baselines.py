"""Deterministic, model-free baseline judges.

Five reference points for LLM judges on ForceBench-style items. They use only regular
expressions and small word lists (compiled once, at import), never a model or the
network, and always return `Status.OK`:

- ``baseline:citation-presence`` -- "a citation exists, so it is supported".
- ``baseline:token-overlap``     -- share of the claim's content words found in the evidence.
- ``baseline:entity-overlap``    -- share of the claim's names and numbers found in the evidence.
- ``baseline:forcecheck-rule``   -- token overlap minus penalties for force-raising cues in
  the claim alone (causal verbs, certainty words, universals, recency, exact numbers).
- ``baseline:forcecheck-axis``   -- token overlap minus penalties for each ForceBench axis
  on which the evidence carries a limiter (hedge, range, date, subgroup, association)
  that the claim drops.

Every judgment's ``parsed`` holds the feature values that produced its score, so a
score can always be traced back to the words that caused it. See ``docs/baselines.md``.
"""

from __future__ import annotations

import hashlib
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from assay.errors import SpecError
from assay.judges._types import Judge, JudgeItem, Judgment, Status

__all__ = [
    "BASELINES",
    "BaselineJudge",
    "CitationPresenceJudge",
    "EntityOverlapJudge",
    "ForceCheckAxisJudge",
    "ForceCheckRuleJudge",
    "TokenOverlapJudge",
    "baseline",
    "content_tokens",
]

SUPPORTED = "supported"
UNSUPPORTED = "unsupported"

# --------------------------------------------------------------------------------------
# Tokens
# --------------------------------------------------------------------------------------

#: Compact English function-word list. Modals (may, will...) and quantifiers (all,
#: some...) are stopwords on purpose: overlap measures topic, not force. Negations
#: (not, no, nor, never) are *not* stopwords, so a dropped or added "not" counts.
_STOPWORD_TEXT = """
    a an the and or but if then than so as of in on at to for from by with without
    about into onto over under between among through during before after above below
    up down out off per via within across against upon along toward towards
    this that these those it its itself they them their theirs themselves we us our
    you your he him his she her i me my who whom whose which what when where why how
    there here is are was were be been being am has have had having do does did doing
    done will would shall should can could may might must also such both each all any
    some most more other others only own same very just too again further once while
    because until whether yet either neither one ones s t
"""
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())

#: Irregular plurals folded to their singular during normalisation.
IRREGULAR_PLURALS: dict[str, str] = {
    "mice": "mouse",
    "women": "woman",
    "men": "man",
    "children": "child",
}

_TOKEN_RE = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?%?|\d+(?:\.\d+)?%?|[a-z]+(?:'[a-z]+)*")
_RAW_TOKEN_RE = re.compile(
    r"\d{1,3}(?:,\d{3})+(?:\.\d+)?%?|\d+(?:\.\d+)?%?|[A-Za-z]+(?:'[A-Za-z]+)*"
)
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})


def _prep(text: str) -> str:
    """Lowercase and fold typographic apostrophes/quotes."""
    return text.translate(_APOSTROPHES).lower()


def _norm_token(tok: str) -> str:
    """Light normalisation of one lowercase token.

    Numbers lose thousands separators ("1,000" -> "1000") and keep a "%" suffix. Words
    lose a possessive "'s" and other apostrophes; irregular plurals in
    `IRREGULAR_PLURALS` are folded; "-ies" becomes "-y" (words over 4 letters); a
    final "s" is dropped from words over 3 letters unless they end in "ss", "us" or
    "is". Crude, but applied identically to claim and evidence.
    """
    if tok[0].isdigit():
        return tok.replace(",", "")
    if tok.endswith("'s"):
        tok = tok[:-2]
    tok = tok.replace("'", "")
    if tok in IRREGULAR_PLURALS:
        return IRREGULAR_PLURALS[tok]
    if len(tok) > 4 and tok.endswith("ies"):
        return tok[:-3] + "y"
    if len(tok) > 3 and tok.endswith("s") and not tok.endswith(("ss", "us", "is")):
        return tok[:-1]
    return tok


def _all_tokens(text: str) -> list[str]:
    """Every normalised token, stopwords included, in order."""
    return [_norm_token(t) for t in _TOKEN_RE.findall(_prep(text))]


def content_tokens(text: str) -> list[str]:
    """Normalised content tokens of `text`, in order, stopwords removed.

    A token is a run of letters (with inner apostrophes) or a number such as "3.5",
    "1,000" or "12%". Stopwords are checked before and after normalisation.
    """
    out: list[str] = []
    for raw in _TOKEN_RE.findall(_prep(text)):
        if raw in STOPWORDS:
            continue
        tok = _norm_token(raw)
        if tok and tok not in STOPWORDS:
            out.append(tok)
    return out


def _overlap(claim: str, evidence: str) -> tuple[float, list[str], list[str]]:
    """(fraction of unique claim content tokens in the evidence, matched, missing)."""
    claim_set = set(content_tokens(claim))
    if not claim_set:
        return 0.0, [], []
    evidence_set = set(content_tokens(evidence))
    matched = sorted(claim_set & evidence_set)
    missing = sorted(claim_set - evidence_set)
    return len(matched) / len(claim_set), matched, missing


# --------------------------------------------------------------------------------------
# Numbers
# --------------------------------------------------------------------------------------

_NUM_RE = re.compile(
    r"(?<![\w.])(?<![a-z]-)(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?!\d)(?!st\b|nd\b|rd\b|th\b)"
)
_NUM_HEDGE_BEFORE_RE = re.compile(
    r"(?:\b(?:about|approximately|approx\.?|around|roughly|nearly|almost|some|circa|ca\."
    r"|up to|as (?:many|much|few|little|high|low) as|an estimated|estimated|more than"
    r"|over|at least|at most|less than|under|fewer than|below|above|upwards of|close to"
    r"|on the order of|between|no more than|no less than|in excess of)|~|\u2248|>|<"
    r"|\u2265|\u2264|\u00b1)\s*$"
)
_RANGE_BEFORE_RE = re.compile(r"\d\s*%?\s*(?:-|\u2013|\u2014|to|and)\s*$")
_RANGE_AFTER_RE = re.compile(
    r"^\s*(?:%|percent|per cent)?\s*(?:(?:-|\u2013|\u2014|to)\s*\d|\u00b1|\+/-)"
)
_PERCENT_AFTER_RE = re.compile(
    r"^\s*(?:%|percent\b|per cent\b|percentage points?\b)"
    r"|^\s*(?:-|\u2013|\u2014|to|and)\s*[\d.,]+\s*(?:%|percent\b|per cent\b)"
)
_N = r"\d+(?:[.,]\d+)*\s*%?"  # a number, optionally a percentage (limiter spans only)
_NUMERIC_LIMITER_RE = re.compile(
    rf"(?<![a-z]-){_N}\s*(?:-|\u2013|\u2014|to)\s*{_N}"
    rf"|\bbetween\s+\S*{_N}\s+and\s+\S*{_N}"
    r"|(?:\b(?:about|approximately|approx\.?|around|roughly|nearly|almost|circa|up to"
    r"|as (?:many|much|few|little|high|low) as|an estimated|estimated|more than|at least"
    r"|at most|less than|fewer than|upwards of|close to|on the order of|no more than"
    rf"|in excess of)|~|\u2248|\u2265|\u2264)\s*{_N}(?:\s*(?:-|\u2013|\u2014|to)\s*{_N})?"
    rf"|{_N}\s*(?:\u00b1|\+/-)\s*{_N}"
)


@dataclass(frozen=True)
class _Num:
    text: str
    value: float
    percent: bool
    year: bool
    hedged: bool
    in_range: bool

    @property
    def exact(self) -> bool:
        """A point value stated without hedge or range (years are never exact)."""
        return not (self.year or self.hedged or self.in_range)


def _numbers(text: str) -> list[_Num]:
    """Numbers in already-prepped (lowercased) text, with their context flags."""
    out: list[_Num] = []
    for m in _NUM_RE.finditer(text):
        raw = m.group(0)
        plain = raw.replace(",", "")
        value = float(plain)
        before = text[max(0, m.start() - 40) : m.start()]
        after = text[m.end() : m.end() + 40]
        percent = bool(_PERCENT_AFTER_RE.match(after))
        year = (
            "," not in raw
            and "." not in raw
            and len(plain) == 4
            and 1800 <= value <= 2099
            and not percent
        )
        out.append(
            _Num(
                text=raw + ("%" if percent else ""),
                value=value,
                percent=percent,
                year=year,
                hedged=bool(_NUM_HEDGE_BEFORE_RE.search(before)),
                in_range=bool(_RANGE_BEFORE_RE.search(before) or _RANGE_AFTER_RE.match(after)),
            )
        )
    return out


# --------------------------------------------------------------------------------------
# Cue lexicons (all matched against prepped, lowercased text)
# --------------------------------------------------------------------------------------

_CAUSAL_PAT = (
    r"\b(?:caus(?:e|es|ed|ing)|lead(?:s|ing)? to|led to|result(?:s|ed|ing)? in"
    r"|prevent(?:s|ed|ing)?|drives|drove|driven by|driving|trigger(?:s|ed)?"
    r"|induc(?:e|es|ed)|reduces|increases|improves|lowers|raises|boosts|worsens"
    r"|protects? against|cures?|because of|due to|responsible for|is the cause of)\b"
)
_CERTAINTY_PAT = (
    r"\b(?:definitely|certainly|clearly|undoubtedly|unquestionably|conclusively"
    r"|prove[sn]?|proved|shows? that|showed that|demonstrates? that|demonstrated that"
    r"|confirms?|confirmed|establishes|established that|will|guarantee[sd]?|must"
    r"|without (?:a )?doubt|beyond doubt|no doubt)\b"
)
_UNIVERSAL_PAT = (
    r"\b(?:all|every|everyone|everybody|everything|everywhere|always|never|no one"
    r"|nobody|none|universally|without exception|anyone|anybody|in all cases"
    r"|regardless of)\b"
)
_RECENCY_PAT = (
    r"\b(?:currently|now|today|nowadays|presently|at present|at the moment|these days"
    r"|still|(?:is|are|remains?)\s+(?:now\s+|still\s+)?(?:the\s+)?"
    r"(?:world's\s+|country's\s+|nation's\s+)?(?:largest|biggest|smallest|highest|lowest"
    r"|leading|fastest|slowest|most\s+[a-z]+|best|worst|top|only|dominant|richest"
    r"|poorest))\b"
)
_HEDGE_PAT = (
    r"\b(?:may(?!\s+(?:18|19|20)\d\d\b)|might|could|suggests?|suggested|suggesting"
    r"|suggestive|likely|unlikely|possibly|possible|perhaps|potentially|potential"
    r"|appears? to|appeared to|seems? to|seemed to|probably|probable|plausibl[ey]"
    r"|indicates?|indicated|tentative(?:ly)?|preliminary|uncertain|unclear"
    r"|hypothesi[sz]ed?|speculative|believed to|thought to)\b"
)
_STRONG_CERTAINTY_PAT = (
    r"\b(?:definitely|certainly|undoubtedly|unquestionably|conclusively|prove[sn]?"
    r"|proved|guarantee[sd]?|always|without (?:a )?doubt)\b"
)
_BOOSTER_PAT = r"\b(?:will|does|definitely|certainly|clearly|shows?|demonstrates?|confirms?)\b"
_DATE_PAT = (
    r"\b(?:(?:early|mid|late)[- ])?(?:18|19|20)\d\d(?:s|'s)?\b"
    r"|\b(?:as of|at the time|at that time|that year|historically|formerly|previously"
    r"|in the past|last (?:year|decade|century)|(?:january|february|march|april|june"
    r"|july|august|september|october|november|december) (?:18|19|20)\d\d)\b"
)
_ASSOC_PAT = (
    r"\b(?:associat(?:ed|ion|ions)|correlat(?:ed|es|ion|ions)|linked|links?"
    r"|observational|co-?occur\w*|related to|relationship|tied to|coincid\w+"
    r"|cross-sectional|predict(?:s|ed|ive|or|ors)?)\b"
)
_POPULATION_PAT = (
    r"\b(?:(?:older|younger|elderly|pregnant|postmenopausal|premenopausal)\s+)?"
    r"(?:mice|mouse|rats?|rodents?|animals?|primates?|monkeys?|dogs?|cells?|cell lines?"
    r"|in vitro|adults?|children|child|kids|adolescents?|teens?|teenagers?|youths?"
    r"|infants?|newborns?|toddlers?|babies|women|woman|men|man|girls?|boys?|males?"
    r"|females?|elderly|seniors?|patients?|participants?|subjects?|volunteers?"
    r"|smokers?|non-?smokers?|drinkers?|students?|workers?|employees?|veterans?"
    r"|residents?|athletes?|users?|respondents?|households?|firms?)\b"
)
_AGE_PAT = (
    r"\b(?:aged|ages?)\s+(\d{1,3})\b"
    r"|\b(?:adults?|people|patients?|women|men|individuals?|persons?|participants?"
    r"|children|seniors?)\s+(?:aged\s+)?(?:over|under|above|below|older than|younger than)"
    r"\s+(?:the\s+age\s+of\s+)?(\d{1,3})\b(?!\s*%)"
    r"|\b(\d{1,3})\s*(?:years?|yrs?)(?:\s+of age|\s+old|\s+and (?:older|over|above)"
    r"|\s+or (?:older|over|above)|\s*\+)"
)
_WITH_PAT = (
    r"\b(?:patients?|people|persons?|individuals?|adults?|children|women|men"
    r"|participants?|subjects?|those)\s+with\s+(?:a\s+|an\s+|the\s+|type\s+\d\s+"
    r"|severe\s+|mild\s+|moderate\s+|chronic\s+|acute\s+|advanced\s+|early\s+"
    r"|a history of\s+)*([a-z][a-z-]+)"
)
_QUANT_LIMITER_PAT = (
    r"\b(?:some|a subset of|a subgroup of|subgroups?|a minority of|a portion of"
    r"|a fraction of|certain|a few|several|many|(?<!the )most|a sample of"
    r"|a small (?:number|group|sample) of|in one study|in a single study"
    r"|in a (?:small|single|pilot) (?:study|trial))\b"
)
_GENERALISER_PAT = (
    r"\b(?:all|every|everyone|everybody|everything|anyone|anybody|universally"
    r"|people in general|in general|generally|regardless of|without exception"
    r"|across the board|no one|nobody|always)\b"
)

_CAUSAL_RE = re.compile(_CAUSAL_PAT)
_CERTAINTY_RE = re.compile(_CERTAINTY_PAT)
_UNIVERSAL_RE = re.compile(_UNIVERSAL_PAT)
_RECENCY_RE = re.compile(_RECENCY_PAT)
_HEDGE_RE = re.compile(_HEDGE_PAT)
_STRONG_CERTAINTY_RE = re.compile(_STRONG_CERTAINTY_PAT)
_BOOSTER_RE = re.compile(_BOOSTER_PAT)
_DATE_RE = re.compile(_DATE_PAT)
_ASSOC_RE = re.compile(_ASSOC_PAT)
_POPULATION_RE = re.compile(_POPULATION_PAT)
_AGE_RE = re.compile(_AGE_PAT)
_WITH_RE = re.compile(_WITH_PAT)
_QUANT_LIMITER_RE = re.compile(_QUANT_LIMITER_PAT)
_GENERALISER_RE = re.compile(_GENERALISER_PAT)
_WS_RE = re.compile(r"\s+")
_SENTENCE_BREAK_RE = re.compile(r"[.!?:;]")
_YEAR_ONLY_RE = re.compile(r"(?:18|19|20)\d\d")


def _found(regex: re.Pattern[str], text: str) -> list[str]:
    """Sorted unique matches (whitespace collapsed) of `regex` in prepped `text`."""
    return sorted({_WS_RE.sub(" ", m.group(0)).strip() for m in regex.finditer(text)})


def _lexicon_sha256(parts: Iterable[str]) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode("utf-8"))
        h.update(b"\x00")
    return h.hexdigest()[:16]


_TOKEN_LEXICON: tuple[str, ...] = (
    _TOKEN_RE.pattern,
    " ".join(sorted(STOPWORDS)),
    repr(sorted(IRREGULAR_PLURALS.items())),
)
_NUMBER_LEXICON: tuple[str, ...] = (
    _NUM_RE.pattern,
    _NUM_HEDGE_BEFORE_RE.pattern,
    _RANGE_BEFORE_RE.pattern,
    _RANGE_AFTER_RE.pattern,
    _PERCENT_AFTER_RE.pattern,
)


# --------------------------------------------------------------------------------------
# Parameter checks
# --------------------------------------------------------------------------------------


def _unit(name: str, value: object) -> float:
    """A parameter that must be a real number in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SpecError(f"must be a number in [0, 1], got {value!r}", field=name)
    v = float(value)
    if not 0.0 <= v <= 1.0:
        raise SpecError(f"must be in [0, 1], got {v}", field=name)
    return v


def _penalties(
    default: object, overrides: Mapping[str, object] | None, keys: tuple[str, ...], what: str
) -> dict[str, float]:
    base = _unit("penalty", default)
    out = dict.fromkeys(keys, base)
    for key, value in (overrides or {}).items():
        if key not in out:
            raise SpecError(f"unknown {what} {key!r}; known: {', '.join(keys)}", field="penalties")
        out[key] = _unit(f"penalties.{key}", value)
    return out


# --------------------------------------------------------------------------------------
# Judges
# --------------------------------------------------------------------------------------


class BaselineJudge(ABC):
    """Shared plumbing: id, describe(), label from threshold, the async call.

    Subclasses implement `score(item) -> (score, features)`; the score is clipped to
    [0, 1] and rounded to 6 decimals so that judgments are bit-for-bit reproducible.
    """

    name: ClassVar[str]
    version: ClassVar[str] = "1"
    _lexicon: ClassVar[tuple[str, ...]] = ()

    def __init__(self, *, threshold: float = 0.5) -> None:
        self.threshold = _unit("threshold", threshold)

    @property
    def id(self) -> str:
        return f"baseline:{self.name}"

    def params(self) -> dict[str, Any]:
        """Every constructor parameter, resolved."""
        return {"threshold": self.threshold}

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "kind": "baseline",
            "version": self.version,
            "lexicon_sha256": _lexicon_sha256(self._lexicon),
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
    _lexicon = ()

    def score(self, item: JudgeItem) -> tuple[float, dict[str, Any]]:
        present = bool(item.evidence.strip())
        return (1.0 if present else 0.0), {
            "evidence_present": present,
            "evidence_chars": len(item.evidence.strip()),
        }


class TokenOverlapJudge(BaselineJudge):
    """Fraction of the claim's unique content tokens that also occur in the evidence."""

    name = "token-overlap"
    _lexicon = _TOKEN_LEXICON

    def score(self, item: JudgeItem) -> tuple[float, dict[str, Any]]:
        value, matched, missing = _overlap(item.claim, item.evidence)
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
    _lexicon = (*_TOKEN_LEXICON, _RAW_TOKEN_RE.pattern, _SENTENCE_BREAK_RE.pattern)

    @staticmethod
    def entities(text: str) -> list[tuple[str, str, str]]:
        """(surface form, normalised key, kind) for each unique entity, in order.

        kind is "name", "number" or "year".
        """
        text = text.translate(_APOSTROPHES)
        out: dict[str, tuple[str, str, str]] = {}
        run: list[str] = []
        run_at_start = False
        prev_end = 0
        sentence_start = True

        def flush() -> None:
            nonlocal run
            words = list(run)
            while words and words[0].lower() in STOPWORDS and not _is_acronym(words[0]):
                words = words[1:]
            if words and (
                not run_at_start or len(words) > 1 or len(run) > 1 or _is_acronym(words[0])
            ):
                surface = " ".join(words)
                key = " ".join(_norm_token(w.lower()) for w in words)
                out.setdefault(key, (surface, key, "name"))
            run = []

        for m in _RAW_TOKEN_RE.finditer(text):
            tok = m.group(0)
            gap = text[prev_end : m.start()]
            if prev_end and _SENTENCE_BREAK_RE.search(gap):
                sentence_start = True
            prev_end = m.end()
            if tok[0].isdigit():
                if run:
                    flush()
                key = _norm_token(tok)
                plain = key.rstrip("%")
                is_year = len(plain) == 4 and plain.isdigit() and 1800 <= int(plain) <= 2099
                out.setdefault("#" + key, (tok, key, "year" if is_year else "number"))
                sentence_start = False
                continue
            is_cap = tok[0].isupper()
            if is_cap and (not run or gap.strip() == ""):
                if not run:
                    run_at_start = sentence_start
                run.append(tok)
            else:
                if run:
                    flush()
                if is_cap:
                    run_at_start = sentence_start
                    run.append(tok)
            sentence_start = False
        if run:
            flush()
        return list(out.values())

    def score(self, item: JudgeItem) -> tuple[float, dict[str, Any]]:
        ents = self.entities(item.claim)
        if not ents:
            value, matched, missing = _overlap(item.claim, item.evidence)
            return value, {
                "fallback": "token-overlap",
                "entities": [],
                "overlap": round(value, 6),
                "matched": matched,
                "missing": missing,
            }
        ev_seq = " " + " ".join(_all_tokens(item.evidence)) + " "
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


class ForceCheckRuleJudge(BaselineJudge):
    """Token overlap minus a penalty for each class of force-raising cue in the claim.

    Cue classes: causal verbs, certainty words, universal quantifiers, recency /
    present-tense superlatives, and exact numbers (a non-year number not hedged by
    "about", "up to"... and not part of a range). Looks at the claim only.
    """

    name = "forcecheck-rule"
    CUE_CLASSES: ClassVar[tuple[str, ...]] = (
        "causal",
        "certainty",
        "universal",
        "recency",
        "exact_number",
    )
    _lexicon = (
        *_TOKEN_LEXICON,
        *_NUMBER_LEXICON,
        _CAUSAL_PAT,
        _CERTAINTY_PAT,
        _UNIVERSAL_PAT,
        _RECENCY_PAT,
    )

    def __init__(
        self,
        *,
        penalty: float = 0.15,
        penalties: Mapping[str, float] | None = None,
        threshold: float = 0.5,
    ) -> None:
        super().__init__(threshold=threshold)
        self.penalties = _penalties(penalty, penalties, self.CUE_CLASSES, "cue class")

    def params(self) -> dict[str, Any]:
        return {"penalties": dict(self.penalties), "threshold": self.threshold}

    @staticmethod
    def cues(claim: str) -> dict[str, list[str]]:
        """Every cue class that fires on `claim`, with the matched text."""
        text = _prep(claim)
        found = {
            "causal": _found(_CAUSAL_RE, text),
            "certainty": _found(_CERTAINTY_RE, text),
            "universal": _found(_UNIVERSAL_RE, text),
            "recency": _found(_RECENCY_RE, text),
            "exact_number": sorted({n.text for n in _numbers(text) if n.exact}),
        }
        return {k: v for k, v in found.items() if v}

    def score(self, item: JudgeItem) -> tuple[float, dict[str, Any]]:
        overlap, _, _ = _overlap(item.claim, item.evidence)
        cues = self.cues(item.claim)
        total = float(sum(self.penalties[k] for k in cues))
        return overlap - total, {
            "token_overlap": round(overlap, 6),
            "cues": cues,
            "cue_classes": [k for k in self.CUE_CLASSES if k in cues],
            "penalty_total": round(total, 6),
        }


class ForceCheckAxisJudge(BaselineJudge):
    """Token overlap minus a penalty for each axis where the claim drops a limiter.

    An axis fires only when the *evidence* carries a limiter on it and the claim does
    not keep it:

    - modality: evidence hedges (may, might, could, suggests, likely...) and the claim
      has no hedge, or uses strong certainty (definitely, proves, always...).
    - numeric: evidence gives a range or approximation ("10-15%", "between 3 and 5",
      "about 40") and the claim states an exact point value; or the claim states a
      figure larger than any of the same kind (percent or not) in the evidence.
    - temporal: evidence is dated (a year, "as of", "at the time"...) and the claim has
      no date marker, or says currently / now / "is the largest".
    - scope: evidence names a population (mice, older adults, patients...), an age or
      "with <condition>" qualifier, or a limiting quantifier (some, a subset of...)
      and the claim drops it; or the claim generalises (all, everyone, in general...).
    - relation: evidence speaks of association (associated, correlated, linked,
      observational...) and the claim uses a causal verb the evidence does not.
    """

    name = "forcecheck-axis"
    AXES: ClassVar[tuple[str, ...]] = ("relation", "modality", "scope", "temporal", "numeric")
    _lexicon = (
        *_TOKEN_LEXICON,
        *_NUMBER_LEXICON,
        _NUMERIC_LIMITER_RE.pattern,
        _CAUSAL_PAT,
        _RECENCY_PAT,
        _HEDGE_PAT,
        _STRONG_CERTAINTY_PAT,
        _BOOSTER_PAT,
        _DATE_PAT,
        _ASSOC_PAT,
        _POPULATION_PAT,
        _AGE_PAT,
        _WITH_PAT,
        _QUANT_LIMITER_PAT,
        _GENERALISER_PAT,
    )

    def __init__(
        self,
        *,
        penalty: float = 0.3,
        penalties: Mapping[str, float] | None = None,
        threshold: float = 0.5,
    ) -> None:
        super().__init__(threshold=threshold)
        self.penalties = _penalties(penalty, penalties, self.AXES, "axis")

    def params(self) -> dict[str, Any]:
        return {"penalties": dict(self.penalties), "threshold": self.threshold}

    # Each checker returns (evidence limiters found, reasons the axis fires).

    @staticmethod
    def _modality(ev: str, cl: str) -> tuple[list[str], list[str]]:
        hedges = _found(_HEDGE_RE, ev)
        if not hedges:
            return [], []
        claim_hedges = _found(_HEDGE_RE, cl)
        strong = _found(_STRONG_CERTAINTY_RE, cl)
        boosters = _found(_BOOSTER_RE, cl)
        reasons: list[str] = []
        if not claim_hedges:
            why = "claim drops the hedge"
            if boosters:
                why += f" and asserts ({', '.join(boosters)})"
            reasons.append(why)
        elif strong:
            reasons.append(f"claim adds strong certainty ({', '.join(strong)})")
        return hedges, reasons

    @staticmethod
    def _numeric(ev: str, cl: str) -> tuple[list[str], list[str]]:
        # A span of years ("2010 to 2015") is a temporal limiter, not a numeric one.
        limiters = [
            lim
            for lim in _found(_NUMERIC_LIMITER_RE, ev)
            if not all(_YEAR_ONLY_RE.fullmatch(n.text) for n in _numbers(lim))
        ]
        claim_nums = [n for n in _numbers(cl) if not n.year]
        reasons: list[str] = []
        exact = sorted({n.text for n in claim_nums if n.exact})
        if limiters and exact:
            reasons.append(f"claim states point value(s) {', '.join(exact)}")
        ev_nums = [n for n in _numbers(ev) if not n.year]
        for pct in (True, False):
            pool = [n.value for n in ev_nums if n.percent is pct]
            if not pool:
                continue
            top = max(pool)
            bigger = sorted({n.text for n in claim_nums if n.percent is pct and n.value > top})
            if bigger:
                reasons.append(
                    f"claim figure(s) {', '.join(bigger)} exceed the evidence's largest "
                    f"{top:g}{'%' if pct else ''}"
                )
        return limiters, reasons

    @staticmethod
    def _temporal(ev: str, cl: str) -> tuple[list[str], list[str]]:
        dates = _found(_DATE_RE, ev)
        if not dates:
            return [], []
        reasons: list[str] = []
        if not _DATE_RE.search(cl):
            reasons.append("claim has no date or time anchor")
        recency = _found(_RECENCY_RE, cl)
        if recency:
            reasons.append(f"claim asserts recency ({', '.join(recency)})")
        return dates, reasons

    @staticmethod
    def _scope(ev: str, cl: str) -> tuple[list[str], list[str]]:
        claim_tokens = set(_all_tokens(cl))
        claim_seq = " " + " ".join(_all_tokens(cl)) + " "

        pops = {" ".join(_all_tokens(p)) for p in _found(_POPULATION_RE, ev)}
        # Keep only the most specific keys: "older adult" subsumes "adult".
        pops = {p for p in pops if not any(p != q and f" {p} " in f" {q} " for q in pops)}
        quals: set[str] = set()
        for m in _AGE_RE.finditer(ev):
            quals.update(g for g in m.groups() if g)
        for m in _WITH_RE.finditer(ev):
            word = _norm_token(m.group(1))
            if word not in STOPWORDS:
                quals.add(word)
        quants = _found(_QUANT_LIMITER_RE, ev)

        limiters = sorted(pops) + sorted(quals) + quants
        if not limiters:
            return [], []
        reasons: list[str] = []
        if pops and not any(f" {p} " in claim_seq for p in pops):
            reasons.append(f"claim drops the population ({', '.join(sorted(pops))})")
        if quals and not quals & claim_tokens:
            reasons.append(f"claim drops the qualifier ({', '.join(sorted(quals))})")
        if quants and not _QUANT_LIMITER_RE.search(cl):
            reasons.append(f"claim drops the quantifier ({', '.join(quants)})")
        general = _found(_GENERALISER_RE, cl)
        if general:
            reasons.append(f"claim generalises ({', '.join(general)})")
        return limiters, reasons

    @staticmethod
    def _relation(ev: str, cl: str) -> tuple[list[str], list[str]]:
        assoc = _found(_ASSOC_RE, ev)
        if not assoc:
            return [], []
        ev_causal = set(_found(_CAUSAL_RE, ev))
        added = [c for c in _found(_CAUSAL_RE, cl) if c not in ev_causal]
        reasons = [f"claim uses causal language ({', '.join(added)})"] if added else []
        return assoc, reasons

    def axes(self, claim: str, evidence: str) -> dict[str, dict[str, list[str]]]:
        """Per axis: the evidence's limiters and the reasons (if any) it fires."""
        ev, cl = _prep(evidence), _prep(claim)
        checks = {
            "relation": self._relation,
            "modality": self._modality,
            "scope": self._scope,
            "temporal": self._temporal,
            "numeric": self._numeric,
        }
        out: dict[str, dict[str, list[str]]] = {}
        for axis in self.AXES:
            limiters, reasons = checks[axis](ev, cl)
            out[axis] = {"evidence_limiters": limiters, "reasons": reasons}
        return out

    def score(self, item: JudgeItem) -> tuple[float, dict[str, Any]]:
        overlap, _, _ = _overlap(item.claim, item.evidence)
        detail = self.axes(item.claim, item.evidence)
        fired = [axis for axis in self.AXES if detail[axis]["reasons"]]
        total = float(sum(self.penalties[a] for a in fired))
        return overlap - total, {
            "token_overlap": round(overlap, 6),
            "axes_fired": fired,
            "reasons": {a: detail[a]["reasons"] for a in fired},
            "evidence_limiters": {
                a: detail[a]["evidence_limiters"]
                for a in self.AXES
                if detail[a]["evidence_limiters"]
            },
            "penalty_total": round(total, 6),
        }


# --------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------

BASELINES: dict[str, type[BaselineJudge]] = {
    cls.name: cls
    for cls in (
        CitationPresenceJudge,
        TokenOverlapJudge,
        EntityOverlapJudge,
        ForceCheckRuleJudge,
        ForceCheckAxisJudge,
    )
}


def baseline(name: str, **params: Any) -> Judge:
    """Build a baseline judge by short name ("token-overlap") or id ("baseline:...")."""
    key = name.removeprefix("baseline:")
    cls = BASELINES.get(key)
    if cls is None:
        raise SpecError(f"unknown baseline {name!r}; known: {', '.join(BASELINES)}")
    try:
        return cls(**params)
    except TypeError as exc:
        raise SpecError(f"baseline {key!r}: {exc}") from None
