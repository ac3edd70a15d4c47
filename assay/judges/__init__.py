"""Judges: anything that turns (claim, evidence) into a scored, statused judgment."""

from assay.core.judging import Judge, JudgeItem, Judgment, Status, Usage
from assay.judges._baselines import BASELINES, baseline
from assay.judges._llm import LLMJudge

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
