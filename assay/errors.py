"""User-facing errors: each one renders as a single actionable line.

The CLI (`assay._cli_errors`) prints an `AssayError` as `error: <render()>` and exits 2.
Anything else is a bug in assay: it still ends in one `error: internal error: ...` line
(ASSAY_DEBUG=1 shows the traceback), so raise an `AssayError` for every input a user can
get wrong, naming the file, line or field and the fix.
"""

from __future__ import annotations

from pathlib import Path

from assay.redaction import scrub_text


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
