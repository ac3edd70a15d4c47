"""Scores as the rule reads them and the minimal sufficient evidence.

A unit's top label is the argmax of its triple with ties resolved against entailment
(contradiction > neutral > entailment), so a tie never verifies. The MSE is greedy: the
claim's spans by `p_entail` descending (ties: chunk rank, start offset, span id), and
the first prefix of k <= `mse_max_spans` spans whose unit (the span itself for k = 1,
the recorded set score for k >= 2) reaches `tau_entail` with entailment on top. Start
offsets break ties only within a chunk; chunks of equal rank go by chunk id.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from assay.policies.fail_closed._calibration import Calibration
from assay.policies.fail_closed._inputs import FCPair, FCSetScore
from assay.policies.fail_closed._records import Triple

Label = Literal["entailment", "neutral", "contradiction"]


def _valid(value: float | None) -> bool:
    return value is not None and math.isfinite(value) and 0.0 <= value <= 1.0


def unit_triple(unit: FCPair | FCSetScore, calibration: Calibration | None) -> Triple | None:
    """The unit's scores, with `p_entail` calibrated when a calibration is set; None when
    a required score is absent, NaN, infinite or outside [0, 1]."""
    scores = (unit.p_entail, unit.p_contradict, unit.p_neutral)
    if not all(_valid(v) for v in scores):
        return None
    p_entail, p_contradict, p_neutral = (float(v) for v in scores if v is not None)
    if calibration is not None:
        calibrated = calibration.entail(p_entail, unit.logits)
        if not _valid(calibrated):
            return None
        p_entail = float(calibrated)  # type: ignore[arg-type]
    return Triple(p_entail=p_entail, p_contradict=p_contradict, p_neutral=p_neutral)


def top_label(triple: Triple) -> Label:
    """argmax of the triple; ties go against entailment."""
    if triple.p_contradict >= triple.p_neutral and triple.p_contradict >= triple.p_entail:
        return "contradiction"
    if triple.p_neutral >= triple.p_entail:
        return "neutral"
    return "entailment"


def sufficient(triple: Triple, tau_entail: float) -> bool:
    """A unit verifies: entailment >= tau_entail (a tie verifies) and on top."""
    return triple.p_entail >= tau_entail and top_label(triple) == "entailment"


@dataclass(frozen=True)
class ScoredSpan:
    pair: FCPair
    triple: Triple
    position: tuple[float, str, float]  # (chunk rank, chunk id, start offset)


@dataclass(frozen=True)
class MSE:
    """The chosen spans (empty: none qualifies), their unit's scores, how many set scores
    were consulted (each one pair of the budget), and whether some consulted unit
    reached `tau_entail` without entailment on top."""

    spans: list[ScoredSpan]
    score: Triple | None
    set_lookups: int
    entail_not_top: bool


def mse_order(spans: list[ScoredSpan]) -> list[ScoredSpan]:
    return sorted(spans, key=lambda s: (-s.triple.p_entail, *s.position, s.pair.span_id))


def minimal_sufficient_evidence(
    spans: list[ScoredSpan],
    set_scores: dict[tuple[str, ...], Triple],
    *,
    tau_entail: float,
    max_spans: int,
    budget: int,
) -> MSE:
    """Greedy MSE; a set score is consulted only while `budget` pairs remain."""
    ordered = mse_order(spans)
    lookups = 0
    not_top = False
    for k in range(1, min(max_spans, len(ordered)) + 1):
        unit = ordered[0].triple
        if k >= 2:
            recorded = set_scores.get(tuple(sorted(s.pair.span_id for s in ordered[:k])))
            if recorded is None or lookups >= budget:
                continue  # absent or unaffordable: the unit fails
            lookups += 1
            unit = recorded
        if sufficient(unit, tau_entail):
            return MSE(spans=ordered[:k], score=unit, set_lookups=lookups, entail_not_top=not_top)
        not_top = not_top or unit.p_entail >= tau_entail
    return MSE(spans=[], score=None, set_lookups=lookups, entail_not_top=not_top)


__all__ = [
    "MSE",
    "Label",
    "ScoredSpan",
    "minimal_sufficient_evidence",
    "mse_order",
    "sufficient",
    "top_label",
    "unit_triple",
]
