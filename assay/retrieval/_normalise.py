"""Retrieval scores mapped to [0, 1], next to the raw ones, by a named method.

Raw scores are not comparable across retrievers (a cosine lies in [-1, 1], BM25 and
fused scores are unbounded and query-dependent, a cross-encoder emits a logit), so a
policy threshold needs one scale. The methods:

- ``cosine``: dense cosine similarity, ``(cos + 1) / 2``;
- ``query_max``: BM25, ``score / max score of the query`` (all 0 when that max is 0);
- ``best_fused``: reciprocal-rank fusion, ``fused score / best fused score of the query``;
- ``sigmoid``: a cross-encoder logit, ``1 / (1 + e^-logit)`` (scipy's ``expit``, float64);
- ``identity``: scores already probabilities; every value must lie in [0, 1].

The per-query methods take the scores of one query's whole result list.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, get_args

import numpy as np
from numpy.typing import NDArray

from assay.retrieval._corpus import Hit

ScoreNormalization = Literal["cosine", "query_max", "best_fused", "sigmoid", "identity"]
NORMALIZATIONS: tuple[str, ...] = get_args(ScoreNormalization)

FORMULAS: dict[str, str] = {
    "cosine": "(cos + 1) / 2",
    "query_max": "score / max score of the query (0 if the max is 0)",
    "best_fused": "fused score / best fused score of the query",
    "sigmoid": "1 / (1 + exp(-logit))",
    "identity": "score (must lie in [0, 1])",
}


def _clip(values: NDArray[np.float64]) -> list[float]:
    """Into [0, 1]: only float rounding (a cosine of 1.0000001) can leave it here."""
    return [float(v) for v in np.clip(values, 0.0, 1.0)]


def normalise_scores(raw: Sequence[float], method: str) -> list[float]:
    """`raw` scores of one query mapped to [0, 1] with `method`, in order.

    Raises ValueError for an unknown method, a non-finite score, or (``identity``) a
    value outside [0, 1].
    """
    if method not in NORMALIZATIONS:
        raise ValueError(f"unknown score normalization {method!r}; known: {NORMALIZATIONS}")
    values = np.asarray(list(raw), dtype=np.float64)
    if values.size and not np.all(np.isfinite(values)):
        bad = next(v for v in raw if not math.isfinite(v))
        raise ValueError(f"retrieval score {bad!r} is not a finite number")
    if method == "cosine":
        return _clip((values + 1.0) / 2.0)
    if method == "sigmoid":
        from scipy.special import expit  # scipy loads when a logit is mapped, not on import

        return [float(v) for v in expit(values)]
    if method == "identity":
        outside = [float(v) for v in values if not 0.0 <= v <= 1.0]
        if outside:
            raise ValueError(f"normalization 'identity' needs scores in [0, 1]; got {outside[0]!r}")
        return [float(v) for v in values]
    top = float(values.max()) if values.size else 0.0
    if top <= 0.0:
        return [0.0] * values.size
    return _clip(values / top)


def normalised_hits(hits: Sequence[Hit], method: str | None) -> list[float | None]:
    """Each hit's score on [0, 1] (the hits being one query's whole result list); all
    None when the retriever names no method (a plugin that does not say)."""
    if method is None:
        return [None] * len(hits)
    return list(normalise_scores([h.score for h in hits], method))


def describe_normalization(method: str) -> dict[str, str]:
    """The method and its formula, for a retriever's describe()."""
    return {"method": method, "formula": FORMULAS[method]}
