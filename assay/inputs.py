"""Inputs that must not be taken literally: blank paths and byte-order marks.

`Path("")` is the current directory, so an empty `--output-dir` or `output_dir = ""`
would quietly write a run into wherever the user stands; every path a user gives goes
through `nonblank_path` (spec fields as `PathText`). Editors on Windows save UTF-8 with a
byte-order mark; every text file assay reads goes through `decode_text`, which drops it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator

from assay.errors import AssayError

BLANK_PATH = "is empty or only whitespace; give a path ('.' is the current directory)"


def nonblank_path(value: str) -> str:
    """`value` unchanged, or ValueError when it is empty or only whitespace."""
    if not value.strip():
        raise ValueError(f"path {value!r} {BLANK_PATH}")
    return value


def _path_as_text(value: Any) -> Any:
    """A `pathlib.Path` (any path-like) as its text, so Python callers need not `str()` it."""
    return os.fspath(value) if isinstance(value, os.PathLike) else value


PathText = Annotated[str, BeforeValidator(_path_as_text), AfterValidator(nonblank_path)]
"""A path-valued spec field or option: a str or a `Path`, never empty or only whitespace."""


def decode_text(data: bytes, path: str | Path) -> str:
    """UTF-8 text with a leading byte-order mark dropped; one error naming the file and
    the line of the first bad byte otherwise."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise AssayError("file is not valid UTF-8", file=path, line=line) from None


def read_text(path: str | Path) -> str:
    """The text of a file a user wrote (spec, prompt, JSON, policy), BOM or not."""
    return decode_text(Path(path).read_bytes(), path)


__all__ = ["BLANK_PATH", "PathText", "decode_text", "nonblank_path", "read_text"]
