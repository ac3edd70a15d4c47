"""Judges: anything that turns (claim, evidence) into a scored, statused judgment."""

from assay.judges._baselines import BASELINES, baseline
from assay.judges._llm import LLMJudge
from assay.judges._types import Judge, JudgeItem, Judgment, Status, Usage

__all__ = [
    "BASELINES",
    "Judge",
    "JudgeItem",
    "Judgment",
    "LLMJudge",
    "Status",
    "Usage",
    "baseline",
]
