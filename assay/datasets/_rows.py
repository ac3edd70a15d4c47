"""Validating a source file's rows: thin pydantic models, errors at file:line field.

Each source format declares `<Source>Row` models (subclasses of `SourceRow`) for the
rows of its files; they are validated here and converted at once into the core models
(`AnswerItem`, `GoldClaim`, `ClaimRecord`, `VerificationRecord`, `SentenceRecord`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay.core.ids import ItemId
from assay.errors import DatasetError, first_problem

RowId = Annotated[ItemId, Field(min_length=1)]
"""A source row's id: a JSON number is read as its string; never empty."""


class SourceRow(BaseModel):
    """Base of the models for a source file's rows: fields assay does not read are ignored."""

    model_config = ConfigDict(extra="ignore")


M = TypeVar("M", bound=BaseModel)


def first_error(exc: ValidationError) -> tuple[str, str | None]:
    """The most useful error first: an unknown field (a typo) before the missing one."""
    problem = first_problem(exc)
    return problem.message, problem.field


def validate_row(model: type[M], row: dict[str, Any], path: Path, line: int) -> M:
    """`row` as `model`, or a DatasetError naming file, line and the first bad field."""
    try:
        return model.model_validate(row)
    except ValidationError as exc:
        msg, fld = first_error(exc)
        raise DatasetError(msg, file=path, line=line, field=fld) from None


def check_unique(key: str, seen: dict[str, int], path: Path, line: int, fld: str) -> None:
    """Record `key` as seen on `line`; a second sighting names the first line."""
    if key in seen:
        raise DatasetError(
            f"duplicate id {key!r} (first on line {seen[key]})", file=path, line=line, field=fld
        )
    seen[key] = line


def first_key(row: dict[str, Any], keys: Sequence[str]) -> str | None:
    """The first of `keys` present with a non-null value."""
    for key in keys:
        if row.get(key) is not None:
            return key
    return None
