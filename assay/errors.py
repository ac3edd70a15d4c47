"""User-facing errors: each one renders as a single actionable line.

The CLI (`assay.cli._errors`) prints an `AssayError` as `error: <render()>` and exits 2.
Anything else is a bug in assay: it still ends in one `error: internal error: ...` line
(ASSAY_DEBUG=1 shows the traceback), so raise an `AssayError` for every input a user can
get wrong, naming the file, line or field and the fix.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from assay.redaction import scrub_text

if TYPE_CHECKING:
    from pydantic import ValidationError


class AssayError(Exception):
    """An error caused by user input or environment, with an optional location."""

    def __init__(
        self,
        message: str,
        *,
        file: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.file = str(file) if file is not None else None
        self.line = line
        self.field = field
        super().__init__(self.render())

    def render(self) -> str:
        where = ""
        if self.file is not None:
            where = self.file
            if self.line is not None:
                where += f":{self.line}"
            where += ": "
        fld = f"field '{self.field}': " if self.field else ""
        return scrub_text(f"{where}{fld}{self.message}")  # may quote an api_base or key


class DatasetError(AssayError):
    """A dataset file or row is malformed."""


class SpecError(AssayError):
    """A run spec is malformed or names something unknown."""


class PromptError(AssayError):
    """A prompt file is malformed, unknown, conflicting or missing a variable."""


class ModelConfigError(AssayError):
    """A model id or model setting cannot be used."""


class RunError(AssayError):
    """A run cannot start or continue (e.g. resuming with a different spec)."""


class PathError(AssayError):
    """A path names the wrong kind of thing (a file where a directory is needed), or the
    operating system refused it (permission denied, disk full)."""


class Problem(NamedTuple):
    """One pydantic validation error as a one-line error names it."""

    field: str | None  #: the location dotted (`pairs.0.page`); None when it is empty
    message: str  #: pydantic's message without its "Value error, " prefix
    msg: str  #: pydantic's message as given
    type: str  #: pydantic's error type (`extra_forbidden`, `json_invalid`, ...)
    loc: tuple[int | str, ...]  #: the location as pydantic gives it


def first_problem(exc: ValidationError, *, typo_first: bool = True) -> Problem:
    """The error of `exc` to report, for every layer (`assay.core` included). With
    `typo_first`, an unknown key comes before the rest: a typo explains the "missing
    field" error it causes; without, pydantic's own first error."""
    errors = exc.errors()
    if typo_first:
        errors = sorted(errors, key=lambda e: e["type"] != "extra_forbidden")
    err = errors[0]
    loc = tuple(err["loc"])
    msg = str(err["msg"])
    return Problem(
        field=".".join(str(p) for p in loc) or None,
        message=msg.removeprefix("Value error, "),
        msg=msg,
        type=str(err["type"]),
        loc=loc,
    )
