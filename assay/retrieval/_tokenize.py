"""The default BM25 analyser: NFKC, lowercase, word/number tokens, stopwords, optional
plural stemming. Kept from assay 0.1 so BM25 rankings stay as they were (see
docs/reference/retrieval.md); bm25s's own tokenizer is measured against it in
benchmarks/bench_bm25.py.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: English stopwords (the classic NLTK/Snowball function-word list, without the
#: contraction fragments). Part of the tokenizer's identity: see `Tokenizer.describe`.
_STOPWORD_TEXT = """
    a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your
    yours yourself yourselves
"""
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())

_TOKEN_RE = re.compile(
    r"\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,])"  # 1,000 or 12,500.75 (commas dropped)
    r"|\d+(?:\.\d+)+"  # decimals and dotted numbers: 2.5, 3.14, 1.2.3
    r"|[^\W_]+(?:'[^\W_]+)*"  # letters and digits, inner apostrophes: covid19, don't
)
_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'"})


def s_stem(token: str) -> str:
    """Harman's (1991) S-stemmer: strips English plural endings only.

    -ies → -y (not -eies/-aies); -es → -e (not -aes/-ees/-oes); -s → "" (not -us/-ss).
    Applied to alphabetic tokens longer than 3 characters.
    """
    if len(token) <= 3 or not token.isalpha():
        return token
    if token.endswith("ies") and not token.endswith(("eies", "aies")):
        return token[:-3] + "y"
    if token.endswith("es") and not token.endswith(("aes", "ees", "oes")):
        return token[:-1]
    if token.endswith("s") and not token.endswith(("us", "ss")):
        return token[:-1]
    return token


def _fold(token: str) -> str:
    """`1,000` → `1000`; possessive `'s` dropped, other apostrophes removed."""
    if "," in token:
        return token.replace(",", "")
    if "'" in token:
        return token.removesuffix("'s").replace("'", "")
    return token


@dataclass(frozen=True)
class Tokenizer:
    """The default BM25 analyser; same steps for passages and queries.

    1. Unicode NFKC, typographic apostrophes folded to "'", lowercase.
    2. Tokens: runs of letters/digits (inner apostrophes allowed), decimals such as
       `2.5`, and numbers with thousands separators (`1,000` → `1000`).
    3. Possessive `'s` dropped, other apostrophes removed (`don't` → `dont`).
    4. Stopwords (`STOPWORDS`) removed.
    5. Optional (`stem=True`): Harman's S-stemmer (`s_stem`), plurals only.
    """

    stem: bool = False
    stopwords: frozenset[str] = field(default=STOPWORDS, repr=False)

    name = "assay-words"
    version = "1"

    def __call__(self, text: str) -> list[str]:
        text = unicodedata.normalize("NFKC", text).translate(_QUOTES).lower()
        tokens: list[str] = _TOKEN_RE.findall(text)
        if "," in text or "'" in text:
            tokens = [_fold(t) for t in tokens]
        stop = self.stopwords
        out = [t for t in tokens if t and t not in stop]
        return [s_stem(t) for t in out] if self.stem else out

    def describe(self) -> dict[str, Any]:
        words = "\n".join(sorted(self.stopwords)).encode("utf-8")
        return {
            "name": self.name,
            "version": self.version,
            "stem": "s-stemmer" if self.stem else None,
            "stopwords": len(self.stopwords),
            "stopwords_sha256": hashlib.sha256(words).hexdigest(),
        }


DEFAULT_TOKENIZER = Tokenizer()


def tokenize(text: str, *, stem: bool = False) -> list[str]:
    """Tokens of `text` with the default BM25 analyser (see `Tokenizer`)."""
    return (Tokenizer(stem=True) if stem else DEFAULT_TOKENIZER)(text)


def describe_tokenizer(tok: Callable[[str], list[str]]) -> dict[str, Any]:
    describe = getattr(tok, "describe", None)
    if callable(describe):
        out = describe()
        if isinstance(out, dict):
            return out
    name = getattr(tok, "__qualname__", type(tok).__qualname__)
    return {"name": f"{getattr(tok, '__module__', '?')}.{name}", "version": None}
