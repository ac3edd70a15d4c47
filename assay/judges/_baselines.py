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
  on which the evidence carries a limiter (association, hedge, subgroup/place/quantifier,
  date/duration, range/bound) that the claim drops or overrides.

Every judgment's ``parsed`` holds the feature values that produced its score, so a
score can always be traced back to the words that caused it. See ``docs/baselines.md``.
"""

from __future__ import annotations

import hashlib
import inspect
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
    "QUANTIFIER_RANK",
    "STOPWORDS",
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

_YEAR = r"(?:1\d|20)\d\d"  # 1000-2099: four-digit integers in this span are read as years

_NUM_RE = re.compile(
    r"(?<![\w.])(?<![a-z]-)(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?!\d)(?!st\b|nd\b|rd\b|th\b)"
)
_CURRENCY = r"(?:[a-z]{0,2}\$|\u00a3|\u20ac)?"
# What a number's left context makes of it. Groups: lower / upper bound, approximation,
# age ("aged 65" is a qualifier, not a measured value), "between", insisted exactness.
_NUM_BEFORE_RE = re.compile(
    r"(?:(?P<lower>\b(?:more than|over|at least|no less than|above|upwards of|in excess of"
    r"|greater than)|>|\u2265)"
    r"|(?P<upper>\b(?:up to|at most|nearly|almost|less than|under|fewer than|below"
    r"|no more than|as (?:many|much|few|little|high|low) as)|<|\u2264)"
    r"|(?P<approx>\b(?:about|approximately|approx\.?|around|roughly|some|circa|ca\."
    r"|an estimated|estimated|close to|on the order of|plus or minus)|~|\u2248|\u00b1|\+/-)"
    r"|(?P<age>\b(?:aged|ages?))"
    r"|(?P<between>\bbetween)"
    rf"|(?P<insisted>\b(?:exactly|precisely)))\s*{_CURRENCY}\s*$"
)
_RANGE_BEFORE_RE = re.compile(rf"\d\s*%?\s*(?:-|\u2013|\u2014|to|and)\s*{_CURRENCY}\s*$")
_RANGE_AFTER_RE = re.compile(
    r"^\s*(?:%|percent|per cent)?\s*(?:(?:-|\u2013|\u2014|to)\s*[a-z]{0,2}\$?\d"
    r"|\u00b1|\+/-|,?\s*plus or minus)"
)
_OPEN_AFTER_RE = re.compile(
    r"^\s*(?:%|percent\b)?\s*(?:(?P<lower>(?:and|or)\s+(?:older|over|above|more|greater"
    r"|higher)\b|\+)|(?P<upper>(?:and|or)\s+(?:younger|under|below|less|fewer|lower)\b))"
)
_PERCENT_AFTER_RE = re.compile(
    r"^\s*(?:%|percent\b|per cent\b|percentage points?\b)"
    r"|^\s*(?:-|\u2013|\u2014|to|and)\s*[\d.,]+\s*(?:%|percent\b|per cent\b)"
)
_N = r"\d+(?:[.,]\d+)*\s*%?"  # a number, optionally a percentage (limiter spans only)
_NUMERIC_LIMITER_RE = re.compile(
    rf"(?<![a-z]-){_N}\s*(?:-|\u2013|\u2014|to)\s*{_CURRENCY}{_N}"
    rf"|\bbetween\s+\S*{_N}\s+and\s+\S*{_N}"
    r"|(?:\b(?:about|approximately|approx\.?|around|roughly|nearly|almost|circa|up to"
    r"|as (?:many|much|few|little|high|low) as|an estimated|estimated|more than|at least"
    r"|at most|less than|fewer than|upwards of|close to|on the order of|no more than"
    rf"|in excess of|plus or minus)|~|\u2248|\u2265|\u2264)\s*{_CURRENCY}{_N}"
    rf"(?:\s*(?:-|\u2013|\u2014|to)\s*{_N})?"
    rf"|{_N}\s*(?:\u00b1|\+/-)\s*{_N}"
    r"|\b(?:approximate(?:ly)?|estimates?|margin of error|uncertainty|on average"
    r"|an average of|averaged?|ranged?|ranging|varied)\b"
)
_YEAR_ONLY_RE = re.compile(_YEAR)


@dataclass(frozen=True)
class _Num:
    text: str
    value: float
    percent: bool
    year: bool
    #: None for a point value, else lower / upper / approx / age / range_low / range_high.
    bound: str | None
    #: preceded by "exactly" / "precisely".
    insisted: bool

    @property
    def exact(self) -> bool:
        """A point value: no hedge, bound or range (years are never exact)."""
        return not self.year and self.bound is None


def _numbers(text: str) -> list[_Num]:
    """Numbers in already-prepped (lowercased) text, with their context."""
    out: list[_Num] = []
    for m in _NUM_RE.finditer(text):
        raw = m.group(0)
        plain = raw.replace(",", "")
        value = float(plain)
        before = text[max(0, m.start() - 40) : m.start()]
        after = text[m.end() : m.end() + 40]
        percent = bool(_PERCENT_AFTER_RE.match(after))
        year = "," not in raw and "." not in raw and len(plain) == 4 and 1000 <= value <= 2099
        year = year and not percent
        bound: str | None = None
        insisted = False
        hb = _NUM_BEFORE_RE.search(before)
        if hb is not None and hb.lastgroup == "insisted":
            insisted = True
        elif hb is not None and hb.lastgroup != "between":
            bound = hb.lastgroup
        if bound is None:
            if (hb is not None and hb.lastgroup == "between") or _RANGE_AFTER_RE.match(after):
                bound = "range_low"
            elif _RANGE_BEFORE_RE.search(before):
                bound = "range_high"
            elif (om := _OPEN_AFTER_RE.match(after)) is not None:
                bound = "lower" if om.group("lower") else "upper"
        out.append(
            _Num(
                text=raw + ("%" if percent else ""),
                value=value,
                percent=percent,
                year=year,
                bound=bound,
                insisted=insisted,
            )
        )
    return out


# --------------------------------------------------------------------------------------
# Cue lexicons (all matched against prepped, lowercased text)
# --------------------------------------------------------------------------------------

_CAUSAL_PAT = (
    r"\b(?:caus(?:e|es|ed|ing)|lead(?:s|ing)? to|led to|result(?:s|ed|ing)? (?:in|from)"
    r"|prevent(?:s|ed|ing)?|drives|drove|driven by|driving|trigger(?:s|ed)?"
    r"|induc(?:e|es|ed)|reduces|increases|improves|lowers|raises|boosts|worsens"
    r"|protects? against|cures?|because|due to|responsible for|brought about"
    r"|brings? about|contribut(?:e|es|ed|ing) to|thanks to|as a result of|owing to"
    r"|made\s+(?!up\b)(?:[a-z-]+\s+){0,2}?(?:more|less)\b)\b"
)
# Past-tense change verbs are causal only as verbs: "reduced the risk", not "a reduced
# risk" or "is associated with increased risk" (the previous word decides).
_CAUSAL_PAST_RE = re.compile(
    r"\b(?P<prev>[a-z]+)\s+(?P<verb>reduced|increased|raised|lowered|improved|boosted"
    r"|worsened|halved|doubled|eliminated)\b"
)
_NOT_VERB_WORDS = "a an the with of by to and or be is are was were been being its their no"
_NOT_VERB_BEFORE: frozenset[str] = frozenset(_NOT_VERB_WORDS.split())
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
# Claims that something lasts: a temporal raise of a dated or time-limited finding.
_DURABILITY_PAT = (
    r"\b(?:permanent(?:ly)?|indefinite(?:ly)?|in perpetuity|forever|for good|to this day"
    r"|lasting|long-lasting|enduring)\b"
)
# Weaker persistence cues, used only against dated evidence (axis-aware temporal).
_CONTINUITY_PAT = r"\b(?:ever since|since|continues? to|remains?)\b"
_HEDGE_PAT = (
    rf"\b(?:may(?!\s+{_YEAR}\b)|might|could(?! not\b)|suggests?|suggested|suggesting"
    r"|suggestive|(?<!more )(?<!less )likely|unlikely|possibly|possible|perhaps|potentially"
    r"|potential"
    r"|appears? to|appeared to|seems? to|seemed to|probably|probable|plausibl[ey]"
    r"|indicates?|indicated|tentative(?:ly)?|preliminary|uncertain|unclear"
    r"|hypothesi[sz]ed?|speculative|believed to|thought to)\b"
)
_STRONG_CERTAINTY_PAT = (
    r"\b(?:definitely|certainly|undoubtedly|unquestionably|conclusively|prove[sn]?"
    r"|proved|guarantee[sd]?|always|without (?:a )?doubt)\b"
)
_BOOSTER_PAT = r"\b(?:will|does|definitely|certainly|clearly|shows?|demonstrates?|confirms?)\b"
_MONTHS = r"(?:january|february|march|april|june|july|august|september|october|november|december)"
_MONTHS_SET: frozenset[str] = frozenset(_MONTHS[3:-1].split("|")) | {"may"}
_DATE_PAT = (
    rf"\b(?:(?:early|mid|late)[- ])?{_YEAR}(?:s|'s)?\b"
    r"|\b(?:as of|at the time|at that time|that year|historically|formerly|previously"
    rf"|in the past|last (?:year|decade|century)|{_MONTHS} {_YEAR}"
    r"|(?:first|second|third|fourth|fifth|\w+teenth|\w+tieth) century)\b"
)
# A year used attributively ("a 2019 study") dates the source, not the finding.
_ATTRIBUTIVE_YEAR_RE = re.compile(rf"\b(?:a|an|the|this|that|its|their)\s+({_YEAR})\s+(?!s\b)[a-z]")
_BARE_YEAR_RE = re.compile(rf"\b{_YEAR}\b")
_DURATION_PAT = (
    r"\b(?:temporar(?:y|ily)|briefly|brief|short-lived|for a period of|until|till"
    r"|expire[sd]?|expiring|initially|originally|fading|faded)\b"
)
_PAST_RE = re.compile(r"\b(?:was|were|had|did)\b")
_ED_RE = re.compile(r"\b[a-z]{3,}ed\b")
_PRESENT_AUX_RE = re.compile(r"\b(?:is|are|am|be|has|have|does|do|remains?)\b")
_ASSOC_PAT = (
    r"\b(?:associat(?:ed|ion|ions)|correlat(?:ed|es|ion|ions)|linked|links?"
    r"|observational|co-?occur\w*|related to|relationship|tied to|coincid\w+"
    r"|cross-sectional|predict(?:s|ed|ive|or|ors)?|cohort|surveys?|records|tend(?:s|ed)? to"
    r"|more likely|less likely|followed by|was followed|preceded|confound\w*"
    r"|(?:did|could) not (?:account|rule out|control|adjust|test|measure))\b"
)
_POP_WORDS = (
    r"(?:(?:older|younger|elderly|pregnant|postmenopausal|premenopausal)\s+)?"
    r"(?:mice|mouse|rats?|rodents?|animals?|primates?|monkeys?|dogs?|cell lines?|in vitro"
    r"|humans?|people|persons?|individuals?|adults?|children|child|kids|adolescents?"
    r"|teens?|teenagers?|youths?|infants?|newborns?|toddlers?|babies|women|woman|men|man"
    r"|girls?|boys?|males?|females?|elderly|seniors?|patients?|participants?|subjects?"
    r"|volunteers?|smokers?|non-?smokers?|drinkers?|students?|workers?|employees?"
    r"|veterans?|residents?|athletes?|users?|respondents?|households?|families|family"
    r"|firms?|companies|company|businesses|retailers?|clinics?|hospitals?|schools?)"
)
# A population word counts as a limiter only in a limiting construction: after
# in/among/of/for (up to three words between) or after a count ("480 adults").
_POPULATION_PAT = (
    rf"\b(?:in|among|of|for|on)\s+(?:[a-z0-9$,.'-]+\s+){{0,3}}?(?P<p1>{_POP_WORDS})\b"
    rf"|\b\d[\d,]*\s+(?:[a-z.'-]+\s+){{0,2}}?(?P<p2>{_POP_WORDS})\b"
)
_POP_ANY_PAT = rf"\b{_POP_WORDS}\b"
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
# Place names after in/across/throughout, matched on the original-case evidence.
_PLACE_PAT = (
    r"\b(?:in|across|throughout|around)\s+(?:the\s+)?(?:(?:northern|southern|eastern"
    r"|western|central|north|south|east|west|rural|urban)\s+)?"
    r"(?P<place>[A-Z][A-Za-z'\u2019-]*(?:\s+[A-Z][A-Za-z'\u2019-]*)*)"
)
#: Limiting quantifiers and their strength; universals (all, every...) rank 4.
QUANTIFIER_RANK: dict[str, int] = {
    "a few": 1,
    "few": 1,
    "several": 1,
    "some": 1,
    "certain": 1,
    "a minority of": 1,
    "a subset of": 1,
    "a subgroup of": 1,
    "a portion of": 1,
    "a fraction of": 1,
    "a sample of": 1,
    "a small number of": 1,
    "a small group of": 1,
    "a small sample of": 1,
    "many": 2,
    "most": 3,
    "a majority of": 3,
    "the majority of": 3,
}
_QUANT_LIMITER_PAT = (
    r"\b(?:a small (?:number|group|sample) of|a (?:subset|subgroup|minority|portion"
    r"|fraction|sample) of|a few|(?:a|the) majority of|few|several|some|certain|many"
    r"|(?<!the )(?<!at )most(?!\s+[a-z]+ly\b))\b"
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
_DURABILITY_RE = re.compile(_DURABILITY_PAT)
_CONTINUITY_RE = re.compile(_CONTINUITY_PAT)
_HEDGE_RE = re.compile(_HEDGE_PAT)
_STRONG_CERTAINTY_RE = re.compile(_STRONG_CERTAINTY_PAT)
_BOOSTER_RE = re.compile(_BOOSTER_PAT)
_DATE_RE = re.compile(_DATE_PAT)
_DURATION_RE = re.compile(_DURATION_PAT)
_ASSOC_RE = re.compile(_ASSOC_PAT)
_POPULATION_RE = re.compile(_POPULATION_PAT)
_POP_ANY_RE = re.compile(_POP_ANY_PAT)
_AGE_RE = re.compile(_AGE_PAT)
_WITH_RE = re.compile(_WITH_PAT)
_PLACE_RE = re.compile(_PLACE_PAT)
_QUANT_LIMITER_RE = re.compile(_QUANT_LIMITER_PAT)
_GENERALISER_RE = re.compile(_GENERALISER_PAT)
_WS_RE = re.compile(r"\s+")
_SENTENCE_BREAK_RE = re.compile(r"[.!?:;]")


def _found(regex: re.Pattern[str], text: str) -> list[str]:
    """Sorted unique matches (whitespace collapsed) of `regex` in prepped `text`."""
    return sorted({_WS_RE.sub(" ", m.group(0)).strip() for m in regex.finditer(text)})


def _causal(text: str) -> list[str]:
    """Causal cues in prepped `text`: the causal lexicon plus past-tense change verbs."""
    cues = set(_found(_CAUSAL_RE, text))
    for m in _CAUSAL_PAST_RE.finditer(text):
        if m.group("prev") not in _NOT_VERB_BEFORE:
            cues.add(m.group("verb"))
    return sorted(cues)


def _seq(text: str) -> str:
    """Normalised token sequence, space-padded, for whole-phrase containment tests."""
    return " " + " ".join(_all_tokens(text)) + " "


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
    _NUM_BEFORE_RE.pattern,
    _RANGE_BEFORE_RE.pattern,
    _RANGE_AFTER_RE.pattern,
    _OPEN_AFTER_RE.pattern,
    _PERCENT_AFTER_RE.pattern,
)
_CAUSAL_LEXICON: tuple[str, ...] = (
    _CAUSAL_PAT,
    _CAUSAL_PAST_RE.pattern,
    " ".join(sorted(_NOT_VERB_BEFORE)),
)


# --------------------------------------------------------------------------------------
# Parameter checks
# --------------------------------------------------------------------------------------


def _unit(name: str, value: object) -> float:
    """A parameter that must be a real number in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SpecError(f"{name} must be a number in [0, 1], got {value!r}", field=name)
    v = float(value)
    if not 0.0 <= v <= 1.0:
        raise SpecError(f"{name} must be in [0, 1], got {v}", field=name)
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
    present-tense superlatives / permanence ("currently", "is the largest",
    "permanently"), and exact numbers (a non-year number not hedged by "about",
    "up to"..., not bounded and not part of a range). Looks at the claim only.
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
        *_CAUSAL_LEXICON,
        _CERTAINTY_PAT,
        _UNIVERSAL_PAT,
        _RECENCY_PAT,
        _DURABILITY_PAT,
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
            "causal": _causal(text),
            "certainty": _found(_CERTAINTY_RE, text),
            "universal": _found(_UNIVERSAL_RE, text),
            "recency": sorted({*_found(_RECENCY_RE, text), *_found(_DURABILITY_RE, text)}),
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

    An axis fires only when the *evidence* carries a limiter on it that the claim does
    not keep (cue words the evidence itself uses never count against the claim):

    - relation: the evidence frames the finding as association (associated, correlated,
      cohort, survey, tended to, coincided, confounding...) or makes no causal claim at
      all, and the claim uses a causal verb (causes, leads to, reduced the...).
    - modality: the evidence hedges (may, might, could, suggests, likely...) and the
      claim has no hedge, or adds strong certainty (definitely, proves, always...).
    - scope: the evidence limits who or where (a population in a limiting construction
      such as "in older adults" or "480 patients", an age or "with <condition>"
      qualifier, a place after "in", or a quantifier such as "some" bound to a word the
      claim uses) and the claim drops it, strengthens the quantifier (some -> most),
      names a population the evidence never mentions, or generalises (all, everyone...).
    - temporal: the evidence is dated or time-limited and the claim asserts recency or
      permanence (currently, is the largest, permanently, since...), or, when the
      evidence dates the finding itself (not merely "a 2019 study") or limits its
      duration (temporarily, until...), the claim has no date, duration or past tense.
    - numeric: the evidence gives a range, bound or approximation and the claim states a
      point value the evidence never states exactly, or insists on exactness; or the
      claim's figure exceeds the evidence's largest of its kind; or it turns an upper
      bound / approximation into a floor ("nearly 40%" -> "over 40%").
    """

    name = "forcecheck-axis"
    AXES: ClassVar[tuple[str, ...]] = ("relation", "modality", "scope", "temporal", "numeric")
    _lexicon = (
        *_TOKEN_LEXICON,
        *_NUMBER_LEXICON,
        *_CAUSAL_LEXICON,
        _NUMERIC_LIMITER_RE.pattern,
        _RECENCY_PAT,
        _DURABILITY_PAT,
        _CONTINUITY_PAT,
        _HEDGE_PAT,
        _STRONG_CERTAINTY_PAT,
        _BOOSTER_PAT,
        _DATE_PAT,
        _ATTRIBUTIVE_YEAR_RE.pattern,
        _DURATION_PAT,
        _PAST_RE.pattern,
        _ED_RE.pattern,
        _PRESENT_AUX_RE.pattern,
        _ASSOC_PAT,
        _POPULATION_PAT,
        _AGE_PAT,
        _WITH_PAT,
        _PLACE_PAT,
        repr(sorted(QUANTIFIER_RANK.items())),
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

    # Each checker gets (evidence, claim) prepped and raw, and returns
    # (the evidence's limiters on the axis, the reasons the axis fires).

    @staticmethod
    def _relation(ev: str, cl: str, _ev_raw: str, _cl_raw: str) -> tuple[list[str], list[str]]:
        ev_causal = set(_causal(ev))
        added = [c for c in _causal(cl) if c not in ev_causal]
        assoc = _found(_ASSOC_RE, ev)
        limiters = assoc if assoc else ([] if ev_causal else ["no causal claim"])
        if not limiters or not added:
            return limiters, []
        return limiters, [f"claim uses causal language ({', '.join(added)})"]

    @staticmethod
    def _modality(ev: str, cl: str, _ev_raw: str, _cl_raw: str) -> tuple[list[str], list[str]]:
        hedges = _found(_HEDGE_RE, ev)
        if not hedges:
            return [], []
        reasons: list[str] = []
        ev_strong = set(_found(_STRONG_CERTAINTY_RE, ev))
        strong = [w for w in _found(_STRONG_CERTAINTY_RE, cl) if w not in ev_strong]
        if not _HEDGE_RE.search(cl):
            why = "claim drops the hedge"
            boosters = _found(_BOOSTER_RE, cl)
            if boosters:
                why += f" and asserts ({', '.join(boosters)})"
            reasons.append(why)
        elif strong:
            reasons.append(f"claim adds strong certainty ({', '.join(strong)})")
        return hedges, reasons

    @staticmethod
    def _scope(ev: str, cl: str, ev_raw: str, _cl_raw: str) -> tuple[list[str], list[str]]:
        cl_tokens = set(_all_tokens(cl))
        cl_content = set(content_tokens(cl))
        cl_seq, ev_seq = _seq(cl), _seq(ev)

        pops: set[str] = set()
        for m in _POPULATION_RE.finditer(ev):
            pops.add(" ".join(_all_tokens(m.group("p1") or m.group("p2"))))
        # Keep only the most specific keys: "older adult" subsumes "adult".
        pops = {p for p in pops if not any(p != q and f" {p} " in f" {q} " for q in pops)}
        quals: set[str] = set()
        for m in _AGE_RE.finditer(ev):
            quals.update(g for g in m.groups() if g)
        for m in _WITH_RE.finditer(ev):
            word = _norm_token(m.group(1))
            if word not in STOPWORDS:
                quals.add(word)
        places: dict[str, set[str]] = {}
        for m in _PLACE_RE.finditer(ev_raw.translate(_APOSTROPHES)):
            words = m.group("place").split()
            if words[0].lower() in _MONTHS_SET:
                continue
            key = " ".join(_all_tokens(m.group("place")))
            initials = "".join(w[0] for w in words).lower() if len(words) > 1 else ""
            places[key] = {key} | ({initials} if initials else set())
        quants: dict[str, int] = {}
        for m in _QUANT_LIMITER_RE.finditer(ev):
            following = content_tokens(ev[m.end() : m.end() + 60])[:2]
            if set(following) & cl_content:  # bound to something the claim talks about
                quants[m.group(0)] = QUANTIFIER_RANK[m.group(0)]

        limiters = sorted(pops) + sorted(quals) + sorted(places) + sorted(quants)
        claim_pops = {_all_tokens(m.group(0))[-1] for m in _POP_ANY_RE.finditer(cl)}
        new_pops = sorted(p for p in claim_pops if f" {p} " not in ev_seq)
        ev_general = set(_found(_GENERALISER_RE, ev))
        general = [w for w in _found(_GENERALISER_RE, cl) if w not in ev_general]
        reasons: list[str] = []
        if pops and not any(f" {p} " in cl_seq for p in pops):
            reasons.append(f"claim drops the population ({', '.join(sorted(pops))})")
        if quals and not quals & cl_tokens:
            reasons.append(f"claim drops the qualifier ({', '.join(sorted(quals))})")
        if places and not any(f" {k} " in cl_seq for ks in places.values() for k in ks):
            reasons.append(f"claim drops the place ({', '.join(sorted(places))})")
        if quants:
            claim_q = [QUANTIFIER_RANK[q] for q in _found(_QUANT_LIMITER_RE, cl)]
            claim_rank = max([*claim_q, *([4] if general else [])], default=0)
            if claim_rank == 0:
                reasons.append(f"claim drops the quantifier ({', '.join(sorted(quants))})")
            elif claim_rank > max(quants.values()):
                reasons.append(f"claim strengthens the quantifier ({', '.join(sorted(quants))})")
        if new_pops:
            reasons.append(
                f"claim names a population the evidence does not ({', '.join(new_pops)})"
            )
        if general:
            reasons.append(f"claim generalises ({', '.join(general)})")
        return limiters, reasons

    @staticmethod
    def _temporal(ev: str, cl: str, _ev_raw: str, _cl_raw: str) -> tuple[list[str], list[str]]:
        dates = _found(_DATE_RE, ev)
        durations = _found(_DURATION_RE, ev)
        if not dates and not durations:
            return [], []
        attributive = {m.start(1) for m in _ATTRIBUTIVE_YEAR_RE.finditer(ev)}
        bare_years = [m.start() for m in _BARE_YEAR_RE.finditer(ev)]
        dates_finding = (
            bool(durations)
            or any(s not in attributive for s in bare_years)
            or any(not _YEAR_ONLY_RE.fullmatch(d) for d in dates)
        )
        ev_words = set(_found(_RECENCY_RE, ev)) | set(_found(_DURABILITY_RE, ev))
        ev_words |= set(_found(_CONTINUITY_RE, ev))
        persist = sorted(
            {*_found(_RECENCY_RE, cl), *_found(_DURABILITY_RE, cl), *_found(_CONTINUITY_RE, cl)}
            - ev_words
        )
        reasons: list[str] = []
        if persist:
            reasons.append(f"claim asserts recency or permanence ({', '.join(persist)})")
        past = bool(_PAST_RE.search(cl)) or (
            bool(_ED_RE.search(cl)) and not _PRESENT_AUX_RE.search(cl)
        )
        anchored = bool(_DATE_RE.search(cl) or _DURATION_RE.search(cl)) or past
        if dates_finding and not anchored:
            reasons.append("claim has no date, duration or past-tense anchor")
        return dates + durations, reasons

    @staticmethod
    def _numeric(ev: str, cl: str, _ev_raw: str, _cl_raw: str) -> tuple[list[str], list[str]]:
        # A span of years ("2010 to 2015") is a temporal limiter, not a numeric one.
        limiters = [
            lim
            for lim in _found(_NUMERIC_LIMITER_RE, ev)
            if not (nums := _numbers(lim)) or not all(n.year for n in nums)
        ]
        ev_nums = [n for n in _numbers(ev) if not n.year]
        cl_nums = [n for n in _numbers(cl) if not n.year]
        reasons: list[str] = []
        ev_exact = {(n.value, n.percent) for n in ev_nums if n.exact}
        points = sorted(
            {n.text for n in cl_nums if n.exact and (n.value, n.percent) not in ev_exact}
        )
        if limiters and points:
            reasons.append(f"claim states point value(s) {', '.join(points)}")
        insisted = sorted({n.text for n in cl_nums if n.insisted})
        if insisted and (limiters or any(not n.exact for n in ev_nums)):
            reasons.append(f"claim insists on exactness ({', '.join(insisted)})")
        for pct in (True, False):
            pool = [n.value for n in ev_nums if n.percent is pct]
            if not pool:
                continue
            top = max(pool)
            bigger = sorted({n.text for n in cl_nums if n.percent is pct and n.value > top})
            if bigger:
                reasons.append(
                    f"claim figure(s) {', '.join(bigger)} exceed the evidence's largest "
                    f"{top:g}{'%' if pct else ''}"
                )
        ceilings = {
            (n.value, n.percent) for n in ev_nums if n.bound in ("upper", "approx", "range_high")
        }
        floors = sorted(
            {n.text for n in cl_nums if n.bound == "lower" and (n.value, n.percent) in ceilings}
        )
        if floors:
            reasons.append(f"claim turns a ceiling or estimate into a floor ({', '.join(floors)})")
        return limiters, reasons

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
            limiters, reasons = checks[axis](ev, cl, evidence, claim)
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
    accepted = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise SpecError(
            f"baseline {key!r} has no parameter {', '.join(map(repr, unknown))}; "
            f"its parameters: {', '.join(accepted)}"
        )
    return cls(**params)
