"""Numbers as the policy reference pages write them: thresholds as decimal
strings, ratios as exact counts, grids from integers, Wilson intervals.

A ratio keeps its numerator and denominator so tuning compares metrics as exact
fractions (ties are real ties) and F1 is computed from counts, never from rounded parts.
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation
from fractions import Fraction

from pydantic import BaseModel, ConfigDict, Field

from assay.errors import SpecError

ZERO_DENOMINATOR = "zero_denominator"
NO_GOLD = "no_gold"


def threshold(value: str | float | int, *, field: str, file: str | None = None) -> float:
    """A threshold in [0, 1] from a decimal string ("0.35"), or a number; anything else,
    NaN, or a value outside [0, 1] is a one-line error naming `field`."""
    if isinstance(value, bool):
        raise SpecError(
            f'must be a decimal string such as "0.35", got {value!r}', file=file, field=field
        )
    text = str(value).strip()
    try:
        number = float(Decimal(text))
    except (InvalidOperation, ValueError):
        raise SpecError(
            f'must be a decimal string such as "0.35", got {value!r}', file=file, field=field
        ) from None
    if not math.isfinite(number) or not 0.0 <= number <= 1.0:
        raise SpecError(f"must lie in [0, 1], got {text}", file=file, field=field)
    return float(text)


def decimal_text(value: str | float | Decimal) -> str:
    """The canonical decimal string of a threshold: "0.3" for 0.30 or "0.30"."""
    number = Decimal(str(value)).normalize()
    text = format(number, "f")
    return "0" if text in ("-0", "0") else text


def decimal_grid(start: str, stop: str, step: str) -> list[str]:
    """`start, start+step, ..., stop` (inclusive) as decimal strings with as many places as
    the most precise bound ("0.20", "0.25", ...), generated from integers so no float
    drift ever enters a grid."""
    a, b, s = Decimal(start), Decimal(stop), Decimal(step)
    if s <= 0:
        raise ValueError(f"step must be positive, got {step}")
    places = max(-int(d.as_tuple().exponent) for d in (a, b, s))
    quantum = Decimal(1).scaleb(-places)
    count = int((b - a) / s)
    return [str((a + k * s).quantize(quantum)) for k in range(count + 1) if a + k * s <= b]


class Ratio(BaseModel):
    """A metric as counts: `value` is the exact ratio as a float, None with a reason."""

    model_config = ConfigDict(frozen=True)

    numerator: int
    denominator: int
    value: float | None
    null_reason: str | None = None
    ci: tuple[float, float] | None = None
    ci_method: str | None = None
    n_resamples_valid: int | None = None

    @property
    def fraction(self) -> Fraction | None:
        """The exact value (for ranking); None when the metric is null."""
        if self.value is None:
            return None
        return Fraction(self.numerator, self.denominator) if self.denominator else Fraction(0)


def ratio(numerator: int, denominator: int, *, when_zero: float | None = None) -> Ratio:
    """`numerator / denominator`; a zero denominator gives `when_zero` (UCCR: 0.0) or null
    with `null_reason = "zero_denominator"`."""
    if denominator:
        return Ratio(numerator=numerator, denominator=denominator, value=numerator / denominator)
    if when_zero is not None:
        return Ratio(numerator=numerator, denominator=0, value=when_zero)
    return Ratio(numerator=numerator, denominator=0, value=None, null_reason=ZERO_DENOMINATOR)


def no_gold() -> Ratio:
    """A metric whose gold field is absent from the data."""
    return Ratio(numerator=0, denominator=0, value=None, null_reason=NO_GOLD)


def wilson(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """Wilson score interval of a proportion (statsmodels); None with no trial."""
    if trials == 0:
        return None
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(successes, trials, alpha=1 - confidence, method="wilson")
    return float(low), float(high)


class Thresholds(BaseModel):
    """Named thresholds as their decimal strings (what manifests and outputs write)."""

    model_config = ConfigDict(frozen=True)

    values: dict[str, str] = Field(default_factory=dict)

    def floats(self) -> dict[str, float]:
        return {k: float(v) for k, v in self.values.items()}


__all__ = [
    "NO_GOLD",
    "ZERO_DENOMINATOR",
    "Ratio",
    "Thresholds",
    "decimal_grid",
    "decimal_text",
    "no_gold",
    "ratio",
    "threshold",
    "wilson",
]
