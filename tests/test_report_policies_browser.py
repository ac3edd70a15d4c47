"""The policies section of the HTML report in a real headless Chromium: it renders offline
without console errors, every policy's risk–coverage curve and action-mix bar is drawn at
a visible size with one mark per point / outcome, the numbers shown are metrics.json's,
and hostile claim text stays text. Skips without the browser, except in CI (see
test_report_browser.py, whose browser fixture this reuses)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _policies_cli_helpers import assay
from _report_policies_run import HOSTILE, applied_run
from test_report_browser import WIDTH, Loaded, _open, browser  # noqa: F401 (fixture)

NAMES = ["cert", "gate", "render"]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = applied_run(tmp_path_factory.mktemp("report_policies_browser"))
    code, _, err = assay("report", run, "--format", "html", "-o", run / "report.html")
    assert code == 0, err
    return run


@pytest.fixture(scope="module")
def page(browser: Any, run: Path) -> Loaded:  # noqa: F811 (the imported fixture)
    return _open(browser, run / "report.html")


@pytest.fixture(scope="module")
def report_json(run: Path) -> dict[str, Any]:
    code, out, err = assay("report", run, "--format", "json")
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return {p["name"]: p for p in data["policies"]}


def _js(driver: Any, script: str) -> Any:
    return driver.execute_script(script)


def test_loads_offline_without_console_errors(page: Loaded) -> None:
    assert [e for e in page.console if e["level"] == "SEVERE"] == []
    assert page.requests == [page.url]


def test_each_policy_has_a_visible_curve_and_mix_with_their_marks(
    browser: Any,  # noqa: F811
    page: Loaded,
    report_json: dict[str, Any],
) -> None:
    panels = _js(
        browser,
        "return [...document.querySelectorAll('#policies article.policy')].map(a => {"
        "const size = s => { const r = s.getBoundingClientRect(); return [r.width, r.height] };"
        "const curve = a.querySelector('figure.policy-curve svg');"
        "const mix = a.querySelector('figure.policy-mix svg');"
        "return {title: a.querySelector('h3').innerText,"
        " curve: size(curve), points: curve.querySelectorAll('circle.point').length,"
        " current: curve.querySelectorAll('g.current path').length,"
        " mix: size(mix), segments: mix.querySelectorAll('rect.mix').length} })",
    )
    assert [p["title"].split()[0] for p in panels] == NAMES
    for panel, name in zip(panels, NAMES, strict=True):
        policy = report_json[name]
        assert min(panel["curve"]) > 50 and panel["mix"][0] > 50 and panel["mix"][1] > 20, panel
        assert panel["points"] == len(policy["curve"]["points"]) > 0
        assert panel["current"] == 1
        assert panel["segments"] == len(policy["mix"])


def test_shown_metric_values_are_metrics_json(
    browser: Any,  # noqa: F811
    page: Loaded,
    run: Path,
) -> None:
    tables = _js(
        browser,
        "return [...document.querySelectorAll('#policies table.policy-metrics')].map(t =>"
        " [...t.tBodies[0].rows].map(r => [...r.cells].map(c => c.innerText.trim())))",
    )
    for rows, name in zip(tables, NAMES, strict=True):
        metrics = json.loads((run / "policies" / name / "metrics.json").read_text())
        ratios = {**metrics, **metrics.get("metrics", {})}
        shown = {r[0]: (r[1], r[2]) for r in rows}
        for metric, r in ratios.items():
            if isinstance(r, dict) and "numerator" in r:
                value = "null" if r["value"] is None else f"{r['value']:.4f}"
                assert shown[metric] == (value, f"{r['numerator']}/{r['denominator']}")


def test_hostile_claim_text_stays_text(browser: Any, page: Loaded) -> None:  # noqa: F811
    assert _js(browser, "return typeof window.__pwned") == "undefined"
    assert _js(browser, "return document.querySelectorAll('body script, body img').length") == 0
    cells = _js(
        browser,
        "return [...document.querySelectorAll('#policies td.claim-text')].map(c => c.innerText)",
    )
    assert HOSTILE in cells


def test_no_horizontal_overflow(browser: Any, page: Loaded) -> None:  # noqa: F811
    width, inner = _js(browser, "return [document.documentElement.scrollWidth, window.innerWidth]")
    assert inner == WIDTH and width <= inner
