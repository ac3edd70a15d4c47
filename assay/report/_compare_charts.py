"""Chart geometry of the comparison page: forest plot of Δ, κ heatmap, MVR–FS scatter.

Like `_charts.py`, these frozen dataclasses say where every mark goes and the templates
(`charts.svg.j2`, `compare_charts.svg.j2`) only draw them. The forest plot is the
report's dot-and-whisker chart (`dot_chart`) on a Δ axis that always shows zero.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from assay._values import DASH, ci, clip, count, f3, label_width, text_width
from assay.compare import ForcePoint, KappaMatrix
from assay.metrics import PairedComparison
from assay.report._charts import (
    DotChart,
    Estimate,
    Frame,
    HeatCell,
    Tick,
    dot_chart,
    heat_colour,
)

NO_VALUE_FILL = "#eef1f4"
_ROTATE = math.radians(40)


def tick_text(value: float) -> str:
    """A tick label as short as the value allows: `0.25`, `-2`, `1e-05`."""
    return "0" if value == 0 else f"{value:.6g}"


def nice_ticks(lo: float, hi: float, target: int = 6) -> list[float]:
    """About `target` round ticks (steps 1, 2 or 5 × 10^k) whose span covers [lo, hi]."""
    span = hi - lo if hi > lo else max(abs(hi), 1.0) * 0.1
    raw = span / target
    magnitude = 10.0 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1.0, 2.0, 5.0, 10.0) if m * magnitude >= raw * 0.999)
    first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    last = max(last, first + 1)
    return [round(k * step, 12) for k in range(first, last + 1)]


def signed(value: float | None) -> str:
    """`+0.050` / `-0.120`: a difference always shows its sign."""
    return DASH if value is None or not math.isfinite(value) else f"{value:+.3f}"


def p_text(value: float | None) -> str:
    """p-values to three significant digits, as the text formats write them (`1.11e-16`)."""
    return DASH if value is None or not math.isfinite(value) else f"{value:.3g}"


def is_significant(row: PairedComparison, alpha: float) -> bool:
    """Holm-adjusted p below 1 − confidence: what the forest plot fills in."""
    return row.p_holm < alpha


def _forest_axis(rows: Sequence[PairedComparison]) -> tuple[tuple[float, float], list[float]]:
    """A round domain around every Δ and CI bound, with zero strictly inside it."""
    values = [v for r in rows for v in (r.diff, r.ci_low, r.ci_high) if math.isfinite(v)]
    lo, hi = min([0.0, *values]), max([0.0, *values])
    tick_values = nice_ticks(lo, hi)
    step = tick_values[1] - tick_values[0]
    if tick_values[0] >= 0:
        tick_values.insert(0, round(tick_values[0] - step, 12))
    if tick_values[-1] <= 0:
        tick_values.append(round(tick_values[-1] + step, 12))
    return (tick_values[0], tick_values[-1]), tick_values


def _forest_estimate(row: PairedComparison, level: str, sig: bool) -> Estimate:
    tip = (
        f"{row.judge_a} − {row.judge_b}: Δ {row.metric} {signed(row.diff)} {level} CI "
        f"{ci(row.ci_low, row.ci_high)}, n={count(row.n)}; {row.metric} {f3(row.value_a)} vs "
        f"{f3(row.value_b)}; p={p_text(row.p_value)} ({row.test}), Holm p={p_text(row.p_holm)}"
    )
    text = f"{signed(row.diff)} {ci(row.ci_low, row.ci_high)}" + (" *" if sig else "")
    return Estimate(row.diff, row.ci_low, row.ci_high, tip, text, shape="dot" if sig else "ring")


def shared_namespace(ids: Sequence[str]) -> str:
    """The `ns:` or `ns/` every id starts with (`baseline:`), or "" when they differ."""
    common = min(ids, default="")
    for other in ids:
        while not other.startswith(common):
            common = common[:-1]
    cut = max(common.rfind(":"), common.rfind("/"))
    prefix = common[: cut + 1]
    return prefix if all(len(i) > len(prefix) for i in ids) else ""


def _pair_labels(rows: Sequence[PairedComparison]) -> tuple[list[str], str]:
    """Row labels and the axis's `A − B` text: the judge alone against one shared B,
    else `A − B` with a namespace every id shares left out and each side kept short."""
    if len({r.judge_b for r in rows}) == 1:
        return [r.judge_a for r in rows], f"judge − {rows[0].judge_b}"
    prefix = shared_namespace([j for r in rows for j in (r.judge_a, r.judge_b)])
    cut = len(prefix)
    labels = [f"{clip(r.judge_a[cut:], 20)} − {clip(r.judge_b[cut:], 20)}" for r in rows]
    return labels, f"A − B (ids without “{prefix}”)" if prefix else "A − B"


def forest_chart(
    metric: str, rows: Sequence[PairedComparison], *, confidence: float = 0.95
) -> DotChart:
    """One metric's Δs, one row per comparison: filled dot when Holm-significant."""
    level, alpha = f"{confidence:.0%}", 1.0 - confidence
    estimates = [_forest_estimate(r, level, is_significant(r, alpha)) for r in rows]
    labels, against = _pair_labels(rows)
    domain, tick_values = _forest_axis(rows)
    return dot_chart(
        [(name, [est]) for name, est in zip(labels, estimates, strict=True)],
        domain=domain,
        axis_title=f"Δ {metric} = {clip(against, 60)}",
        aria=f"Paired differences in {metric} with {level} confidence intervals",
        tick_values=tick_values,
        tick_text=tick_text,
        value_w=max(text_width(e.text) for e in estimates) + 24 if estimates else None,
        value_title=f"Δ [{level} CI]",
    )


@dataclass(frozen=True, kw_only=True)
class KappaGrid(Frame):
    """Raters × raters grid of Cohen's κ; column names written at an angle above it."""

    aria: str
    cell_w: float
    cell_h: float
    rows: tuple[tuple[float, str], ...]  # centre y, rater
    columns: tuple[tuple[float, str], ...]  # centre x, rater
    cells: tuple[HeatCell, ...]
    scale_y: float
    stops: tuple[tuple[float, str], ...]


def kappa_colour(value: float | None) -> str:
    """κ 1 green through yellow to κ ≤ 0 red: the report's MVR colours, turned round."""
    return NO_VALUE_FILL if value is None else heat_colour(1.0 - min(max(value, 0.0), 1.0))


def _kappa_cell(matrix: KappaMatrix, i: int, j: int, x: float, y: float) -> HeatCell:
    a, b = matrix.raters[i], matrix.raters[j]
    value, n = matrix.values[i][j], matrix.n[i][j]
    if value is None:
        tip = f"{a} × {b}: κ undefined, n={count(n)}"
    else:
        tip = f"{a} × {b}: Cohen's κ {value:.3f}, n={count(n)} items labelled by both"
    text = DASH if value is None else f"{value:.2f}"
    return HeatCell(x, y, kappa_colour(value), text, tip)


def kappa_grid(matrix: KappaMatrix) -> KappaGrid:
    """The κ matrix as a heatmap, values printed in the cells and n in each cell's title."""
    names = matrix.raters
    label_w = label_width(names)
    cell_w, cell_h = 58.0, 26.0
    widest = max((text_width(clip(s, 28)) for s in names), default=40.0)
    top = 12.0 + widest * math.sin(_ROTATE)
    y_end = top + cell_h * len(names)
    cells = tuple(
        _kappa_cell(matrix, i, j, label_w + j * cell_w, top + i * cell_h)
        for i in range(len(names))
        for j in range(len(names))
    )
    grid_w = cell_w * len(names)
    overhang = widest * math.cos(_ROTATE)
    return KappaGrid(
        aria="Cohen's kappa between every pair of judges and human raters",
        width=label_w + max(grid_w + overhang, 480.0) + 12.0,
        height=y_end + 52.0,
        label_w=label_w,
        top=top,
        y_end=y_end,
        cell_w=cell_w,
        cell_h=cell_h,
        rows=tuple((top + i * cell_h + cell_h / 2, s) for i, s in enumerate(names)),
        columns=tuple((label_w + j * cell_w + cell_w / 2, s) for j, s in enumerate(names)),
        cells=cells,
        scale_y=y_end + 14.0,
        stops=tuple((p, kappa_colour(p)) for p in (0.0, 0.5, 1.0)),
    )


@dataclass(frozen=True)
class ScatterPoint:
    number: int
    judge: str
    cx: float
    cy: float
    x_whisker: tuple[float, float] | None
    y_whisker: tuple[float, float] | None
    tip: str


@dataclass(frozen=True, kw_only=True)
class Scatter(Frame):
    """MVR (x) against FS (y), one numbered point per judge with both CIs as whiskers."""

    aria: str
    plot_h: float
    x_ticks: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]  # Tick.x holds the y coordinate here
    points: tuple[ScatterPoint, ...]


def _scale(
    domain: tuple[float, float], start: float, length: float, *, flip: bool = False
) -> Callable[[float], float]:
    """Value -> pixel on one axis (clamped to the domain); `flip` for SVG's downward y."""
    lo, hi = domain

    def at(value: float) -> float:
        share = (min(max(value, lo), hi) - lo) / (hi - lo)
        return start + (1.0 - share if flip else share) * length

    return at


def _whisker(
    at: Callable[[float], float], lo: float | None, hi: float | None
) -> tuple[float, float] | None:
    return None if lo is None or hi is None else (at(lo), at(hi))


def _point_tip(p: ForcePoint, level: str) -> str:
    return (
        f"{p.judge}: MVR {f3(p.mvr)} {level} CI {ci(p.mvr_lo, p.mvr_hi)}; "
        f"FS {f3(p.fs)} {level} CI {ci(p.fs_lo, p.fs_hi)}"
    )


def _fs_ticks(points: Sequence[ForcePoint]) -> list[float]:
    values = [v for p in points for v in (p.fs, p.fs_lo, p.fs_hi) if v is not None]
    return nice_ticks(min([0.0, *values]), max([0.0, *values]), target=5)


def force_scatter(points: Sequence[ForcePoint], *, confidence: float = 0.95) -> Scatter:
    """Points numbered in the report's order; a judge without MVR or FS is not drawn."""
    left, top, plot_w, plot_h = 56.0, 14.0, 460.0, 300.0
    y_end = top + plot_h
    x_values = nice_ticks(0.0, 1.0, target=5)
    y_values = _fs_ticks(points)
    x_at = _scale((x_values[0], x_values[-1]), left, plot_w)
    y_at = _scale((y_values[0], y_values[-1]), top, plot_h, flip=True)
    level = f"{confidence:.0%}"
    drawn = tuple(
        ScatterPoint(
            number,
            p.judge,
            x_at(p.mvr),
            y_at(p.fs),
            _whisker(x_at, p.mvr_lo, p.mvr_hi),
            _whisker(y_at, p.fs_lo, p.fs_hi),
            _point_tip(p, level),
        )
        for number, p in enumerate(points, start=1)
        if p.mvr is not None and p.fs is not None
    )
    return Scatter(
        aria="MVR against FS per judge, with confidence intervals as whiskers",
        width=left + plot_w + 40.0,
        height=y_end + 48.0,
        label_w=left,
        plot_w=plot_w,
        plot_h=plot_h,
        top=top,
        y_end=y_end,
        x_ticks=tuple(Tick(x_at(v), tick_text(v)) for v in x_values),
        y_ticks=tuple(
            Tick(y_at(v), tick_text(v), "zero" if v == 0 and y_values[0] < 0 else "grid")
            for v in y_values
        ),
        points=drawn,
    )
