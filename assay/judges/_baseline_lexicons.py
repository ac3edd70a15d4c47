"""Versioned word lists and patterns of the baseline judges, loaded from package data.

Every list a baseline uses lives in ``assay/judges/lexicons/<id>@<version>.toml`` with its
source, so the rules can be read, cited and frozen apart from the code, and a judge's
``describe()`` records the SHA-256 of each file it read. A file is never edited once
released: a changed list is a new version. Loading is validated with pydantic; a broken
file is a packaging bug, reported as one line naming the file and field.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from functools import cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from assay.errors import DatasetError, first_problem

__all__ = ["Lexicon", "LexiconEntry", "LexiconFile", "lexicon", "lexicon_digest", "parse_lexicon"]

_MACRO_RE = re.compile(r"\{\{([A-Z][A-Z0-9_]*)\}\}")
_KEY_RE = re.compile(r"^[a-z][a-z0-9-]*@[1-9][0-9]*$")


class LexiconEntry(BaseModel):
    """One pattern: a raw regex, or terms joined as alternatives (``wrap`` says how)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    note: str | None = None
    terms: tuple[str, ...] | None = Field(default=None, min_length=1)
    pattern: str | None = Field(default=None, min_length=1)
    #: word: ``\\b(?:a|b)\\b``; group: ``(?:a|b)``.
    wrap: Literal["word", "group"] = "word"

    @model_validator(mode="after")
    def _one_form(self) -> LexiconEntry:
        if (self.terms is None) == (self.pattern is None):
            raise ValueError("give exactly one of 'terms' and 'pattern'")
        return self

    def template(self) -> str:
        """The regex before macro expansion."""
        if self.pattern is not None:
            return self.pattern
        alternatives = "(?:" + "|".join(self.terms or ()) + ")"
        return rf"\b{alternatives}\b" if self.wrap == "word" else alternatives


class LexiconFile(BaseModel):
    """The validated content of one lexicon file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z][a-z0-9-]*$")
    version: int = Field(ge=1)
    source: str = Field(min_length=20)
    uses: tuple[str, ...] = ()
    macros: dict[str, LexiconEntry] = {}
    patterns: dict[str, LexiconEntry] = {}
    words: dict[str, tuple[str, ...]] = {}
    mappings: dict[str, dict[str, str]] = {}
    ranks: dict[str, dict[str, int]] = {}
    params: dict[str, int | dict[str, int]] = {}


class Lexicon:
    """A loaded lexicon file: expanded patterns, word lists, and the file's SHA-256."""

    def __init__(self, key: str, data: LexiconFile, sha256: str, macros: dict[str, str]):
        self.key = key
        self.data = data
        self.sha256 = sha256
        self.macros = macros

    def pattern(self, name: str) -> str:
        """The regex source of ``patterns.<name>``, macros expanded."""
        return _expand(self.data.patterns[name].template(), self.macros, f"{self.key}:{name}")

    def regex(self, name: str, flags: int = 0) -> re.Pattern[str]:
        return re.compile(self.pattern(name), flags)

    def words(self, name: str) -> tuple[str, ...]:
        return self.data.words[name]

    def mapping(self, name: str) -> dict[str, str]:
        return dict(self.data.mappings[name])

    def ranks(self, name: str) -> dict[str, int]:
        return dict(self.data.ranks[name])

    def param(self, name: str, group: str | None = None) -> int:
        value = self.data.params[group] if group else self.data.params[name]
        if isinstance(value, dict):
            return value[name]
        return value


def _expand(template: str, macros: dict[str, str], where: str) -> str:
    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in macros:
            raise DatasetError(f"unknown macro {{{{{name}}}}}", file=where)
        return macros[name]

    return _MACRO_RE.sub(sub, template)


def parse_lexicon(key: str, raw: bytes) -> LexiconFile:
    """Validate the bytes of ``lexicons/<key>.toml``; errors name the file and field."""
    where = f"lexicons/{key}.toml"
    try:
        data = LexiconFile.model_validate(tomllib.loads(raw.decode("utf-8")))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise DatasetError(str(exc), file=where) from None
    except ValidationError as exc:
        problem = first_problem(exc, typo_first=False)
        raise DatasetError(problem.msg, file=where, field=problem.field) from None
    if f"{data.id}@{data.version}" != key:
        raise DatasetError(
            f"declares {data.id}@{data.version}; the file name must match", file=where
        )
    return data


@cache
def lexicon(key: str, package: str = "assay.judges") -> Lexicon:
    """Load ``lexicons/<key>.toml`` (key ``id@version``) of `package` (the judges' by
    default; the policies keep their cue lists in their own), validated, macros resolved."""
    if not _KEY_RE.match(key):
        raise DatasetError(f"lexicon key {key!r} is not 'name@version'")
    path = resources.files(package).joinpath("lexicons", f"{key}.toml")
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DatasetError(
            "lexicon file not found (a packaging bug)", file=f"lexicons/{key}.toml"
        ) from None
    data = parse_lexicon(key, raw)
    macros: dict[str, str] = {}
    for used in data.uses:
        macros.update(lexicon(used, package).macros)
    for name, entry in data.macros.items():
        macros[name] = _expand(entry.template(), macros, f"{key}:{name}")
    return Lexicon(key, data, hashlib.sha256(raw).hexdigest(), macros)


def lexicon_digest(keys: tuple[str, ...]) -> dict[str, str]:
    """``{key: sha256}`` for `keys` and every lexicon they use, in load order."""
    out: dict[str, str] = {}
    for key in keys:
        lex = lexicon(key)
        out.update(lexicon_digest(lex.data.uses))
        out[key] = lex.sha256
    return out
