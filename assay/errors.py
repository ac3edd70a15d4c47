"""User-facing errors: each one renders as a single actionable line.

The CLI catches `AssayError` and prints `str(err)`; anything else is a bug and keeps
its traceback.
"""

from __future__ import annotations

from pathlib import Path


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
        return f"{where}{fld}{self.message}"


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
