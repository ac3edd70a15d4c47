"""Judges: anything that turns (claim, evidence) into a scored, statused judgment.

The baselines are registered by name (`_baseline_names`) and imported when first built
or named here: their word lists are compiled then, not by every command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assay._lazy import LazyNames
from assay.core.judging import Judge, JudgeItem, Judgment, Status, Usage
from assay.judges import _baseline_names  # noqa: F401  (registers the built-in baselines)
from assay.judges._llm import LLMJudge

if TYPE_CHECKING:  # imported on first use (PEP 562)
    from assay.judges._baselines import BASELINES, baseline

_lazy = LazyNames(__name__, {"_baselines": ["BASELINES", "baseline"]}, globals())

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


def __getattr__(name: str) -> Any:
    return _lazy.get(name)


def __dir__() -> list[str]:
    return _lazy.names(__all__)
