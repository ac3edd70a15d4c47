"""Reading record fields the same way from record models, dicts and DataFrame rows.

Metrics accept records as pydantic models, plain dicts or a DataFrame of record dicts;
a DataFrame turns a missing value into None, NaN, NA or NaT and an integer column into
numpy numbers, so every field goes through one of these readers.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

_NUMBER = (int, float, str, np.integer, np.floating)
_Number = TypeVar("_Number", int, float)


def is_missing(v: object) -> bool:
    """None, pandas' NA/NaT, or a float NaN: what a DataFrame holds for an absent field.
    A value is NA/NaT only once something imported pandas, so a run's metrics, which read
    records rather than frames, never load it (0.4-0.7 s of start-up)."""
    if v is None:
        return True
    if isinstance(v, float):
        return math.isnan(v)
    pandas = sys.modules.get("pandas")
    return pandas is not None and (v is pandas.NA or v is pandas.NaT)


def opt_str(v: object) -> str | None:
    if type(v) is str:  # fast path for the common case
        return v
    if is_missing(v):
        return None
    if isinstance(v, Enum):
        return str(v.value)
    return str(v)


def _opt_number(v: object, kind: type[_Number], expected: str) -> _Number | None:
    if is_missing(v):
        return None
    if isinstance(v, _NUMBER):
        return kind(v)
    raise TypeError(f"expected {expected}, got {v!r}")


def opt_int(v: object) -> int | None:
    return _opt_number(v, int, "an integer")


def opt_float(v: object) -> float | None:
    return _opt_number(v, float, "a number")


def req_str(row: Mapping[str, Any], name: str) -> str:
    v = opt_str(row.get(name))
    if v is None:
        raise ValueError(f"record is missing required field {name!r}: {dict(row)!r}")
    return v


def producer_fields(row: Mapping[str, Any], id_field: str) -> dict[str, Any]:
    """The fields judgment and verification records share: dataset, the judge's or
    verifier's id (`id_field`), model and prompt."""
    return {
        "dataset": req_str(row, "dataset"),
        id_field: req_str(row, id_field),
        "model": opt_str(row.get("model")),
        "prompt_id": opt_str(row.get("prompt_id")),
        "prompt_version": opt_int(row.get("prompt_version")),
    }


def record_rows(
    records: Iterable[Any] | pd.DataFrame, required: Sequence[str], optional: Sequence[str]
) -> Iterator[Any]:
    """Records as they are; DataFrame rows as dicts of the columns used."""
    pandas = sys.modules.get("pandas")  # a DataFrame exists only once pandas is imported
    if pandas is not None and isinstance(records, pandas.DataFrame):
        missing = [c for c in required if c not in records.columns]
        if missing:
            raise ValueError(f"records frame lacks required columns {missing}")
        cols = [c for c in (*required, *optional) if c in records.columns]
        yield from records[cols].to_dict("records")
        return
    yield from records


@dataclass(slots=True)
class ProducerMeta:
    """Model and prompt of one judge or verifier, as its metric rows report them."""

    model: str | None = None
    prompt_id: str | None = None
    prompt_version: int | None = None

    def absorb(self, model: str | None, prompt_id: str | None, version: int | None) -> None:
        """Last non-null value wins, like the records themselves."""
        if model is not None:
            self.model = model
        if prompt_id is not None:
            self.prompt_id = prompt_id
        if version is not None:
            self.prompt_version = version

    def row_fields(self) -> dict[str, Any]:
        """The `model`, `prompt_id` and `prompt_version` fields of a metric row."""
        return {
            "model": self.model,
            "prompt_id": self.prompt_id,
            "prompt_version": self.prompt_version,
        }
