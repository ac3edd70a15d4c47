"""The comparison page: structure, numbers as the report holds them, escaping, empty parts.

Reports are built from real statistics (`tests/_compare_reports.py`); the browser test
(`test_compare_browser.py`) opens the same pages in headless Chromium.
"""

from __future__ import annotations

import math
import re
from html.parser import HTMLParser

import pandas as pd
import pytest
from _compare_reports import full_report
from markupsafe import escape

from assay._values import wrap
from assay.compare import ComparisonReport, ConfusionTable, ForcePoint
from assay.metrics import paired_compare
from assay.report._compare_charts import (
    forest_chart,
    nice_ticks,
    p_text,
    shared_namespace,
    signed,
)
from assay.report._compare_html import comparison_section, render_comparison_html

VOID = {"br", "col", "hr", "img", "input", "link", "meta", "wbr"}
SCRIPT = "<script>alert(1)</script>"
ATTR = '"onmouseover="alert(2)'


class Page(HTMLParser):
    """Tag balance, every attribute, and each table's body rows (cell texts) by class."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.tables: dict[str, list[list[str]]] = {}
        self._table: str | None = None
        self._body = False
        self._cell: list[str] | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "table":
            self._table = dict(attrs).get("class") or ""
            self.tables.setdefault(self._table, [])
        self._body = self._body or tag == "tbody"
        if self._table is not None and self._body and tag == "tr":
            self.tables[self._table].append([])
        if self._body and tag in ("td", "th"):
            self._cell = []
        elif self._cell is not None and tag in ("div", "br"):
            self._cell.append(" ")  # a line break inside a cell reads as a space
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()
        if tag in ("td", "th") and self._cell is not None and self._table is not None:
            self.tables[self._table][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        if tag == "tbody":
            self._body = False
        if tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def count(self, tag: str, cls: str | None = None) -> int:
        return sum(
            1 for t, a in self.tags if t == tag and (cls is None or cls in (a.get("class") or ""))
        )


def parse(text: str) -> Page:
    page = Page(text)
    assert page.errors == [] and page.stack == []
    return page


def section(text: str, sid: str) -> str:
    """The markup of `<section id="sid">` (sections of the page do not nest)."""
    start = text.index(f'<section id="{sid}">')
    return text[start : text.index("</section>", start) + len("</section>")]


@pytest.fixture(scope="module")
def report() -> ComparisonReport:
    return full_report()


@pytest.fixture(scope="module")
def html(report: ComparisonReport) -> str:
    return render_comparison_html(report, title="Prompt v2 against v1")


def test_page_is_well_formed_and_self_contained(html: str) -> None:
    page = parse(html)
    assert html.startswith("<!DOCTYPE html>") and "<script" not in html and "<link" not in html
    external = [
        (tag, k, v)
        for tag, attrs in page.tags
        for k, v in attrs.items()
        if k in ("src", "href") or (v and "://" in v and k != "xmlns")
    ]
    assert external == []
    assert re.findall(r"url\((?!#)", html) == []  # only the page's own gradients
    assert "<title>Prompt v2 against v1 · assay comparison</title>" in html
    assert ".kicker{" in html  # the run report's stylesheet, inline


def test_header_names_runs_reference_and_bootstrap(report: ComparisonReport, html: str) -> None:
    head = html[html.index("<header>") : html.index("</header>")]
    assert "run-a · 4 judges" in head and wrap("runs/run-a") in head
    assert f"<code>{wrap(report.reference)}</code>" in head
    assert f"{report.n_boot} paired resamples · seed {report.seed} · 95% CIs" in head
    assert str(escape(report.notes[0])) in html


def test_forest_plot_one_row_per_comparison_grouped_by_metric(
    report: ComparisonReport, html: str
) -> None:
    forest = section(html, "cmp-forest")
    metrics = list(dict.fromkeys(c.metric for c in report.comparisons))
    assert re.findall(r'<figure class="forest" data-metric="([^"]+)">', forest) == metrics
    significant = [c for c in report.comparisons if c.p_holm < 0.05]
    assert 0 < len(significant) < len(report.comparisons)  # both kinds of mark are drawn
    sub = parse(forest)
    assert sub.count("circle", "ring") == len(report.comparisons) - len(significant)
    assert sub.count("circle", "dot") == len(report.comparisons)  # rings are dots too
    assert sub.count("line", "zero") == len(metrics)  # Δ = 0 on every panel
    for c in report.comparisons:
        text = f"{signed(c.diff)} [{c.ci_low:.3f}, {c.ci_high:.3f}]"
        assert (text + " *" if c in significant else text + "</text>") in forest
        assert f"Holm p={p_text(c.p_holm)}" in forest


def test_comparisons_table_shows_each_row(report: ComparisonReport, html: str) -> None:
    rows = parse(html).tables["comparisons"]
    assert len(rows) == len(report.comparisons)
    for cells, c in zip(rows, report.comparisons, strict=True):
        mark = " *" if c.p_holm < 0.05 else ""
        assert cells == [
            c.metric, c.judge_a, c.judge_b, str(c.n), f"{c.value_a:.3f}", f"{c.value_b:.3f}",
            signed(c.diff), f"[{c.ci_low:.3f}, {c.ci_high:.3f}]", c.test,
            p_text(c.p_value), p_text(c.p_holm) + mark,
        ]  # fmt: skip


def test_ablation_table_marks_the_reference_and_shows_deltas(
    report: ComparisonReport, html: str
) -> None:
    rows = parse(html).tables["ablation"]
    assert [r[0] for r in rows] == [
        a.judge + (" reference" if a.reference else "") for a in report.ablation
    ]
    for cells, row in zip(rows, report.ablation, strict=True):
        for metric, text in zip(report.metrics, cells[3:], strict=True):
            cell = row.metrics[metric]
            assert text.startswith(f"{cell.value:.3f} [{cell.ci_low:.3f}, {cell.ci_high:.3f}]")
            assert ("Δ" in text) == (cell.diff is not None)
            if cell.diff is not None:
                assert f"Δ {signed(cell.diff)}" in text and f"Holm {p_text(cell.p_holm)}" in text


def test_kappa_heatmap_prints_values_and_n(report: ComparisonReport, html: str) -> None:
    kappa = report.kappa
    assert kappa is not None
    heat = section(html, "cmp-kappa")
    titles = re.findall(r"<g><title>([^<]*)</title><rect class=\"cell\"[^>]*/>"
                        r"<text class=\"cell-text\"[^>]*>([^<]*)</text>", heat)  # fmt: skip
    assert len(titles) == len(kappa.raters) ** 2
    expected = [(i, j) for i in range(len(kappa.raters)) for j in range(len(kappa.raters))]
    for (tip, text), (i, j) in zip(titles, expected, strict=True):
        value = kappa.values[i][j]
        assert text == ("—" if value is None else f"{value:.2f}")
        assert f"n={kappa.n[i][j]}" in tip
    assert min(min(row) for row in kappa.n) < max(max(row) for row in kappa.n)


def test_confusion_cards_hold_the_counts(report: ComparisonReport, html: str) -> None:
    tables = re.findall(r'<table class="confusion">.*?</table>', html, flags=re.S)
    assert len(tables) == len(report.confusions)
    for markup, table in zip(tables, report.confusions, strict=True):
        rows = parse(markup).tables["confusion"]
        labelled = zip(table.labels, table.counts, strict=True)
        assert rows == [[g, *map(str, counts)] for g, counts in labelled]
        diagonal = sum(table.counts[i][i] for i in range(len(table.labels)))
        total = sum(map(sum, table.counts))
        assert f"{diagonal} of {total} items on the diagonal" in html


def test_scatter_draws_each_point_with_both_whiskers(report: ComparisonReport, html: str) -> None:
    scatter = section(html, "cmp-force")
    sub = parse(scatter)
    assert sub.count("circle", "dot") == len(report.force)
    assert sub.count("line", "whisker") == 2 * len(report.force)
    assert [r[1] for r in sub.tables["force-points"]] == [p.judge for p in report.force]


def test_hostile_text_stays_escaped() -> None:
    judges = [f"judge {SCRIPT}", f"b{ATTR}", "plain"]
    base = full_report(judges, raters=[f"rater {SCRIPT}"])
    hostile = base.model_copy(
        update={
            "notes": [f"note {SCRIPT}"],
            "runs": [base.runs[0].model_copy(update={"name": f"run {SCRIPT}"})],
            "confusions": [
                ConfusionTable(
                    judge=f"j{ATTR}",
                    dataset=f"data {SCRIPT}",
                    labels=[SCRIPT, ATTR],
                    counts=[[3, 1], [2, 4]],
                )  # fmt: skip
            ],
        }
    )
    html = render_comparison_html(hostile, title=f"t {SCRIPT}")
    page = parse(html)
    assert "<script" not in html
    assert all(not k.startswith("on") for _, attrs in page.tags for k in attrs)
    assert page.count("script") == 0 and page.count("img") == 0
    for text in (f"judge {SCRIPT}", f"b{ATTR}", f"note {SCRIPT}", f"run {SCRIPT}", ATTR):
        assert str(escape(text)) in html or wrap(text) in html


def _bare(**update: object) -> ComparisonReport:
    """The full report with some parts removed (keyword: field name -> empty value)."""
    return full_report().model_copy(update=update)


def test_parts_missing_from_the_report_are_left_out() -> None:
    html = render_comparison_html(_bare(kappa=None, force=[], confusions=[], notes=[]))
    parse(html)
    for sid in ("cmp-kappa", "cmp-force", "cmp-confusions"):
        assert f'id="{sid}"' not in html
    assert 'id="cmp-notes"' not in html
    assert 'id="cmp-forest"' in html and 'id="cmp-ablation"' in html


def test_no_comparisons_and_no_ablation_say_so() -> None:
    html = render_comparison_html(_bare(comparisons=[], ablation=[], kappa=None, force=[]))
    parse(html)
    assert "No paired comparisons: fewer than two judges share a metric." in html
    assert "No ablation rows." in html
    assert "<svg" not in html


def test_a_single_comparison_has_one_forest_row() -> None:
    report = full_report()
    html = render_comparison_html(_bare(comparisons=report.comparisons[:1]))
    forest = parse(section(html, "cmp-forest"))
    assert forest.count("svg") == 1 and forest.count("circle") == 1
    assert "1 comparison," in html


def test_a_judge_without_force_metrics_is_listed_but_not_drawn() -> None:
    points = [*full_report().force, ForcePoint(judge="no-pairs", mvr=None, fs=None)]
    html = render_comparison_html(_bare(force=points))
    scatter = parse(section(html, "cmp-force"))
    assert scatter.count("circle", "dot") == len(points) - 1
    assert scatter.tables["force-points"][-1] == [str(len(points)), "no-pairs", "—", "—", "—", "—"]


def test_all_pairs_label_rows_a_minus_b_and_confidence_sets_the_level() -> None:
    frame = pd.DataFrame({"x": [1.0, 0, 1, 1, 0, 1], "y": [0.0, 0, 1, 0, 0, 1], "z": [1.0] * 6})
    rows = paired_compare(frame, metric="accuracy", n_boot=50, seed=1, confidence=0.9).rows
    report = _bare(comparisons=rows, reference=None, confidence=0.9, metrics=["accuracy"])
    html = render_comparison_html(report)
    assert ">x − y</text>" in html and ">y − z</text>" in html
    assert "none: every pair of judges" in html and "Δ [90% CI]" in html
    assert "Holm-adjusted p &lt; 0.1" in html


def test_comparison_section_fits_into_the_run_report(report: ComparisonReport) -> None:
    part = str(comparison_section(report))
    parse(part)
    assert part.startswith('<section id="comparison"><h2>Judge comparison</h2>')
    assert "<h3>Ablation</h3>" in part and "<h2>Ablation</h2>" not in part
    assert "<html" not in part and "<style" not in part


@pytest.mark.parametrize(
    ("lo", "hi"), [(0.0, 1.0), (-0.034, 0.21), (-12.0, 3.5), (0.0, 0.0004), (-2e-5, 0.0)]
)
def test_nice_ticks_cover_the_range_in_round_steps(lo: float, hi: float) -> None:
    ticks = nice_ticks(lo, hi)
    assert ticks[0] <= lo and ticks[-1] >= hi and 2 <= len(ticks) <= 12
    steps = {round(b - a, 12) for a, b in zip(ticks, ticks[1:], strict=False)}
    assert len(steps) == 1
    mantissa = steps.pop() / 10 ** math.floor(math.log10(ticks[1] - ticks[0]))
    assert round(mantissa, 6) in (1.0, 2.0, 5.0)


def test_forest_axis_keeps_zero_inside_when_every_delta_is_positive() -> None:
    frame = {"a": [1.0] * 20, "b": [0.0] * 15 + [1.0] * 5}
    rows = paired_compare(pd.DataFrame(frame), reference="b", n_boot=100, seed=0).rows
    assert all(r.ci_low > 0 for r in rows)
    chart = forest_chart("accuracy", rows)
    zero = [t for t in chart.ticks if t.cls == "zero"]
    assert len(zero) == 1 and chart.label_w < zero[0].x < chart.label_w + chart.plot_w


@pytest.mark.parametrize(
    ("ids", "prefix"),
    [
        (["baseline:token-overlap", "baseline:entity-overlap"], "baseline:"),
        (["run-a/gpt::p@1", "run-a/gpt::p@2"], "run-a/gpt::"),
        (["gpt-4o::p@1", "gpt-4o-mini::p@1"], ""),
        (["baseline:", "baseline:x"], ""),
        (["a:x", "b:x"], ""),
    ],
)
def test_shared_namespace(ids: list[str], prefix: str) -> None:
    assert shared_namespace(ids) == prefix


def test_all_pairs_rows_leave_out_the_shared_namespace() -> None:
    frame = pd.DataFrame({f"baseline:{n}": [1.0, 0, 1, 0, 1, 1] for n in ("a", "b", "c")})
    rows = paired_compare(frame, metric="accuracy", n_boot=20, seed=0).rows
    chart = forest_chart("accuracy", rows)
    assert [r.label for r in chart.rows] == ["a − b", "a − c", "b − c"]
    assert chart.axis_title == "Δ accuracy = A − B (ids without “baseline:”)"
    long_ids = [{"judge_a": "x" * 30, "judge_b": "y" * 29 + str(i)} for i in range(len(rows))]
    long_rows = [r.model_copy(update=u) for r, u in zip(rows, long_ids, strict=True)]
    label = forest_chart("accuracy", long_rows).rows[0].label
    assert label == f"{'x' * 10}…{'x' * 9} − {'y' * 10}…{'y' * 8}0"
