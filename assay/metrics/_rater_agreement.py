"""Agreement between several judges and human raters on the same items.

Ratings are a table, one row an item and one column a judge or rater (a DataFrame or a
2-D array); missing ratings are None / NaN. Pairwise Cohen's kappa comes from
scikit-learn (`cohen_kappa_score` on label codes), Krippendorff's alpha from the `krippendorff`
package (missing ratings allowed) and Fleiss' kappa from statsmodels (items every rater
labelled). Undefined values are None (NA in the kappa matrix), never NaN.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from functools import partial
from typing import Any, Literal, TypeAlias

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field

from assay.metrics._item_bootstrap import Interval, item_bootstrap_ci
from assay.metrics._panel_stats import fleiss_from_sums, fleiss_parts
from assay.metrics._resampling import Seed

Level = Literal["nominal", "ordinal", "interval"]
Ratings: TypeAlias = pd.DataFrame | NDArray[Any] | Sequence[Sequence[Any]]


def ratings_frame(ratings: Ratings) -> pd.DataFrame:
    """The ratings as a DataFrame (columns named `r0`, `r1`, ... when not given)."""
    if isinstance(ratings, pd.DataFrame):
        return ratings
    table = np.asarray(ratings, dtype=object)
    if table.ndim != 2:
        raise ValueError(f"ratings must be a 2-D table (items x raters), got shape {table.shape}")
    return pd.DataFrame(table, columns=[f"r{i}" for i in range(table.shape[1])])


def _codes(frame: pd.DataFrame, order: Sequence[Any] | None) -> tuple[NDArray[np.float64], int]:
    """Ratings as float codes (NaN = missing) in `order`, else sorted labels as strings."""
    values = frame.to_numpy(dtype=object)
    missing = np.asarray(pd.isna(values), dtype=bool)
    seen = set(values[~missing].tolist())
    labels = list(order) if order is not None else sorted(seen, key=str)
    unknown = seen - set(labels)
    if unknown:
        raise ValueError(f"ratings {sorted(unknown, key=str)} are not in order {labels}")
    index = {label: float(i) for i, label in enumerate(labels)}
    codes = np.full(values.shape, np.nan)
    codes[~missing] = [index[v] for v in values[~missing].tolist()]
    return codes, len(labels)


def kappa_matrix(
    ratings: Ratings, *, order: Sequence[Any] | None = None, weights: str | None = None
) -> pd.DataFrame:
    """Cohen's kappa of every pair of raters, over the items both rated.

    `weights="quadratic"` (needs `order`) gives quadratic-weighted kappa. The diagonal is
    each rater with itself. Cells are pandas' `Float64` with NA where kappa is undefined.
    """
    if weights not in (None, "quadratic"):
        raise ValueError(f"weights must be None or 'quadratic', got {weights!r}")
    if weights and order is None:
        raise ValueError("quadratic-weighted kappa needs the label order (order=...)")
    frame = ratings_frame(ratings)
    names = list(frame.columns)
    codes, k = _codes(frame, order)
    matrix = pd.DataFrame(pd.NA, index=names, columns=names, dtype="Float64")
    for i, a in enumerate(names):
        for j in range(i, len(names)):
            value = _pair_kappa(codes[:, i], codes[:, j], k, weights)
            matrix.loc[a, names[j]] = matrix.loc[names[j], a] = pd.NA if value is None else value
    return matrix


def _pair_kappa(
    a: NDArray[np.float64], b: NDArray[np.float64], k: int, weights: str | None
) -> float | None:
    """Cohen's kappa of two code columns over the items both rated, from their confusion
    matrix over the labels of the whole table (a label neither gave adds an empty row and
    column, which leaves kappa as it is), as scikit-learn's `cohen_kappa_score` computes
    it (tests/test_rater_agreement_kappa.py; importing sklearn.metrics would cost a
    comparison ~1 s); None when undefined."""
    both = ~(np.isnan(a) | np.isnan(b))
    if not both.any():
        return None
    x, y = b[both].astype(np.int64), a[both].astype(np.int64)
    confusion = np.bincount(x * k + y, minlength=k * k).reshape(k, k).astype(np.float64)
    expected = np.outer(confusion.sum(axis=1), confusion.sum(axis=0)) / confusion.sum()
    grid = np.arange(k, dtype=np.float64)
    cost = (grid[:, None] - grid[None, :]) ** 2 if weights == "quadratic" else 1.0 - np.eye(k)
    chance = float(np.sum(cost * expected))
    if chance == 0.0:
        return None
    value = 1.0 - float(np.sum(cost * confusion)) / chance
    return value if np.isfinite(value) else None


def _alpha_of(codes: NDArray[np.float64], level: Level, k: int) -> float | None:
    """Krippendorff's alpha of an (items, raters) code table; None when undefined."""
    import krippendorff

    domain = None if level == "interval" else np.arange(k, dtype=np.float64)
    try:
        with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
            warnings.simplefilter("ignore")
            value = krippendorff.alpha(
                reliability_data=codes.T, value_domain=domain, level_of_measurement=level
            )
    except ValueError:  # one value in the domain, or no unit with two ratings
        return None
    return float(value) if np.isfinite(value) else None


def _fleiss_of(codes: NDArray[np.float64], k: int) -> float | None:
    """Fleiss' kappa over the items every rater labelled, by the panel bootstrap's own
    sums (equal to statsmodels' `fleiss_kappa`, tested; importing statsmodels would cost
    a comparison ~1 s); None when undefined."""
    complete = ~np.isnan(codes).any(axis=1)
    if not complete.any() or codes.shape[1] < 2:
        return None
    agreement, counts, m = fleiss_parts(codes, k)
    weight = np.array([float(complete.sum())])
    kappa = fleiss_from_sums(weight, agreement.sum(keepdims=True), counts.sum(axis=0)[None], m)
    value = float(kappa[0])
    return value if np.isfinite(value) else None


class RaterAgreement(BaseModel):
    """Chance-corrected agreement among several raters (judges and/or humans)."""

    model_config = ConfigDict(frozen=True)

    raters: list[str]
    level: Level = Field(description="Krippendorff's level of measurement.")
    n_items: int = Field(description="Items (rows), whatever their missing ratings.")
    n_complete: int = Field(description="Items every rater labelled (Fleiss' kappa uses these).")
    krippendorff_alpha: float | None
    fleiss_kappa: float | None = Field(description="None for interval data or when undefined.")
    ci: dict[str, Interval | None] = Field(
        default_factory=dict, description="statistic -> percentile bootstrap CI over items."
    )


def rater_agreement(
    ratings: Ratings,
    *,
    level: Level = "nominal",
    order: Sequence[Any] | None = None,
    n_boot: int = 0,
    seed: Seed = 0,
    confidence: float = 0.95,
) -> RaterAgreement:
    """Krippendorff's alpha (nominal / ordinal / interval) and Fleiss' kappa of the raters.

    Ordinal labels take their order from `order` (else sorted); interval ratings must be
    numbers. Fleiss' kappa treats labels as nominal and is None for interval data.
    """
    frame = ratings_frame(ratings)
    if level == "interval":
        codes, k = frame.to_numpy(dtype=np.float64, na_value=np.nan), 0
    else:
        codes, k = _codes(frame, order)
    alpha = partial(_alpha_of, level=level, k=k)
    fleiss = None if level == "interval" else partial(_fleiss_of, k=k)
    ci: dict[str, Interval | None] = {}
    if n_boot:
        ci["krippendorff_alpha"] = item_bootstrap_ci(
            alpha, codes, n_boot=n_boot, seed=seed, confidence=confidence
        )
        if fleiss is not None:
            ci["fleiss_kappa"] = item_bootstrap_ci(
                fleiss, codes, n_boot=n_boot, seed=seed, confidence=confidence
            )
    return RaterAgreement(
        raters=[str(c) for c in frame.columns],
        level=level,
        n_items=len(codes),
        n_complete=int((~np.isnan(codes).any(axis=1)).sum()),
        krippendorff_alpha=alpha(codes),
        fleiss_kappa=None if fleiss is None else fleiss(codes),
        ci=ci,
    )
