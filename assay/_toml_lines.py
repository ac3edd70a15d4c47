"""The line of a TOML file that a field path names (`judges[0].max_tokens`), so that an
error about a spec or policy field says where it is, as errors about data rows do.

`tomllib` (the reader assay uses) keeps no positions, so the lines are found by reading
the file's headers and keys again: `[table]` and `[[array.of.tables]]` headers (each
array entry counted), `key = ...` and dotted `a.b = ...` keys, bare or quoted. The
inside of a multi-line string is skipped. A field with no line of its own (an item of
an array, a key inside an inline table) is found at the nearest line that names a part
of it: the array's or the inline table's key, else its table's header.
"""

from __future__ import annotations

import re

__all__ = ["field_line", "key_lines"]

_KEY = r'(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|\'[^\']*\')'
_DOTTED = rf"{_KEY}(?:\s*\.\s*{_KEY})*"
_ARRAY_HEADER = re.compile(rf"^\s*\[\[\s*({_DOTTED})\s*\]\]")
_TABLE_HEADER = re.compile(rf"^\s*\[\s*({_DOTTED})\s*\]")
_KEY_LINE = re.compile(rf"^\s*({_DOTTED})\s*=")
_PART = re.compile(_KEY)
_FIELD_PART = re.compile(r"([^.\[\]]+)|\[(\d+)\]")

FieldPath = tuple[str | int, ...]


def _keys(dotted: str) -> list[str]:
    """`a."b.c".d` -> ['a', 'b.c', 'd'] (quotes removed, escapes kept as written)."""
    return [p[1:-1] if p[0] in "\"'" else p for p in _PART.findall(dotted)]


def _field_path(field: str) -> FieldPath:
    """`judges[0].models[1]` (or pydantic's `jobs.0.x`) -> ('judges', 0, 'models', 1)."""
    parts: list[str | int] = []
    for name, index in _FIELD_PART.findall(field):
        if index:
            parts.append(int(index))
        elif name.isdigit():
            parts.append(int(name))
        else:
            parts.append(name)
    return tuple(parts)


class _Tables:
    """Where headers put the keys that follow them, arrays of tables counted."""

    def __init__(self) -> None:
        self.current: FieldPath = ()
        self._arrays: dict[tuple[str, ...], int] = {}

    def resolve(self, keys: list[str]) -> FieldPath:
        """A header's keys as a path: each array of tables on the way at its latest entry."""
        path: list[str | int] = []
        for i in range(len(keys)):
            path.append(keys[i])
            entry = self._arrays.get(tuple(keys[: i + 1]))
            if entry is not None:
                path.append(entry)
        return tuple(path)

    def array_entry(self, keys: list[str]) -> FieldPath:
        name = tuple(keys)
        self._arrays[name] = self._arrays.get(name, -1) + 1
        for other in [k for k in self._arrays if k[: len(name)] == name and k != name]:
            del self._arrays[other]  # a new entry starts its own nested arrays afresh
        self.current = self.resolve(keys)
        return self.current

    def table(self, keys: list[str]) -> FieldPath:
        self.current = self.resolve(keys)
        return self.current


def key_lines(text: str) -> dict[FieldPath, int]:
    """Every header's and key's path with its (1-based) line, first one kept."""
    lines: dict[FieldPath, int] = {}
    tables = _Tables()
    closing: str | None = None  # the quotes that end the multi-line string we are in
    for number, line in enumerate(text.splitlines(), start=1):
        if closing is not None:
            if line.count(closing) % 2 == 1:
                closing = None
            continue
        if match := _ARRAY_HEADER.match(line):
            entry = tables.array_entry(_keys(match.group(1)))
            lines.setdefault(entry[:-1], number)  # the array itself: its first entry
            lines.setdefault(entry, number)
        elif match := _TABLE_HEADER.match(line):
            lines.setdefault(tables.table(_keys(match.group(1))), number)
        elif match := _KEY_LINE.match(line):
            lines.setdefault((*tables.current, *_keys(match.group(1))), number)
            value = line[match.end() :]
            for quotes in ('"""', "'''"):
                if value.count(quotes) % 2 == 1:
                    closing = quotes
    return lines


def field_line(text: str, field: str) -> int | None:
    """The line `field` (an error's field path) is written on, or the nearest line that
    names a part of it; None when nothing of it is in the file (a default)."""
    lines = key_lines(text)
    path = _field_path(field)
    for end in range(len(path), 0, -1):
        found = lines.get(path[:end])
        if found is not None:
            return found
    return None
