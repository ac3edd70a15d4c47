"""Tokens and numbers for the baseline judges (lists from ``tokens@1`` and ``numbers@1``).

Shared by the overlap judges, the ForceCheck judges, the overlap verifier and the
``given`` decomposer, so claim and evidence are always normalised the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

from assay.judges._baseline_lexicons import lexicon

__all__ = ["IRREGULAR_PLURALS", "STOPWORDS", "content_tokens"]

TOKENS = lexicon("tokens@1")
NUMBERS = lexicon("numbers@1")

#: Compact English function-word list (modals and quantifiers included on purpose,
#: negations not); see ``lexicons/tokens@1.toml``.
STOPWORDS: frozenset[str] = frozenset(TOKENS.words("stopwords"))
#: Irregular plurals folded to their singular during normalisation.
IRREGULAR_PLURALS: dict[str, str] = TOKENS.mapping("irregular_plurals")

TOKEN_RE = TOKENS.regex("token")
RAW_TOKEN_RE = TOKENS.regex("raw_token")
SENTENCE_BREAK_RE = TOKENS.regex("sentence_break")
_KEEP_S = tuple(TOKENS.words("keep_final_s"))
_IES_MIN = TOKENS.param("ies_min_length")
_S_MIN = TOKENS.param("s_min_length")
APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})


def prep(text: str) -> str:
    """Lowercase and fold typographic apostrophes/quotes."""
    return text.translate(APOSTROPHES).lower()


def norm_token(tok: str) -> str:
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
    if len(tok) >= _IES_MIN and tok.endswith("ies"):
        return tok[:-3] + "y"
    if len(tok) >= _S_MIN and tok.endswith("s") and not tok.endswith(_KEEP_S):
        return tok[:-1]
    return tok


def all_tokens(text: str) -> list[str]:
    """Every normalised token, stopwords included, in order."""
    return [norm_token(t) for t in TOKEN_RE.findall(prep(text))]


def content_tokens(text: str) -> list[str]:
    """Normalised content tokens of `text`, in order, stopwords removed.

    A token is a run of letters (with inner apostrophes) or a number such as "3.5",
    "1,000" or "12%". Stopwords are checked before and after normalisation.
    """
    out: list[str] = []
    for raw in TOKEN_RE.findall(prep(text)):
        if raw in STOPWORDS:
            continue
        tok = norm_token(raw)
        if tok and tok not in STOPWORDS:
            out.append(tok)
    return out


def overlap(claim: str, evidence: str) -> tuple[float, list[str], list[str]]:
    """(fraction of unique claim content tokens in the evidence, matched, missing)."""
    claim_set = set(content_tokens(claim))
    if not claim_set:
        return 0.0, [], []
    evidence_set = set(content_tokens(evidence))
    matched = sorted(claim_set & evidence_set)
    missing = sorted(claim_set - evidence_set)
    return len(matched) / len(claim_set), matched, missing


def seq(text: str) -> str:
    """Normalised token sequence, space-padded, for whole-phrase containment tests."""
    return " " + " ".join(all_tokens(text)) + " "


# ------------------------------------------------------------------------------ numbers

NUM_RE = NUMBERS.regex("number")
NUM_BEFORE_RE = NUMBERS.regex("before")
RANGE_BEFORE_RE = NUMBERS.regex("range_before")
RANGE_AFTER_RE = NUMBERS.regex("range_after")
OPEN_AFTER_RE = NUMBERS.regex("open_after")
PERCENT_AFTER_RE = NUMBERS.regex("percent_after")
NUMERIC_LIMITER_RE = NUMBERS.regex("numeric_limiter")
YEAR_ONLY_RE = NUMBERS.regex("year_only")
_CONTEXT = NUMBERS.param("context_chars")
_YEAR_MIN = NUMBERS.param("year_min")
_YEAR_MAX = NUMBERS.param("year_max")


@dataclass(frozen=True)
class Num:
    """One number found in text, with what its context makes of it."""

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


def _bound(before: str, after: str) -> tuple[str | None, bool]:
    """(bound kind or None, insisted) from a number's left and right context."""
    bound: str | None = None
    insisted = False
    hb = NUM_BEFORE_RE.search(before)
    if hb is not None and hb.lastgroup == "insisted":
        insisted = True
    elif hb is not None and hb.lastgroup != "between":
        bound = hb.lastgroup
    if bound is None:
        if (hb is not None and hb.lastgroup == "between") or RANGE_AFTER_RE.match(after):
            bound = "range_low"
        elif RANGE_BEFORE_RE.search(before):
            bound = "range_high"
        elif (om := OPEN_AFTER_RE.match(after)) is not None:
            bound = "lower" if om.group("lower") else "upper"
    return bound, insisted


def numbers(text: str) -> list[Num]:
    """Numbers in already-prepped (lowercased) text, with their context."""
    out: list[Num] = []
    for m in NUM_RE.finditer(text):
        raw = m.group(0)
        plain = raw.replace(",", "")
        value = float(plain)
        before = text[max(0, m.start() - _CONTEXT) : m.start()]
        after = text[m.end() : m.end() + _CONTEXT]
        percent = bool(PERCENT_AFTER_RE.match(after))
        year = "," not in raw and "." not in raw and len(plain) == 4
        year = year and _YEAR_MIN <= value <= _YEAR_MAX and not percent
        bound, insisted = _bound(before, after)
        out.append(
            Num(
                text=raw + ("%" if percent else ""),
                value=value,
                percent=percent,
                year=year,
                bound=bound,
                insisted=insisted,
            )
        )
    return out
