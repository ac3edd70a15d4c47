"""Chart geometry for the HTML report: where every dot, whisker, cell and bar goes.

The templates' SVG macros (`templates/charts.svg.j2`) only draw what these frozen
dataclasses say, so layout arithmetic is Python that can be tested, and markup stays in
templates. Coordinates are pixels in the SVG's own viewBox.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

from assay._values import (
    DASH,
    as_float,
    ci,
    count,
    f3,
    label,
    label_width,
    text_width,
    tick_label,
    ticks,
)

VERDICT_ORDER = ("supported", "unsupported", "contradicted")
UNSCORED_ORDER = ("parse_error", "refusal", "truncated", "api_error", "missing")
OUTCOME_COLOURS = {
    "supported": "#16a34a",
    "unsupported": "#f59e0b",
    "contradicted": "#dc2626",
    "parse_error": "#7c3aed",
    "refusal": "#db2777",
    "truncated": "#0891b2",
    "api_error": "#334155",
    "missing": "#94a3b8",
}
_STOPS = ((0.0, (199, 233, 192)), (0.5, (254, 232, 154)), (1.0, (239, 122, 104)))


class Tick(NamedTuple):
    x: float
    label: str
    cls: str = "grid"


@dataclass(frozen=True, kw_only=True)
class Frame:
    """The drawing every chart shares: row labels left of `label_w`, the plot right of it."""

    width: float
    height: float
    label_w: float
    plot_w: float = 0.0
    top: float = 0.0
    y_end: float = 0.0


@dataclass(frozen=True)
class Estimate:
    """One point estimate with its CI, as a chart row shows it."""

    value: float | None
    lo: float | None
    hi: float | None
    tip: str
    text: str
    dy: float = 0.0
    shape: str = "dot"


@dataclass(frozen=True)
class Mark:
    y: float
    x: float | None
    whisker: tuple[float, float] | None
    cap: float
    shape: str
    tip: str
    text: str


class ChartRow(NamedTuple):
    cy: float
    label: str
    marks: tuple[Mark, ...]


@dataclass(frozen=True, kw_only=True)
class DotChart(Frame):
    """Dot-and-whisker rows (estimate and 95% CI) on a horizontal value axis."""

    aria: str
    axis_title: str
    bands: tuple[tuple[float, float], ...]
    ticks: tuple[Tick, ...]
    rows: tuple[ChartRow, ...]
    legend: bool = False
    legend_micro_x: float = 0.0
    value_title: str = "estimate [95% CI]"


def dot_chart(
    rows: Sequence[tuple[str, Sequence[Estimate]]],
    *,
    domain: tuple[float, float],
    axis_title: str,
    aria: str,
    legend: bool = False,
    tick_values: Sequence[float] | None = None,
    tick_text: Callable[[float], str] = tick_label,
    value_w: float | None = None,
    value_title: str = "estimate [95% CI]",
) -> DotChart:
    """One row per (label, estimates); two estimates per row get taller rows and a legend.

    `tick_values` (written by `tick_text`) replace the default 0.05-1.0 steps, for domains
    of any scale; `value_w` widens the column of value texts right of the plot, headed
    `value_title`."""
    label_w = label_width(name for name, _ in rows)
    plot_w, gutter = 480.0, (220.0 if legend else 170.0)
    gutter = max(gutter, value_w or 0.0)
    top, row_h = (34.0, 40.0) if legend else (24.0, 26.0)
    y_end = top + row_h * len(rows)
    lo_d, hi_d = domain

    def x(v: float) -> float:
        return label_w + (min(max(v, lo_d), hi_d) - lo_d) / (hi_d - lo_d) * plot_w

    cap = 4.0 if legend else 5.0

    def mark(cy: float, est: Estimate) -> Mark:
        whisker = None if est.lo is None or est.hi is None else (x(est.lo), x(est.hi))
        at = None if est.value is None else x(est.value)
        return Mark(cy + est.dy, at, whisker, cap, est.shape, est.tip, est.text)

    width = label_w + plot_w + gutter
    return DotChart(
        aria=aria,
        axis_title=axis_title,
        width=width,
        height=y_end + 48.0,
        label_w=label_w,
        plot_w=plot_w,
        top=top,
        y_end=y_end,
        bands=tuple((top + i * row_h, row_h) for i in range(0, len(rows), 2)),
        ticks=tuple(
            Tick(x(t), tick_text(t), "zero" if abs(t) < 1e-12 and lo_d < 0 < hi_d else "grid")
            for t in (ticks(lo_d, hi_d) if tick_values is None else tick_values)
        ),
        rows=tuple(
            ChartRow(cy, name, tuple(mark(cy, e) for e in ests))
            for i, (name, ests) in enumerate(rows)
            for cy in [top + i * row_h + row_h / 2]
        ),
        legend=legend,
        legend_micro_x=label_w + 16 + text_width("macro") + 18,
        value_title=value_title,
    )


def estimate(metric: str, who: str, row: Mapping[str, Any], key: str, n: str = "") -> Estimate:
    """`row[key]` with its `_lo`/`_hi` bounds, tipped as `who: METRIC v 95% CI [..]`."""
    value, lo, hi = (
        as_float(row.get(key)),
        as_float(row.get(f"{key}_lo")),
        as_float(row.get(f"{key}_hi")),
    )
    tip = f"{who}: {metric} {f3(value)} 95% CI {ci(lo, hi)}" + (f", n={n}" if n else "")
    text = "n/a" if value is None else f"{value:.3f} {ci(lo, hi)}"
    return Estimate(value, lo, hi, tip, text)


def heat_colour(v: float) -> str:
    """Green (0) through yellow to red (1): an MVR cell's fill."""
    v = min(max(v, 0.0), 1.0)
    for (a, ca), (b, cb) in zip(_STOPS, _STOPS[1:], strict=False):
        if v <= b:
            t = (v - a) / (b - a)
            r, g, bl = (round(ca[k] + (cb[k] - ca[k]) * t) for k in range(3))
            return f"rgb({r},{g},{bl})"
    return "rgb(239,122,104)"


@dataclass(frozen=True)
class HeatCell:
    x: float
    y: float
    fill: str
    text: str
    tip: str


@dataclass(frozen=True, kw_only=True)
class Heatmap(Frame):
    """Judges × groups grid of MVR, one block of columns per grouping."""

    aria: ClassVar[str] = "MVR per axis and severity, one row per judge"
    cell_w: float
    cell_h: float
    rows: tuple[tuple[float, str], ...]
    blocks: tuple[HeatBlock, ...]
    scale_y: float
    stops: tuple[tuple[float, str], ...] = field(
        default=tuple((p, heat_colour(p)) for p, _ in _STOPS)
    )


class HeatBlock(NamedTuple):
    title: str
    x0: float
    width: float
    columns: tuple[tuple[float, str, tuple[HeatCell, ...]], ...]  # x centre, label, cells


HeatGroup = tuple[str, list[tuple[str, str]], Mapping[tuple[str, str], Mapping[str, Any]]]


def _heat_cell(who: str, col: str, row: Mapping[str, Any] | None, x: float, y: float) -> HeatCell:
    v = None if row is None else as_float(row.get("mvr"))
    if row is None:
        tip = f"{who} · {col}: no pairs"
    else:
        tip = (
            f"{who} · {col}: MVR {f3(row.get('mvr'))} 95% CI "
            f"{ci(row.get('mvr_lo'), row.get('mvr_hi'))}, n={count(row.get('n'))}"
            f", failed={count(row.get('n_failed'))}"
        )
    fill = "#eef1f4" if v is None else heat_colour(v)
    return HeatCell(x, y, fill, DASH if v is None else f"{v:.2f}", tip)


def heatmap(judges: Sequence[str], groups: Sequence[HeatGroup]) -> Heatmap:
    """`groups`: (title, [(key, column label)], {(judge, key): metrics row})."""
    label_w = label_width(judges)
    cell_w, cell_h, gap, top = 68.0, 26.0, 22.0, 44.0
    n_cols = sum(len(cols) for _, cols, _ in groups)
    grid_w = n_cols * cell_w + gap * (len(groups) - 1)
    y_end = top + cell_h * len(judges)
    blocks: list[HeatBlock] = []
    x0 = label_w
    for title, cols, cells in groups:
        columns = tuple(
            (
                cx + cell_w / 2,
                col,
                tuple(
                    _heat_cell(j, col, cells.get((j, key)), cx, top + i * cell_h)
                    for i, j in enumerate(judges)
                ),
            )
            for c, (key, col) in enumerate(cols)
            for cx in [x0 + c * cell_w]
        )
        blocks.append(HeatBlock(title, x0, len(cols) * cell_w, columns))
        x0 += len(cols) * cell_w + gap
    return Heatmap(
        width=label_w + max(grid_w, 300.0) + 12,
        height=y_end + 58,
        label_w=label_w,
        cell_w=cell_w,
        cell_h=cell_h,
        rows=tuple((top + i * cell_h + cell_h / 2, j) for i, j in enumerate(judges)),
        blocks=tuple(blocks),
        scale_y=y_end + 18,
    )


@dataclass(frozen=True)
class Segment:
    x: float
    width: float
    fill: str
    hatched: bool
    tip: str
    text: str | None


@dataclass(frozen=True)
class Bar:
    cy: float
    label: str
    segments: tuple[Segment, ...] | None  # None: the verifier has no claims
    summary: str
    warn: bool


@dataclass(frozen=True, kw_only=True)
class OutcomeBars(Frame):
    """One 100% stacked bar per verifier: verdicts, then every kind of unscored claim."""

    bar_h: float
    bars: tuple[Bar, ...]
    ticks: tuple[Tick, ...]


def _segments(
    who: str, counts: Sequence[tuple[str, int]], total: int, x0: float, plot_w: float
) -> list[Segment]:
    out = []
    for status, n in counts:
        if n <= 0:
            continue
        w = n / total * plot_w
        tip = f"{who} · {label(status)}: {n:,} of {total:,} claims ({n / total:.1%})"
        text = f"{n:,}" if w >= text_width(f"{n:,}", 11) + 8 else None
        out.append(Segment(x0, w, OUTCOME_COLOURS[status], status in UNSCORED_ORDER, tip, text))
        x0 += w
    return out


def outcome_bars(rows: Sequence[tuple[str, Mapping[str, int], int | None]]) -> OutcomeBars:
    """`rows`: (verifier, {status: claims}, claims in total or None to sum the counts)."""
    label_w = label_width(name for name, _, _ in rows)
    plot_w, top, row_h, bar_h = 520.0, 22.0, 32.0, 20.0
    y_end = top + row_h * len(rows)
    bars = []
    for i, (name, by_status, n_claims) in enumerate(rows):
        counts = [(s, by_status.get(s, 0)) for s in (*VERDICT_ORDER, *UNSCORED_ORDER)]
        total = n_claims if n_claims is not None and n_claims > 0 else sum(n for _, n in counts)
        unscored = sum(n for s, n in counts if s in UNSCORED_ORDER)
        scored = sum(n for s, n in counts if s in VERDICT_ORDER)
        share = f" ({unscored / total:.1%})" if total > 0 and unscored else ""
        segments = tuple(_segments(name, counts, total, label_w, plot_w)) if total > 0 else None
        summary = f"{scored:,} scored · {unscored:,} unscored{share}"
        bars.append(Bar(top + i * row_h + row_h / 2, name, segments, summary, bool(unscored)))
    return OutcomeBars(
        width=label_w + plot_w + 250.0,
        height=y_end + 40.0,
        label_w=label_w,
        plot_w=plot_w,
        top=top,
        y_end=y_end,
        bar_h=bar_h,
        bars=tuple(bars),
        ticks=tuple(Tick(label_w + t * plot_w, f"{t:.0%}") for t in (0.0, 0.25, 0.5, 0.75, 1.0)),
    )
