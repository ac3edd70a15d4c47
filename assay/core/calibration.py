"""The spec's `[calibration]` table: how judges' label probabilities are scored.

Kept in `core` (pydantic only) so the spec can declare it without importing the metrics
(numpy, pandas, scipy) that compute with it (`assay.metrics._calibration`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

DEFAULT_BINS = 10
DEFAULT_FIT_SPLIT = "dev"

__all__ = ["DEFAULT_BINS", "DEFAULT_FIT_SPLIT", "CalibrationOptions"]


class CalibrationOptions(BaseModel):
    """The spec's `[calibration]` table: how ECE bins and which split recalibration is
    fitted on (the others are scored)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bins: int = Field(
        default=DEFAULT_BINS, ge=2, le=100, description="Equal-width bins of [0, 1] for ECE."
    )
    fit_on: str = Field(
        default=DEFAULT_FIT_SPLIT,
        min_length=1,
        description="The split (an items dataset's split_column) temperature scaling and "
        "isotonic regression are fitted on; they are scored on every other split.",
    )
