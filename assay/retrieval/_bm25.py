"""Okapi BM25 over a local corpus: an inverted index built once, numpy scoring per query."""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from array import array
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from assay.retrieval._corpus import Corpus, Hit, check_k, make_hits, top_k

# --------------------------------------------------------------------------------------
# Tokenizer
# --------------------------------------------------------------------------------------

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


def _describe_tokenizer(tok: Callable[[str], list[str]]) -> dict[str, Any]:
    describe = getattr(tok, "describe", None)
    if callable(describe):
        out = describe()
        if isinstance(out, dict):
            return out
    name = getattr(tok, "__qualname__", type(tok).__qualname__)
    return {"name": f"{getattr(tok, '__module__', '?')}.{name}", "version": None}


# --------------------------------------------------------------------------------------
# BM25
# --------------------------------------------------------------------------------------


class BM25Retriever:
    """Okapi BM25 with Lucene's non-negative idf.

    score(q, d) = Σ_{t ∈ q} qtf(t) · idf(t) · tf(t,d)·(k1+1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl))
    idf(t)      = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))

    `qtf` counts repeated query tokens; |d| is the passage's token count (title and text);
    avgdl the mean over the corpus. Only passages sharing at least one token with the
    query are returned, so a search may give fewer than `k` hits. Ties keep corpus order.
    """

    kind = "bm25"
    version = "1"

    def __init__(
        self,
        corpus: Corpus,
        *,
        k1: float = 1.5,
        b: float = 0.75,
        tokenizer: Callable[[str], list[str]] = DEFAULT_TOKENIZER,
    ) -> None:
        if not (math.isfinite(k1) and k1 >= 0):
            raise ValueError(f"k1 must be a finite number >= 0, got {k1!r}")
        if not (0.0 <= b <= 1.0):
            raise ValueError(f"b must be in [0, 1], got {b!r}")
        self._corpus = corpus
        self.k1 = float(k1)
        self.b = float(b)
        self.tokenizer = tokenizer

        # Vectorised index build: every token becomes (term id, passage index); sorting
        # the combined key groups postings by term, passages ascending within a term.
        n = len(corpus)
        vocab: dict[str, int] = {}
        term_ids: array[int] = array("q")
        doc_len = np.zeros(n, dtype=np.int64)
        for i, passage in enumerate(corpus.passages):
            text = f"{passage.title}\n{passage.text}" if passage.title else passage.text
            tokens = tokenizer(text)
            doc_len[i] = len(tokens)
            term_ids.extend([vocab.setdefault(t, len(vocab)) for t in tokens])
        docs = np.repeat(np.arange(n, dtype=np.int64), doc_len)
        keys, tf = np.unique(np.frombuffer(term_ids, dtype=np.int64) * n + docs, return_counts=True)
        post_term, post_doc = np.divmod(keys, n) if n else (keys, keys)
        df = np.bincount(post_term, minlength=len(vocab))
        self.avgdl = float(doc_len.mean()) if n else 0.0

        idf = np.log1p((n - df + 0.5) / (df + 0.5))
        norm = self.k1 * (1.0 - self.b + self.b * doc_len / (self.avgdl or 1.0))
        tf_f = tf.astype(np.float64)
        #: per posting: passage index, and idf · saturated tf (the term's full contribution)
        self._post_doc: NDArray[np.int64] = post_doc.astype(np.int64, copy=False)
        self._post_val: NDArray[np.float64] = (
            idf[post_term] * tf_f * (self.k1 + 1.0) / (tf_f + norm[post_doc])
        )
        self._offsets: NDArray[np.int64] = np.concatenate(([0], np.cumsum(df))).astype(np.int64)
        self._vocab = vocab
        self._idf_arr: NDArray[np.float64] = idf

    @property
    def corpus(self) -> Corpus:
        return self._corpus

    @property
    def vocabulary_size(self) -> int:
        return len(self._vocab)

    def idf(self, term: str) -> float:
        """idf of an (already tokenized) term; 0.0 when no passage contains it."""
        tid = self._vocab.get(term)
        return 0.0 if tid is None else float(self._idf_arr[tid])

    def scores(self, query: str) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """(indices of passages matching the query ascending, their BM25 scores)."""
        parts_ids: list[NDArray[np.int64]] = []
        parts_val: list[NDArray[np.float64]] = []
        for term, qtf in Counter(self.tokenizer(query)).items():
            tid = self._vocab.get(term)
            if tid is not None:
                lo, hi = self._offsets[tid], self._offsets[tid + 1]
                val = self._post_val[lo:hi]
                parts_ids.append(self._post_doc[lo:hi])
                parts_val.append(val * qtf if qtf != 1 else val)
        if not parts_ids:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        if len(parts_ids) == 1:
            return parts_ids[0], parts_val[0]
        n = len(self._corpus)
        if sum(len(p) for p in parts_ids) * 8 >= n:
            # long postings: accumulate into a dense vector (no sort); same addition order
            acc = np.zeros(n, dtype=np.float64)
            matched = np.zeros(n, dtype=bool)
            for ids, val in zip(parts_ids, parts_val, strict=True):
                acc[ids] += val
                matched[ids] = True
            hit = np.flatnonzero(matched)
            return hit.astype(np.int64, copy=False), acc[hit]
        uniq, inverse = np.unique(np.concatenate(parts_ids), return_inverse=True)
        summed = np.bincount(inverse, weights=np.concatenate(parts_val), minlength=len(uniq))
        return uniq.astype(np.int64, copy=False), summed.astype(np.float64, copy=False)

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """The top `k` passages for `query`; [] when no query token is in the corpus."""
        check_k(k)
        ids, scores = self.scores(query)
        return make_hits(self._corpus, top_k(ids, scores, k))

    def search_many(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        """`search` for each query, in order."""
        check_k(k)
        return [self.search(q, k) for q in queries]

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "version": self.version,
            "k1": self.k1,
            "b": self.b,
            "idf": "ln(1 + (N - df + 0.5) / (df + 0.5))",
            "fields": ["title", "text"],
            "tokenizer": _describe_tokenizer(self.tokenizer),
            "corpus": self._corpus.describe(),
        }

    def __repr__(self) -> str:
        return f"BM25Retriever(k1={self.k1}, b={self.b}, corpus={self._corpus!r})"
