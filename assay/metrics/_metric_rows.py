"""What every metric row shares: its leading fields (who produced the verdicts, on what
data) and how its estimate and CI columns are filled.

Pydantic orders a model's fields from its last base to its first, so `JudgeRow` and
`VerifierRow` list their id first, then model, prompt, and dataset, then their own
fields: the column order of every metrics table and of `metrics.json` rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, Field

from assay.metrics._pooling import POOLED, Interval

if TYPE_CHECKING:
    import pandas as pd


class _ProducerFields(BaseModel):
    model_config = ConfigDict(frozen=True)

    model: str | None = Field(default=None, description="The model id behind the verdicts.")
    prompt_id: str | None = Field(default=None, description="The prompt's id.")
    prompt_version: int | None = Field(default=None, description="The prompt's version.")
    dataset: str = Field(
        default=POOLED, description="Dataset name, or 'all' for every dataset pooled."
    )


class _JudgeId(BaseModel):
    judge_id: str = Field(description="The judge's id.")


class _VerifierId(BaseModel):
    verifier_id: str = Field(description="The verifier's id.")


class JudgeRow(_ProducerFields, _JudgeId):
    """Base of rows about one judge (ForceBench)."""


class VerifierRow(_ProducerFields, _VerifierId):
    """Base of rows about one claim verifier (factuality, gold agreement, correlation)."""


def rows_frame(rows: Sequence[BaseModel], row_type: type[BaseModel]) -> pd.DataFrame:
    """One DataFrame row per metric row, columns in `row_type`'s field order."""
    import pandas as pd  # only for frames: a run's metrics are written as JSON

    return pd.DataFrame([r.model_dump() for r in rows], columns=list(row_type.model_fields))


_Row = TypeVar("_Row", bound=BaseModel)


class RowsReport(BaseModel, Generic[_Row]):
    """A metric report: its rows first, then the settings they were computed with."""

    model_config = ConfigDict(frozen=True)

    rows: list[_Row] = Field(default_factory=list, description="The report's rows.")

    def to_frame(self) -> pd.DataFrame:
        """One DataFrame row per report row, columns in the row model's field order."""
        (row_type,) = get_args(type(self).model_fields["rows"].annotation)
        return rows_frame(self.rows, row_type)


class BootstrapFields(BaseModel):
    """The bootstrap settings a report's CIs were drawn with (a base listed before
    `RowsReport[...]`, so these fields follow the rows)."""

    n_boot: int = Field(description="Bootstrap resamples behind the CIs (0: no CI).")
    seed: int = Field(description="Seed of the resampling.")
    confidence: float = Field(description="Confidence level of the CIs.")


def estimate_fields(name: str, point: float | None, interval: Interval) -> dict[str, Any]:
    """`{name: point, name_lo: lo, name_hi: hi}`: one estimate's columns of a row."""
    return {name: point, f"{name}_lo": interval[0], f"{name}_hi": interval[1]}


def safe_div(num: float, den: float) -> float | None:
    """A rate, or None when nothing was counted."""
    return None if den == 0 else num / den
