"""What `assay compare --format NAME` prints: the report format registered as NAME
(`REPORT_FORMATS`) renders a `ComparisonReport` through its `compare` attribute, set
with `_formats.compares_with(...)` to one of these renderers.

- `table` / `markdown`: the ablation table (one row a judge, one column a metric: value
  and CI, then the Δ against the reference with its CI and p), the comparisons, the
  panels' reliability, the judges' reliability bins (only with label probabilities), the
  notes. Numbers are never cut (the project's table model, `assay._table`).
- `json`: the whole comparison, one object (`ComparisonReport`'s fields: `comparisons`,
  `ablation`, `kappa`, `confusions`, `force`, `panels`, `reliability`, `notes`, the
  settings), as the run report's JSON is the whole report.
- `csv`: one row per comparison, the same columns (a CSV is one table: the other parts
  are in `json`, the page, and `compare.report_frames`).
- `html`: the comparison page (`_compare_html.render_comparison_html`).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from assay._table import Grid, render_markdown, render_plain
from assay.compare import AblationCell, ComparisonReport
from assay.compare._frames import comparisons_frame
from assay.report._views_panels import comparison_panel_grids

CompareFormat = Callable[[ComparisonReport], str]

_COMPARISON_HEADERS = (
    "metric",
    "judge_a",
    "judge_b",
    "n",
    "value_a",
    "value_b",
    "diff",
    "ci",
    "test",
    "p_value",
    "p_holm",
)
_COMPARISON_NUMERIC = (False, False, False, True, True, True, True, True, False, True, True)


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _p(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def _interval(lo: float | None, hi: float | None, sign: str = "") -> str:
    if lo is None or hi is None:
        return ""
    return f"[{lo:{sign}.4f}, {hi:{sign}.4f}]"


def _value_cell(cell: AblationCell | None) -> str:
    if cell is None:
        return ""
    ci = _interval(cell.ci_low, cell.ci_high)
    return f"{_num(cell.value)} {ci}".strip()


def _diff_cell(cell: AblationCell | None) -> str:
    if cell is None or cell.diff is None:
        return ""
    ci = _interval(cell.diff_ci_low, cell.diff_ci_high, "+")
    return f"{cell.diff:+.4f} {ci} p={_p(cell.p_value)}"


def ablation_grid(report: ComparisonReport) -> Grid:
    """One row per judge; per metric its value [CI] and, with a reference, Δ [CI] p."""
    headers = ["judge", "run", "model", "prompt"]
    for metric in report.metrics:
        headers.append(metric)
        if report.reference is not None:
            headers.append(f"Δ {metric}")
    rows = []
    for row in report.ablation:
        prompt = "" if row.prompt is None else f"{row.prompt}@{row.prompt_version or '?'}"
        judge = f"{row.judge} (reference)" if row.reference else row.judge
        cells = [judge, row.run, row.model or "", prompt]
        for metric in report.metrics:
            cell = row.metrics.get(metric)
            cells.append(_value_cell(cell))
            if report.reference is not None:
                cells.append("reference" if row.reference and cell else _diff_cell(cell))
        rows.append(tuple(cells))
    numeric = tuple(i >= 4 for i in range(len(headers)))
    level = f"{report.confidence:.0%}"
    caption = f"value [{level} CI]" + (
        f"; Δ = value - {report.reference} on the items both have [{level} CI], p before Holm"
        if report.reference is not None
        else ""
    )
    return Grid("ablation", tuple(headers), numeric, rows, caption=caption)


def comparisons_grid(report: ComparisonReport) -> Grid:
    rows = [
        (
            c.metric,
            c.judge_a,
            c.judge_b,
            str(c.n),
            _num(c.value_a),
            _num(c.value_b),
            f"{c.diff:+.4f}",
            _interval(c.ci_low, c.ci_high, "+"),
            c.test,
            _p(c.p_value),
            _p(c.p_holm),
        )
        for c in report.comparisons
    ]
    caption = (
        f"diff = value_a - value_b on the n paired items; {report.confidence:.0%} CI from "
        f"{report.n_boot} paired bootstrap resamples (seed {report.seed}); "
        f"p_holm: {report.holm_scope()}"
    )
    return Grid("comparisons", _COMPARISON_HEADERS, _COMPARISON_NUMERIC, rows, caption=caption)


def reliability_grid(report: ComparisonReport) -> Grid | None:
    """Per judge with label probabilities and dataset, its non-empty reliability bins;
    None when no judge has probabilities."""
    if not report.reliability:
        return None
    rows = [
        (t.judge, t.run, t.dataset, f"({b.lo:g}, {b.hi:g}]", str(b.count))
        + (_num(b.confidence), _num(b.accuracy))
        for t in report.reliability
        for b in t.reliability
        if b.count
    ]
    headers = ("judge", "run", "dataset", "bin", "n", "confidence", "accuracy")
    numeric = tuple(i >= 4 for i in range(len(headers)))
    caption = (
        "reliability diagram: each non-empty equal-width bin of the judge's probability of "
        "its own label, its mean probability and the share of its items labelled as gold"
    )
    return Grid("Calibration: reliability bins", headers, numeric, rows, caption=caption)


def _grids(report: ComparisonReport) -> list[Grid]:
    """The tables after the comparisons: panel reliability, then reliability bins."""
    grids = comparison_panel_grids(report.panels)
    bins = reliability_grid(report)
    return grids + ([bins] if bins is not None else [])


def table_format(report: ComparisonReport) -> str:
    parts = [render_plain(ablation_grid(report)), render_plain(comparisons_grid(report))]
    parts += [render_plain(grid) for grid in _grids(report)]
    if report.notes:
        parts.append("notes\n" + "".join(f"- {note}\n" for note in report.notes))
    return "\n".join(parts)


def markdown_format(report: ComparisonReport) -> str:
    parts = [render_markdown(ablation_grid(report)), render_markdown(comparisons_grid(report))]
    parts += [render_markdown(grid) for grid in _grids(report)]
    if report.notes:
        parts.append("## notes\n\n" + "".join(f"- {note}\n" for note in report.notes))
    return "\n".join(parts)


def json_format(report: ComparisonReport) -> str:
    return json.dumps(report.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


def csv_format(report: ComparisonReport) -> str:
    text: str = comparisons_frame(report).to_csv(index=False, lineterminator="\n")
    return text


def html_format(report: ComparisonReport) -> str:
    """The HTML comparison page (imported here: jinja2 loads only for this format)."""
    from assay.report._compare_html import render_comparison_html

    return render_comparison_html(report)
