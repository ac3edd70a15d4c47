"""``baseline:forcecheck-rule``: token overlap minus penalties for force cues in the claim."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from assay.core.judging import JudgeItem
from assay.judges._baseline_base import BaselineJudge
from assay.judges._baseline_base import penalties as resolve_penalties
from assay.judges._baseline_cues import (
    CERTAINTY_RE,
    DURABILITY_RE,
    RECENCY_RE,
    UNIVERSAL_RE,
    causal,
    found,
)
from assay.judges._baseline_text import numbers, overlap, prep


class ForceCheckRuleJudge(BaselineJudge):
    """Token overlap minus a penalty for each class of force-raising cue in the claim.

    Cue classes: causal verbs, certainty words, universal quantifiers, recency /
    present-tense superlatives / permanence ("currently", "is the largest",
    "permanently"), and exact numbers (a non-year number not hedged by "about",
    "up to"..., not bounded and not part of a range). Looks at the claim only.
    """

    name = "forcecheck-rule"
    CUE_CLASSES: ClassVar[tuple[str, ...]] = (
        "causal",
        "certainty",
        "universal",
        "recency",
        "exact_number",
    )
    lexicons = ("tokens@1", "numbers@1", "forcecheck-rule@1")

    def __init__(
        self,
        *,
        penalty: float = 0.15,
        penalties: Mapping[str, float] | None = None,
        threshold: float = 0.5,
    ) -> None:
        super().__init__(threshold=threshold)
        self.penalties = resolve_penalties(penalty, penalties, self.CUE_CLASSES, "cue class")

    def params(self) -> dict[str, Any]:
        return {"penalties": dict(self.penalties), "threshold": self.threshold}

    @staticmethod
    def cues(claim: str) -> dict[str, list[str]]:
        """Every cue class that fires on `claim`, with the matched text."""
        text = prep(claim)
        hits = {
            "causal": causal(text),
            "certainty": found(CERTAINTY_RE, text),
            "universal": found(UNIVERSAL_RE, text),
            "recency": sorted({*found(RECENCY_RE, text), *found(DURABILITY_RE, text)}),
            "exact_number": sorted({n.text for n in numbers(text) if n.exact}),
        }
        return {k: v for k, v in hits.items() if v}

    def score(self, item: JudgeItem) -> tuple[float, dict[str, Any]]:
        value, _, _ = overlap(item.claim, item.evidence)
        cues = self.cues(item.claim)
        total = float(sum(self.penalties[k] for k in cues))
        return value - total, {
            "token_overlap": round(value, 6),
            "cues": cues,
            "cue_classes": [k for k in self.CUE_CLASSES if k in cues],
            "penalty_total": round(total, 6),
        }
