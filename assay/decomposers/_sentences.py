"""A rule-based sentence splitter: offline, no model, regular expressions only.

Rules, in order (see docs/reference/decomposers.md):

1. Every line break is a hard boundary; blank lines produce nothing.
2. Line prefixes are not part of a sentence: markdown headers (``## ``), block quotes
   (``> ``) and list markers (``- ``, ``* ``, ``+ ``, ``•``, ``1. ``, ``1) ``, ``(a) ``).
   A line that is only a marker (``---``, ``1.``) is kept as it is.
3. Inside a line, a sentence ends after ``.``, ``!``, ``?``, ``…`` or ``...``, plus any
   closing quotes, brackets and numeric citations (``[3]``) right after it, when
   whitespace follows and the next word does not start with a lowercase letter.
4. A single ``.`` after an abbreviation is not an end: titles (Dr., Mrs., Prof., ...),
   ``e.g.``, ``i.e.``, ``vs.``, ``cf.``, ``approx.`` never end a sentence; ``No.``,
   ``p.``, ``Vol.`` before a number do not; ``etc.``, ``a.m.``, ``p.m.``, ``et al.`` and
   units (``mg.``) end one only before a capital letter; ``U.S.``, ``Jr.``, ``St.``,
   initials (``J. Smith``) and other dotted acronyms end one only before a common
   sentence-opening word (The, It, This, ...). An inline list number (``1.`` at a
   sentence start or after a colon) does not end a sentence.
5. Periods without whitespace after them never split: decimals (``2.5``, ``0.05``),
   versions (``3.11.2``), URLs and e-mail addresses.

Spans are exact ``[start, end)`` offsets into the original text, whitespace excluded.
"""

from __future__ import annotations

import re
from bisect import bisect_right

from assay.core.decomposition import Sentence

SPLITTER_VERSION = "assay-sentences/1"

# one line: everything between line breaks (\r\n, \n, \r and the Unicode separators)
_LINE = re.compile(r"[^\r\n\x0b\x0c\x85\u2028\u2029]+")

# markers at the start of a line; group "body" starts the sentence text
_PREFIX = re.compile(
    r"[ \t]*"
    r"(?:(?:#{1,6}|>)[ \t]+)*"  # headers and block quotes, possibly nested
    r"(?:"
    r"(?:[-*+\u2013\u2014\u2023\u25e6\u25aa\u25cf\u2043]|\(?\d{1,3}[.)]|\(?[A-Za-z]\))[ \t]+"
    r"|\u2022[ \t]*"  # a bullet character needs no space after it
    r")?"
)

# a candidate end: terminators, closers (quotes, brackets, [12] citations), whitespace
_END = re.compile(
    r"(?P<term>\.\.\.+|[.!?\u2026]+)"
    r"(?P<close>(?:[\"'\u201d\u2019\u00bb)\]]|\[\d{1,3}(?:[-\u2013,] ?\d{1,3})*\])*)"
    r"(?P<space>[ \t\u00a0]+)"
)

# URLs and e-mail addresses: no boundary inside them
_PROTECTED = re.compile(
    r"(?:\b(?:https?|ftp)://|\bwww\.)[^\s<>\"']+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+", re.IGNORECASE
)
_TRAILING_PUNCT = ".,;:!?)]}\"'\u201d\u2019\u2026"

_OPENERS = "\"'\u201c\u2018\u00ab([{*_"

# never end a sentence (compared case-sensitively / case-insensitively)
_NEVER_FINAL_CASED = frozenset(
    {
        "Dr",
        "Drs",
        "Mr",
        "Mrs",
        "Ms",
        "Mx",
        "Prof",
        "Rev",
        "Gen",
        "Gov",
        "Sen",
        "Rep",
        "Capt",
        "Col",
        "Lt",
        "Sgt",
        "Hon",
        "Fig",
        "Figs",
        "Eq",
        "Eqs",
        "Vol",
        "Mt",
    }
)
_NEVER_FINAL = frozenset({"e.g", "i.e", "vs", "v", "cf", "approx", "viz", "ca", "incl", "esp"})
# not an end when a number follows
_BEFORE_NUMBER = frozenset(
    {"no", "nos", "p", "pp", "vol", "vols", "ch", "sec", "fig", "figs", "eq", "ref", "refs"}
)
# an end only when a capital letter follows
_FINAL_BEFORE_CAPITAL = frozenset(
    {
        "etc",
        "a.m",
        "p.m",
        "al",
        "mg",
        "mcg",
        "kg",
        "g",
        "ml",
        "l",
        "mmol",
        "min",
        "mins",
        "hr",
        "hrs",
        "sec",
        "secs",
        "wk",
        "wks",
        "yr",
        "yrs",
        "oz",
        "lb",
        "lbs",
        "ft",
        "km",
        "cm",
        "mm",
    }
)
# usually followed by a name: an end only before a common sentence-opening word
_USUALLY_BEFORE_NAME = frozenset(
    {"jr", "sr", "st", "inc", "ltd", "co", "corp", "bros", "ph.d", "m.d", "b.a", "m.a", "b.sc"}
)
_DOTTED_ACRONYM = re.compile(r"(?:[A-Za-z]\.)+[A-Za-z]")
_STARTER_WORDS = """
a an the this that these those it its it's he she they we you i there their they're
our your his her my in on at for from to by with without as of but and or so yet if
when whenever while after before during since until because although though however
also then therefore thus hence moreover furthermore meanwhile instead still some many
most all any each every both either neither few several no not none one two three
do don't does doesn't did please always never avoid take call see ask make use keep
stop try be is are was were has have had can could should would will may might must
what which who why how where here let note according overall finally first second
"""
_STARTERS = frozenset(_STARTER_WORDS.split())


def _protected_spans(text: str) -> list[tuple[int, int]]:
    if "://" not in text and "@" not in text and "www." not in text.lower():
        return []
    spans: list[tuple[int, int]] = []
    for m in _PROTECTED.finditer(text):
        end = m.end()
        while end > m.start() and text[end - 1] in _TRAILING_PUNCT:
            end -= 1
        spans.append((m.start(), end))
    return spans


def _inside(spans: list[tuple[int, int]], starts: list[int], pos: int) -> bool:
    """Whether `pos` lies in one of the sorted, non-overlapping `spans`."""
    i = bisect_right(starts, pos) - 1
    return i >= 0 and pos < spans[i][1]


def _next_word(text: str, pos: int, end: int) -> str:
    """The word starting at `pos` (after any opening quotes or brackets)."""
    while pos < end and text[pos] in _OPENERS:
        pos += 1
    stop = pos
    while stop < end and (text[stop].isalnum() or text[stop] in "'\u2019-"):
        stop += 1
    return text[pos:stop] if stop > pos else text[pos : pos + 1]


def _is_end(text: str, m: re.Match[str], sent_start: int, line_end: int) -> bool:
    """Whether the candidate `m` really ends the sentence that began at `sent_start`."""
    nxt = _next_word(text, m.end(), line_end)
    if not nxt:
        return False
    first = nxt[0]
    if first.isalpha() and first.islower():
        return False
    if m.group("term") != ".":
        return True
    before = text[sent_start : m.start()]
    cut = max(before.rfind(" "), before.rfind("\t"), before.rfind("\u00a0"))
    token = before[cut + 1 :].lstrip(_OPENERS)
    if not token:
        return True
    if token.isdigit() and len(token) <= 2:
        lead = before[: cut + 1].rstrip()
        if not lead or lead.endswith(":"):
            return False  # an inline list number ("Steps: 1. Mix. 2. Stir.")
    low = token.lower()
    if token in _NEVER_FINAL_CASED or low in _NEVER_FINAL:
        return False
    if low in _BEFORE_NUMBER and first.isdigit():
        return False
    if low in _FINAL_BEFORE_CAPITAL:
        return first.isupper()
    if (
        low in _USUALLY_BEFORE_NAME
        or (len(token) == 1 and token.isupper())
        or _DOTTED_ACRONYM.fullmatch(token)
    ):
        return nxt.lower() in _STARTERS
    return True


def _add(text: str, start: int, end: int, out: list[Sentence]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        out.append(Sentence(id=len(out), text=text[start:end], span=(start, end)))


def split_sentences(text: str) -> list[Sentence]:
    """Split `text` into sentences with exact character spans; ids run 0..n-1."""
    out: list[Sentence] = []
    if not text or text.isspace():
        return out
    protected = _protected_spans(text)
    starts = [a for a, _ in protected]
    for line in _LINE.finditer(text):
        line_start, line_end = line.span()
        prefix = _PREFIX.match(text, line_start, line_end)
        start = prefix.end() if prefix is not None else line_start
        if text[start:line_end].strip() == "":
            start = line_start  # a marker alone on its line ("-", "1.") stays as it is
        sent_start = start
        for m in _END.finditer(text, start, line_end):
            if m.end() >= line_end:
                break  # the line ends here anyway
            if protected and _inside(protected, starts, m.start()):
                continue
            if _is_end(text, m, sent_start, line_end):
                _add(text, sent_start, m.start("space"), out)
                sent_start = m.end()
        _add(text, sent_start, line_end, out)
    return out
