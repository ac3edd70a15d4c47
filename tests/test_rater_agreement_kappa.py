"""`kappa_matrix` computes Cohen's kappa itself (sklearn.metrics costs a comparison ~1 s
to import); every cell equals scikit-learn's `cohen_kappa_score` on the items both
raters rated, unweighted and quadratic, with missing ratings and unused labels."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from assay.metrics import kappa_matrix

LABELS = ["low", "mid", "high", "top"]


def _ratings(seed: int, n: int = 80, raters: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, n)  # "top" is never given: an empty row and column
    columns = {}
    for r in range(raters):
        noisy = np.where(rng.random(n) < 0.3, rng.integers(0, 3, n), truth)
        values: list[object] = [LABELS[v] for v in noisy]
        for i in np.flatnonzero(rng.random(n) < 0.15):
            values[i] = None  # not rated
        columns[f"r{r}"] = values
    return pd.DataFrame(columns, index=[f"item-{i}" for i in range(n)])


def _sklearn(frame: pd.DataFrame, a: str, b: str, weights: str | None) -> float:
    rated = frame[a].notna() & frame[b].notna()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = cohen_kappa_score(
            frame[b][rated].map(LABELS.index), frame[a][rated].map(LABELS.index),
            labels=list(range(len(LABELS))), weights=weights,
        )  # fmt: skip
    return float(value)


@pytest.mark.parametrize("weights", [None, "quadratic"])
@pytest.mark.parametrize("seed", range(5))
def test_every_cell_is_sklearns_kappa(seed: int, weights: str | None) -> None:
    frame = _ratings(seed)
    got = kappa_matrix(frame, order=LABELS, weights=weights)
    for a in frame.columns:
        for b in frame.columns:
            want = _sklearn(frame, a, b, weights)
            cell = got.loc[a, b]
            if math.isnan(want):
                assert pd.isna(cell)
            else:
                assert float(cell) == pytest.approx(want, abs=1e-12)


def test_undefined_kappa_is_missing_not_a_number() -> None:
    """Both raters gave one label everywhere: chance agreement is total, kappa undefined."""
    frame = pd.DataFrame({"a": ["low"] * 5, "b": ["low"] * 5})
    got = kappa_matrix(frame, order=LABELS)
    assert pd.isna(got.loc["a", "b"])
