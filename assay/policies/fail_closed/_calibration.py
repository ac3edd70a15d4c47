"""Optional calibration of entailment scores and the reliability report.

A calibration is fitted once on a dev split with gold claim labels and stored as data
(the isotonic breakpoints, or a temperature) with its sha256, so applying it later is a
pure lookup that gives the same numbers on any machine. Isotonic regression is
scikit-learn's; applying the stored breakpoints is linear interpolation with clipping,
exactly what `IsotonicRegression(out_of_bounds="clip").predict` does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from assay.metrics import fit_isotonic as isotonic_map
from assay.policies.engine._canonical import canonical_sha256

N_BINS = 10


class IsotonicCalibration(BaseModel):
    """A monotone map of `p_entail` given by its breakpoints."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["isotonic"] = "isotonic"
    x: list[float] = Field(min_length=1)
    y: list[float] = Field(min_length=1)

    @property
    def sha256(self) -> str:
        return canonical_sha256(self)

    def entail(self, p_entail: float, logits: tuple[float, float, float] | None) -> float | None:
        """The calibrated entailment score (inputs outside the fitted range are clipped)."""
        return float(np.interp(p_entail, self.x, self.y))


class TemperatureCalibration(BaseModel):
    """Softmax of recorded (entail, contradict, neutral) logits divided by T."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["temperature"] = "temperature"
    temperature: float = Field(gt=0.0)

    @property
    def sha256(self) -> str:
        return canonical_sha256(self)

    def entail(self, p_entail: float, logits: tuple[float, float, float] | None) -> float | None:
        """The calibrated entailment score; None (an invalid score) without logits."""
        if logits is None or not all(math.isfinite(v) for v in logits):
            return None
        return float(softmax(logits, self.temperature)[0])


Calibration = Annotated[IsotonicCalibration | TemperatureCalibration, Field(discriminator="kind")]


def softmax(logits: Sequence[float], temperature: float = 1.0) -> np.ndarray:
    from scipy.special import softmax as scipy_softmax

    return np.asarray(scipy_softmax(np.asarray(logits, dtype=np.float64) / temperature))


def fit_isotonic(scores: Sequence[float], entailed: Sequence[bool]) -> IsotonicCalibration:
    """Fit an increasing isotonic map from entailment scores to the entailed share."""
    if not scores:
        raise ValueError("isotonic calibration needs at least one labelled score")
    model = isotonic_map(
        np.asarray(scores, dtype=np.float64), np.asarray(entailed, dtype=np.float64)
    )
    return IsotonicCalibration(
        x=[float(v) for v in model.X_thresholds_], y=[float(v) for v in model.y_thresholds_]
    )


def fit_temperature(
    logits: Sequence[tuple[float, float, float]], labels: Sequence[int]
) -> TemperatureCalibration:
    """The temperature minimising the negative log-likelihood of the gold classes
    (0 entail, 1 contradict, 2 neutral), searched on log T in [-3, 3] (scipy)."""
    from scipy.optimize import minimize_scalar
    from scipy.special import log_softmax

    if not logits:
        raise ValueError("temperature scaling needs at least one labelled logit triple")
    z = np.asarray(logits, dtype=np.float64)
    gold = np.asarray(labels, dtype=np.int64)

    def nll(log_t: float) -> float:
        logp = log_softmax(z / math.exp(log_t), axis=1)
        return float(-logp[np.arange(len(gold)), gold].mean())

    best = minimize_scalar(nll, bounds=(-3.0, 3.0), method="bounded", options={"xatol": 1e-10})
    return TemperatureCalibration(temperature=round(math.exp(float(best.x)), 12))


class ReliabilityBin(BaseModel):
    lower: float
    upper: float
    count: int
    mean_predicted: float | None
    empirical: float | None


class Reliability(BaseModel):
    """10 equal-width bins on [0, 1] (the last one closed) and the expected calibration
    error ECE = sum (n_b / N) |acc_b - conf_b|."""

    bins: list[ReliabilityBin]
    n: int
    ece: float | None


def reliability(confidences: Sequence[float], outcomes: Sequence[bool]) -> Reliability:
    """The reliability table of `confidences` against binary `outcomes`."""
    p = np.asarray(confidences, dtype=np.float64)
    y = np.asarray(outcomes, dtype=np.float64)
    edges = [k / N_BINS for k in range(N_BINS + 1)]
    ids = np.clip(np.searchsorted(edges, p, side="right") - 1, 0, N_BINS - 1)
    bins: list[ReliabilityBin] = []
    ece = 0.0
    for b in range(N_BINS):
        mask = ids == b
        count = int(mask.sum())
        conf = float(p[mask].mean()) if count else None
        acc = float(y[mask].mean()) if count else None
        if conf is not None and acc is not None:
            ece += count / len(p) * abs(acc - conf)
        bins.append(
            ReliabilityBin(
                lower=edges[b], upper=edges[b + 1], count=count, mean_predicted=conf, empirical=acc
            )
        )
    return Reliability(bins=bins, n=len(p), ece=ece if len(p) else None)


__all__ = [
    "Calibration",
    "IsotonicCalibration",
    "Reliability",
    "ReliabilityBin",
    "TemperatureCalibration",
    "fit_isotonic",
    "fit_temperature",
    "reliability",
    "softmax",
]
