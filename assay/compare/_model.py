"""What a comparison of judges produces: the typed result every renderer reads.

`assay compare` (and `assay.compare(...)` from Python) reads one or more run
directories and builds a `ComparisonReport`; the text, JSON, CSV, Markdown and HTML
renderers in `assay.report` only format it. Nothing here calls a model.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from assay.metrics import PairedComparison, PanelRow
from assay.metrics._calibration import ReliabilityBin

__all__ = [
    "AblationCell",
    "AblationRow",
    "ComparedRun",
    "ComparisonReport",
    "ConfusionTable",
    "ForcePoint",
    "KappaMatrix",
    "PairedComparison",
    "ReliabilityTable",
]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class ComparedRun(_Frozen):
    """One run directory taking part, and the judges it contributed."""

    run_dir: str
    name: str
    judges: list[str] = Field(description="Judge ids as shown in the comparison.")


class AblationCell(_Frozen):
    """One metric of one judge, with its CI and, against the reference, the paired Δ."""

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = 0
    diff: float | None = Field(default=None, description="value - reference value (paired).")
    diff_ci_low: float | None = None
    diff_ci_high: float | None = None
    p_value: float | None = None
    p_holm: float | None = None


class AblationRow(_Frozen):
    """A row of the ablation table: one judge = one model x prompt version (x sample)."""

    judge: str
    run: str
    model: str | None = None
    prompt: str | None = None
    prompt_version: int | None = None
    reference: bool = False
    metrics: dict[str, AblationCell] = Field(default_factory=dict)


class KappaMatrix(_Frozen):
    """Pairwise Cohen's kappa between judges and human raters on shared items."""

    raters: list[str] = Field(description="Row/column names: judges, then human raters.")
    values: list[list[float | None]]
    n: list[list[int]] = Field(description="Items both raters labelled.")


class ConfusionTable(_Frozen):
    """One judge's confusion matrix against gold (rows gold, columns predicted)."""

    judge: str
    dataset: str
    labels: list[str]
    counts: list[list[int]]


class ForcePoint(_Frozen):
    """One judge's ForceBench MVR and FS with CIs: a point of the MVR-FS scatter."""

    judge: str
    mvr: float | None
    mvr_lo: float | None = None
    mvr_hi: float | None = None
    fs: float | None
    fs_lo: float | None = None
    fs_hi: float | None = None


class ReliabilityTable(_Frozen):
    """One judge's reliability-diagram bins on one dataset, over the items compared."""

    judge: str
    run: str
    dataset: str
    n: int = Field(description="Items with gold, a verdict and a label probability.")
    bins: int
    brier: float
    ece: float
    reliability: list[ReliabilityBin] = Field(description="The bins, as the run's report.")


class ComparisonReport(_Frozen):
    """Everything `assay compare` shows; `comparisons` is the JSON contract of the CLI."""

    runs: list[ComparedRun]
    reference: str | None = Field(default=None, description="The judge Δs are taken against.")
    metrics: list[str] = Field(description="Metric names in display order.")
    comparisons: list[PairedComparison] = Field(default_factory=list)
    ablation: list[AblationRow] = Field(default_factory=list)
    kappa: KappaMatrix | None = None
    confusions: list[ConfusionTable] = Field(default_factory=list)
    force: list[ForcePoint] = Field(default_factory=list)
    panels: list[PanelRow] = Field(
        default_factory=list,
        description="Reliability of the judges compared (and with raters), per dataset and level.",
    )
    reliability: list[ReliabilityTable] = Field(
        default_factory=list,
        description="Reliability bins of the judges with label probabilities, per dataset.",
    )
    notes: list[str] = Field(
        default_factory=list, description="E.g. items compared on the intersection only."
    )
    n_boot: int
    seed: int
    confidence: float = 0.95
    holm_families: dict[str, int] = Field(
        default_factory=dict,
        description="Holm families: the kind of item compared on -> its comparisons.",
    )

    def holm_scope(self) -> str:
        """What `p_holm` was adjusted across, as the captions say it."""
        if len(self.holm_families) <= 1:
            return f"Holm across these {len(self.comparisons)} comparisons"
        sizes = ", ".join(f"{kind}s: {n}" for kind, n in self.holm_families.items())
        return f"Holm within each family of comparisons on the same items ({sizes})"
