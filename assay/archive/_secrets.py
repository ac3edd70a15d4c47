"""The secrets scan `assay pack` runs before it writes anything.

A packed run is meant to be published, so a credential in any of its files (a key the
model echoed into `raw_output`, a prompt with a token pasted in, a dataset URL with
`user:password@`) must stop the pack, not travel. The rules are the redaction rules of
`assay.redaction` asked as a question, so a pattern added there is refused here too.
JSON values are scanned decoded (a key after an escaped newline still has its word
boundary), and a field whose name says credential must hold nothing but the marker.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, NamedTuple

from assay.redaction import (
    MARKER,
    credential_shapes,
    is_header_container,
    is_safe_header,
    is_secret_key,
)

__all__ = ["SecretHit", "scan_file", "scan_text"]

_JSON_SUFFIXES = (".json", ".jsonl")


class SecretHit(NamedTuple):
    """Where a credential-looking value is, and what it looks like (never the value)."""

    line: int
    shape: str


def scan_file(path: Path) -> SecretHit | None:
    """The first credential-looking value in a text file; None for a clean or binary one
    (read a line at a time: a packed dataset may be large)."""
    as_json = path.name.endswith(_JSON_SUFFIXES)
    with path.open("rb") as fh:
        if b"\0" in fh.read(8192):
            return None
        fh.seek(0)
        for lineno, raw in enumerate(fh, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                return None  # binary: nothing a redaction rule could read
            shape = _line_shape(line.rstrip("\r\n"), as_json=as_json)
            if shape is not None:
                return SecretHit(lineno, shape)
    return None


def scan_text(text: str, *, as_json: bool = False) -> SecretHit | None:
    """The first credential-looking value in `text`, by line (1-based)."""
    for lineno, line in enumerate(text.splitlines(), start=1):
        shape = _line_shape(line, as_json=as_json)
        if shape is not None:
            return SecretHit(lineno, shape)
    return None


def _line_shape(line: str, *, as_json: bool) -> str | None:
    shapes = _json_line_shapes(line) if as_json else None
    if shapes is None:
        shapes = credential_shapes(line)
    return shapes[0] if shapes else None


def _json_line_shapes(line: str) -> list[str] | None:
    """Shapes in one line of JSON, read as JSON: a JSONL record, a pretty-printed
    `"key": value` line, or a bare value; None when the line is none of these."""
    body = line.strip().rstrip(",")
    for candidate in (body, "{" + body + "}"):
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        return list(_value_shapes(value))
    return None


def _value_shapes(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield from credential_shapes(value)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if is_header_container(key) and isinstance(item, Mapping):
                for name, header in item.items():
                    if not is_safe_header(name) and _filled(header):
                        yield f"value of header {name!r}"
            elif is_secret_key(key) and _filled(item):
                yield f"value of field {key!r}"
            yield from _value_shapes(item)
    elif isinstance(value, list):
        for item in value:
            yield from _value_shapes(item)


def _filled(value: Any) -> bool:
    """A credential field that holds something other than the redaction marker."""
    return isinstance(value, str) and value.strip() not in ("", MARKER)
