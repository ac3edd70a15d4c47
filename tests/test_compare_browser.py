"""The comparison page opened in a real headless Chromium (Debian's chromium + driver).

Same browser set-up as test_report_browser.py (its `browser` fixture and loader): the
page must load over file:// with no console error and no request but the file itself,
lay out the forest plots, κ heatmap, confusion tables and MVR–FS scatter at a visible
size with one mark per row of the report, keep hostile ids as text and fit 1280 px.
Pages: a report built from seeded statistics (every part), one with hostile ids, and
`assay compare -f html` of two real runs (an items run with raters that also judged the
ForceBench pairs, and a ForceBench run).
Without the browser the tests skip, except in CI (`CI` set), where they fail.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _compare_reports import full_report
from test_report_browser import ROOT, WIDTH, Loaded, _cli, _open, browser  # noqa: F401

from assay.compare import ComparisonReport, compare_runs
from assay.report._compare_charts import signed
from assay.report._compare_html import render_comparison_html

PWN_IMG = '<img src=x onerror="window.__pwned=1">'
PWN_SCRIPT = "<script>window.__pwned=2</script>"
PWN_ATTR = '"onmouseover="window.__pwned=3'


def _hostile_report() -> ComparisonReport:
    judges = [f"judge {PWN_IMG}", f"judge {PWN_SCRIPT}", f"judge {PWN_ATTR}"]
    base = full_report(judges, raters=[f"rater {PWN_IMG}"])
    return base.model_copy(update={"notes": [f"note {PWN_SCRIPT}"]})


@pytest.fixture(scope="module")
def real_runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The items example (3 judges, 2 raters) with the ForceBench demo pairs added, and
    the ForceBench demo (5 judges), run: they share the pairs (runs sharing no item are
    refused), the items are compared within the first."""
    base = tmp_path_factory.mktemp("compare-runs")
    items = (ROOT / "examples" / "compare-items.toml").read_text(encoding="utf-8")
    items = items.replace('"items/claims.csv"', json.dumps(str(ROOT / "examples/items/claims.csv")))
    pairs = '[[datasets]]\nname = "forcebench-demo"\npath = "builtin:forcebench-demo"\n'
    (base / "compare-items.toml").write_text(f"{items}\n{pairs}", encoding="utf-8")
    runs = []
    for spec in (base / "compare-items.toml", ROOT / "examples" / "forcebench-demo.toml"):
        out = base / spec.stem
        _cli("run", str(spec), "--output-dir", str(out), "--no-progress", "--no-cache")
        runs.append(out)
    return runs


@pytest.fixture(scope="module")
def reports(real_runs: list[Path]) -> dict[str, ComparisonReport]:
    real = compare_runs(real_runs, n_boot=200, seed=1)
    return {"full": full_report(), "hostile": _hostile_report(), "real": real}


@pytest.fixture(scope="module")
def pages(
    browser: Any,  # noqa: F811
    reports: dict[str, ComparisonReport],
    real_runs: list[Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, Loaded]:
    base = tmp_path_factory.mktemp("compare-pages")
    loaded = {}
    for name, report in reports.items():
        path: Path = base / f"{name}.html"
        if name == "real":  # the CLI's page, which must be this report's
            _cli("compare", *map(str, real_runs), "--n-boot", "200", "--seed", "1",
                 "-f", "html", "-o", str(path))  # fmt: skip
            assert path.read_text("utf-8") == render_comparison_html(report)
        else:
            path.write_text(render_comparison_html(report, title=f"{name} {PWN_IMG}"), "utf-8")
        loaded[name] = _open(browser, path)
    return loaded


def _show(driver: Any, loaded: Loaded) -> None:
    if driver.current_url != loaded.url:
        driver.get(loaded.url)


def _js(driver: Any, script: str) -> Any:
    return driver.execute_script(script)


@pytest.mark.parametrize("name", ["full", "hostile", "real"])
def test_page_loads_offline_without_console_errors(pages: dict[str, Loaded], name: str) -> None:
    loaded = pages[name]
    assert [e for e in loaded.console if e["level"] == "SEVERE"] == []
    assert loaded.requests == [loaded.url]  # the file itself, nothing else


@pytest.mark.parametrize("name", ["full", "real"])
def test_charts_are_laid_out_at_a_visible_size(
    browser: Any,  # noqa: F811
    pages: dict[str, Loaded],
    reports: dict[str, ComparisonReport],
    name: str,
) -> None:
    _show(browser, pages[name])
    sizes = _js(
        browser,
        "return ['#cmp-forest', '#cmp-kappa', '#cmp-force'].map(id => "
        "[...document.querySelectorAll(id + ' svg')].map(s => {"
        "const r = s.getBoundingClientRect(); return [r.width, r.height]}))",
    )
    metrics = {c.metric for c in reports[name].comparisons}
    assert [len(s) for s in sizes] == [len(metrics), 1, 1]  # one forest panel a metric
    assert all(w > 200 and h > 80 for group in sizes for w, h in group), sizes


@pytest.mark.parametrize("name", ["full", "real"])
def test_forest_plot_has_a_mark_and_whisker_per_comparison(
    browser: Any,  # noqa: F811
    pages: dict[str, Loaded],
    reports: dict[str, ComparisonReport],
    name: str,
) -> None:
    _show(browser, pages[name])
    report = reports[name]
    panels = _js(
        browser,
        "return [...document.querySelectorAll('#cmp-forest figure.forest')].map(f => "
        "[f.dataset.metric, f.querySelectorAll('circle.dot').length, "
        "f.querySelectorAll('circle.ring').length, f.querySelectorAll('line.whisker').length, "
        "f.querySelectorAll('line.zero').length, "
        "[...f.querySelectorAll('text.value')].map(t => t.textContent)])",
    )
    for metric, dots, rings, whiskers, zero, texts in panels:
        rows = [c for c in report.comparisons if c.metric == metric]
        assert dots == len(rows) and whiskers == 3 * len(rows) and zero == 1
        assert rings == sum(c.p_holm >= 0.05 for c in rows)
        assert [t.split(" [")[0] for t in texts] == [signed(c.diff) for c in rows]
    assert sorted(p[0] for p in panels) == sorted({c.metric for c in report.comparisons})


@pytest.mark.parametrize("name", ["full", "real"])
def test_heatmap_confusions_and_scatter_show_the_report(
    browser: Any,  # noqa: F811
    pages: dict[str, Loaded],
    reports: dict[str, ComparisonReport],
    name: str,
) -> None:
    _show(browser, pages[name])
    report = reports[name]
    assert report.kappa is not None and report.confusions and report.force
    cells = _js(
        browser,
        "return [...document.querySelectorAll('#cmp-kappa svg g')].map(g => "
        "g.querySelector('text.cell-text').textContent)",
    )
    expected = [f"{v:.2f}" if v is not None else "—" for row in report.kappa.values for v in row]
    assert cells == expected
    tables = _js(
        browser,
        "return [...document.querySelectorAll('#cmp-confusions table.confusion')].map(t => "
        "[...t.tBodies[0].rows].map(r => [...r.cells].slice(1).map(c => +c.innerText)))",
    )
    assert tables == [t.counts for t in report.confusions]
    drawn = [p for p in report.force if p.mvr is not None and p.fs is not None]
    points = _js(browser, "return document.querySelectorAll('#cmp-force svg circle.dot').length")
    assert points == len(drawn) > 0
    rows = _js(browser, "return document.querySelectorAll('table.comparisons tbody tr').length")
    assert rows == len(report.comparisons)


def test_hostile_names_stay_text(browser: Any, pages: dict[str, Loaded]) -> None:  # noqa: F811
    _show(browser, pages["hostile"])
    assert _js(browser, "return typeof window.__pwned") == "undefined"
    assert _js(browser, "return document.querySelectorAll('script, img').length") == 0
    handlers = "[...document.querySelectorAll('*')].flatMap(e => [...e.attributes])"
    assert _js(browser, f"return {handlers}.filter(a => a.name.startsWith('on')).length") == 0
    text = _js(browser, "return document.body.innerText")
    for shown in (f"judge {PWN_IMG}", f"judge {PWN_SCRIPT}", f"note {PWN_SCRIPT}"):
        assert shown in text, shown
    assert f"hostile {PWN_IMG}" in _js(browser, "return document.title")


@pytest.mark.parametrize("name", ["full", "hostile", "real"])
def test_no_horizontal_overflow_at_1280px(
    browser: Any,  # noqa: F811
    pages: dict[str, Loaded],
    name: str,
) -> None:
    _show(browser, pages[name])
    width, inner = _js(browser, "return [document.documentElement.scrollWidth, window.innerWidth]")
    assert inner == WIDTH and width <= inner
