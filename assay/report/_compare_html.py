"""A judge comparison as one self-contained HTML page, in the run report's visual language.

`render_comparison_html` turns a `ComparisonReport` (what `assay compare` computes) into
typed page data — forest plots of the paired Δs, the κ heatmap, confusion cards, the
MVR–FS scatter and reliability diagrams — and `templates/compare.html.j2` writes it with
the run report's CSS and SVG macros. Autoescaping covers every judge id, label, dataset
name and note; there are no scripts and nothing is fetched. `comparison_section` is the
same content as a section of the run report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from markupsafe import Markup

from assay._table import Grid
from assay._version import __version__
from assay.compare import ComparisonReport, ConfusionTable
from assay.metrics import PairedComparison
from assay.report._charts import DotChart
from assay.report._compare_charts import (
    KappaGrid,
    Scatter,
    force_scatter,
    forest_chart,
    is_significant,
    kappa_grid,
    p_text,
    signed,
)
from assay.report._page_fact import _cell_background
from assay.report._templates import environment
from assay.report._views_calibration import ReliabilityChart, reliability_chart
from assay.report._views_panels import comparison_panel_grids

DEFAULT_TITLE = "Judge comparison"


@dataclass(frozen=True)
class ForestPanel:
    """The forest plot of one metric: its Δ rows and how many are Holm-significant."""

    metric: str
    chart: DotChart
    n_rows: int
    n_significant: int


@dataclass(frozen=True)
class ConfusionCard:
    """One judge's confusion matrix against gold, cells shaded like the run report's."""

    judge: str
    dataset: str
    labels: tuple[str, ...]
    cells: tuple[tuple[tuple[int, str], ...], ...]  # (count, background) per gold row
    n: int
    agree: int


@dataclass(frozen=True)
class ComparisonPage:
    """Everything the comparison templates show; empty parts are left out of the page."""

    title: str
    report: ComparisonReport
    level: str
    alpha: float
    ablation_metrics: tuple[str, ...]
    forests: tuple[ForestPanel, ...]
    kappa: KappaGrid | None
    confusions: tuple[ConfusionCard, ...]
    scatter: Scatter | None
    version: str = __version__
    panels: tuple[Grid, ...] = ()
    reliability: tuple[ReliabilityChart, ...] = ()

    @property
    def alpha_text(self) -> str:
        """`0.05`: the significance level as the captions write it."""
        return f"{self.alpha:.2g}"

    @property
    def multi_run(self) -> bool:
        return len(self.report.runs) > 1

    def significant(self, row: PairedComparison) -> bool:
        return is_significant(row, self.alpha)


def _in_metric_order(report: ComparisonReport, present: Sequence[str]) -> list[str]:
    """The report's metric order, then any metric only the rows name (first seen first)."""
    seen = dict.fromkeys(present)
    return [m for m in report.metrics if m in seen] + [m for m in seen if m not in report.metrics]


def forest_panels(report: ComparisonReport) -> tuple[ForestPanel, ...]:
    """One forest plot per metric, comparisons in the report's order within each."""
    alpha = 1.0 - report.confidence
    panels = []
    for metric in _in_metric_order(report, [c.metric for c in report.comparisons]):
        rows = [c for c in report.comparisons if c.metric == metric]
        chart = forest_chart(metric, rows, confidence=report.confidence)
        n_sig = sum(is_significant(r, alpha) for r in rows)
        panels.append(ForestPanel(metric, chart, len(rows), n_sig))
    return tuple(panels)


def confusion_card(table: ConfusionTable) -> ConfusionCard:
    """Rows gold, columns predicted; the diagonal green, the rest red, by share of the peak."""
    peak = max((n for row in table.counts for n in row), default=0) or 1
    cells = tuple(
        tuple((n, _cell_background(n, peak, i == j)) for j, n in enumerate(row))
        for i, row in enumerate(table.counts)
    )
    agree = sum(row[i] for i, row in enumerate(table.counts) if i < len(row))
    total = sum(sum(row) for row in table.counts)
    return ConfusionCard(table.judge, table.dataset, tuple(table.labels), cells, total, agree)


def reliability_charts(report: ComparisonReport) -> tuple[ReliabilityChart, ...]:
    """The run report's reliability diagram for each judge and dataset with probabilities."""
    return tuple(
        reliability_chart(t.model_dump() | {"judge_id": t.judge}) for t in report.reliability
    )


def _ablation_metrics(report: ComparisonReport) -> tuple[str, ...]:
    return tuple(_in_metric_order(report, [m for row in report.ablation for m in row.metrics]))


def build_comparison_page(report: ComparisonReport, *, title: str | None = None) -> ComparisonPage:
    """The typed data of the comparison page (see `render_comparison_html`)."""
    return ComparisonPage(
        title=title or DEFAULT_TITLE,
        report=report,
        level=f"{report.confidence:.0%}",
        alpha=1.0 - report.confidence,
        ablation_metrics=_ablation_metrics(report),
        forests=forest_panels(report),
        kappa=kappa_grid(report.kappa) if report.kappa and report.kappa.raters else None,
        confusions=tuple(confusion_card(t) for t in report.confusions),
        scatter=force_scatter(report.force, confidence=report.confidence) if report.force else None,
        panels=tuple(comparison_panel_grids(report.panels)),
        reliability=reliability_charts(report),
    )


def _render(template: str, page: ComparisonPage, heading: str) -> str:
    return (
        environment()
        .get_template(template)
        .render(page=page, hx=heading, signed=signed, p_text=p_text)
    )


def render_comparison_html(report: ComparisonReport, *, title: str | None = None) -> str:
    """One self-contained HTML page: header (runs, reference, bootstrap), ablation table,
    forest plots of Δ with CIs, κ heatmap, confusion matrices, MVR–FS scatter, the
    comparisons with p and Holm p, and the notes. Parts the report lacks are left out."""
    return _render("compare.html.j2", build_comparison_page(report, title=title), "h2")


def comparison_section(report: ComparisonReport, *, title: str | None = None) -> Markup:
    """The same content as a `<section id="comparison">` for the run report's page, less
    the reliability diagrams: the run report draws them from its own metrics."""
    page = replace(build_comparison_page(report, title=title), reliability=())
    return Markup(_render("compare_section.html.j2", page, "h3"))
