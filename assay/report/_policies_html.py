"""The policies section of the HTML report: per applied policy its identity,
metrics, a risk–coverage curve and an action-mix bar (inline SVG, like the report's
other charts) and, for fail_closed, sample strict/mixed renderings.

Python computes the chart geometry here; `templates/policies.html.j2` draws it with
autoescaping, so claim text such as "<script>" or "[VERIFIED]" stays text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup

from assay._values import text_width
from assay.policies.report._curves import Curve, CurvePoint
from assay.policies.report._data import MixRow, PolicyReport
from assay.report._charts import Segment
from assay.report._templates import environment
from assay.report._views_policies import four, interval, thresholds_text

# One colour per action of the common vocabulary, every one distinct, so a legend
# never shows two actions in one colour: outcomes answer in greens/blue, claims in teals.
MIX_COLOURS = {
    "answer_full": "#16a34a",
    "answer_partial": "#84cc16",
    "pass": "#2563eb",
    "assert": "#0d9488",
    "qualify": "#0891b2",
    "conflict": "#f59e0b",
    "dispute": "#ea580c",
    "abstain": "#94a3b8",
    "withhold": "#475569",
    "refuse": "#db2777",
}
OTHER_COLOURS = ("#7c3aed", "#a16207", "#be123c", "#1e3a8a", "#4d7c0f", "#c026d3")
N_TICKS = 5


@dataclass(frozen=True)
class Tick:
    pos: float
    label: str


@dataclass(frozen=True)
class Dot:
    x: float
    y: float
    tip: str


@dataclass(frozen=True)
class CurveChart:
    """A risk–coverage plot: x = coverage in [0, 1], y = risk in [0, y_max]."""

    width: float
    height: float
    left: float
    top: float
    plot_w: float
    plot_h: float
    x_ticks: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]
    path: str
    dots: tuple[Dot, ...]
    current: Dot | None
    x_title: str
    y_title: str
    aria: str


@dataclass(frozen=True)
class Bar:
    title: str
    y: float
    segments: tuple[Segment, ...]


@dataclass(frozen=True)
class MixChart:
    width: float
    height: float
    label_w: float
    plot_w: float
    bar_h: float
    bars: tuple[Bar, ...]
    legend: tuple[tuple[str, str], ...]  # (outcome, colour)


@dataclass(frozen=True)
class MetricCells:
    name: str
    value: str
    counts: str
    interval: str
    null_reason: str


@dataclass(frozen=True)
class PolicyPanel:
    report: PolicyReport
    thresholds: str
    metrics: tuple[MetricCells, ...]
    curve: CurveChart | None
    mix: MixChart | None


def _risk_max(points: Sequence[CurvePoint]) -> float:
    """The y axis top: the next tenth above the largest risk (at least 0.1)."""
    top = max(p.risk for p in points)
    return min(1.0, max(0.1, -(-round(top * 1000) // 100) / 10))


def curve_chart(name: str, curve: Curve, width: float = 520, height: float = 300) -> CurveChart:
    left, top, right, bottom = 58.0, 14.0, 18.0, 46.0
    plot_w, plot_h = width - left - right, height - top - bottom
    y_max = _risk_max([*curve.points, *([curve.current] if curve.current else [])])

    def at(p: CurvePoint) -> tuple[float, float]:
        return left + p.coverage * plot_w, top + plot_h * (1 - min(p.risk, y_max) / y_max)

    def dot(p: CurvePoint) -> Dot:
        x, y = at(p)
        return Dot(x, y, f"{p.label}: coverage {four(p.coverage)}, risk {four(p.risk)}")

    ordered = sorted(curve.points, key=lambda p: (p.coverage, p.risk))
    path = " ".join(
        f"{'M' if i == 0 else 'L'}{x:.1f} {y:.1f}" for i, (x, y) in enumerate(map(at, ordered))
    )
    steps = [i / (N_TICKS - 1) for i in range(N_TICKS)]
    return CurveChart(
        width=width,
        height=height,
        left=left,
        top=top,
        plot_w=plot_w,
        plot_h=plot_h,
        x_ticks=tuple(Tick(left + s * plot_w, f"{s:.2f}") for s in steps),
        y_ticks=tuple(Tick(top + plot_h * (1 - s), f"{s * y_max:.3f}") for s in steps),
        path=path,
        dots=tuple(dot(p) for p in curve.points),
        current=dot(curve.current) if curve.current else None,
        x_title=curve.axes.x_label,
        y_title=curve.axes.y_label,
        aria=f"risk–coverage curve of policy {name}",
    )


def _colours(rows: Sequence[MixRow]) -> dict[str, str]:
    """A distinct colour per label: the vocabulary's own, then unused spare colours, then
    evenly spread hues (a custom policy may name any number of actions)."""
    labels = list(dict.fromkeys(r.label for r in rows))
    colours = {label: MIX_COLOURS[label] for label in labels if label in MIX_COLOURS}
    spare = [c for c in OTHER_COLOURS if c not in colours.values()]
    rest = [label for label in labels if label not in colours]
    hues = [f"hsl({k * 360 / len(rest):.2f}, 65%, 42%)" for k in range(len(rest))]
    colours |= dict(zip(rest, [*spare, *hues], strict=False))
    return {label: colours[label] for label in labels}


def mix_chart(rows: Sequence[MixRow], width: float = 720) -> MixChart:
    """One stacked bar per record kind (response outcome, gate outcome, claim decision)."""
    colours = _colours(rows)
    groups = list(dict.fromkeys(r.of for r in rows))
    label_w = max(text_width(g) for g in groups) + 16
    plot_w, bar_h, gap = width - label_w - 8, 26.0, 12.0
    bars = []
    for i, group in enumerate(groups):
        x, segments = label_w, []
        for r in (r for r in rows if r.of == group):
            w = r.share * plot_w
            text = str(r.count) if w >= text_width(str(r.count)) + 6 else None
            tip = f"{group} {r.label}: {r.count} of {r.total} ({four(r.share)})"
            segments.append(Segment(x, w, colours[r.label], False, tip, text))
            x += w
        bars.append(Bar(group, 8 + i * (bar_h + gap), tuple(segments)))
    height = 8 + len(groups) * (bar_h + gap)
    legend = tuple(colours.items())
    return MixChart(width, height, label_w, plot_w, bar_h, tuple(bars), legend)


def policy_panel(report: PolicyReport) -> PolicyPanel:
    cells = tuple(
        MetricCells(
            m.name,
            four(m.value),
            f"{m.numerator}/{m.denominator}",
            interval(m),
            m.null_reason or "",
        )
        for m in report.metrics
    )
    return PolicyPanel(
        report=report,
        thresholds=thresholds_text(report),
        metrics=cells,
        curve=curve_chart(report.name, report.curve) if report.curve else None,
        mix=mix_chart(report.mix) if report.mix else None,
    )


def policies_section(reports: Sequence[PolicyReport]) -> Markup | None:
    """The section's markup, or None when no policy was applied (no section at all)."""
    if not reports:
        return None
    panels = [policy_panel(r) for r in reports]
    html = environment().get_template("policies.html.j2").render(panels=panels)
    return Markup(html)  # noqa: S704 - rendered by the autoescaping environment


__all__ = ["CurveChart", "MixChart", "PolicyPanel", "curve_chart", "mix_chart", "policies_section"]
