"""The HTML report opened in a real headless Chromium (Debian's chromium + chromium-driver).

The string checks in test_report_html.py cannot see what a browser does with the page:
whether it runs a script, fetches something, lays the charts out at a visible size or
overflows a laptop screen. Here the demo run, the v0.1 fixture run and a run with hostile
names are rendered by `assay report -f html` and loaded over file:// with a throw-away
profile. Without the browser the tests skip, except in CI (`CI` set), where they fail.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.core.judging import JudgeItem, Judgment
from assay.core.outcomes import Status
from assay.runs import Runner, RunOptions, load_spec, read_json

ROOT = Path(__file__).resolve().parents[1]
HOSTED_FIXTURE = ROOT / "tests" / "fixtures" / "runs_v0_1" / "hosted"
PWN_IMG = '<img src=x onerror="window.__pwned=1">'
PWN_SCRIPT = "<script>window.__pwned=2</script>"
HOSTILE = f"{PWN_IMG} {PWN_SCRIPT}"
WIDTH = 1280
HEADINGS = [  # every h2/h3 of a run with both pipelines, in page order
    "ForceBench summary",
    "MVR and FS per judge",
    "MVR by axis and severity",
    "Judgment statuses",
    "Factuality",
    "Scores per verifier",
    "Judges compared",  # the comparison section: the run has several judges
    "Ablation",
    "Paired differences",
    "ForceBench: MVR against FS",
    "All comparisons",
    "Reproducibility",
    "ForceBench judges",
    "Factuality pipeline",
    "Record files",
]
HOSTILE_SPEC = f"""
name = {json.dumps("run " + HOSTILE)}
bootstrap = 100
[[datasets]]
name = {json.dumps("pairs " + HOSTILE)}
path = "builtin:forcebench-demo"
[[baselines]]
name = "token-overlap"
[factuality]
datasets = [{{ name = {json.dumps("answers " + HOSTILE)}, path = "builtin:factuality-demo" }}]
verifiers = [{{ kind = "overlap" }}]
"""


def _missing_browser() -> str | None:
    """Why the browser test cannot run here, or None when it can."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[dev]')"
    if _chromium() is None or shutil.which("chromedriver") is None:
        return "chromium and chromedriver not found (apt-get install chromium chromium-driver)"
    return None


def _chromium() -> str | None:
    names = ("chromium", "chromium-browser", "google-chrome")
    return next((p for p in map(shutil.which, names) if p), None)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Headless Chromium at 1280 px, its own profile dir, console and network logged.

    The service is given the driver's path, so Selenium Manager (which downloads drivers)
    never runs."""
    reason = _missing_browser()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser test: {reason}")
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(_chromium())
    profile = tmp_path_factory.mktemp("chromium-profile")
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
    ):
        options.add_argument(arg)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument(f"--window-size={WIDTH},900")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    service = Service(str(shutil.which("chromedriver")), log_output=os.devnull)
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def _cli(*args: str) -> None:
    done = CliRunner().invoke(app, list(args))
    assert done.exit_code == 0, done.output


class _HostileJudge:
    """A Python judge whose id is markup: the report must show it as text."""

    id = f"judge {HOSTILE}"

    def describe(self) -> dict[str, Any]:
        return {"kind": "python", "note": HOSTILE}

    async def __call__(self, item: JudgeItem) -> Judgment:
        ok = len(item.claim) <= len(item.evidence)
        return Judgment(status=Status.OK, label="supported" if ok else "unsupported", score=1.0)


def _hostile_run(out: Path) -> None:
    spec = out.parent / "hostile.toml"
    spec.write_text(HOSTILE_SPEC, encoding="utf-8")
    options = RunOptions(output_dir=str(out), progress=False, use_cache=False)
    outcome = Runner(load_spec(spec), options, judges=[_HostileJudge()]).run()
    assert outcome.status == "complete"


@pytest.fixture(scope="module")
def run_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The demo run, a copy of the v0.1 hosted fixture and the hostile run, each with
    its `assay report -f html` page beside it as report.html."""
    base = tmp_path_factory.mktemp("browser-runs")
    runs = {name: base / name for name in ("demo", "hosted", "hostile")}
    _cli("run", str(ROOT / "examples" / "demo.toml"), "--output-dir", str(runs["demo"]),
         "--no-progress", "--no-cache")  # fmt: skip
    shutil.copytree(HOSTED_FIXTURE, runs["hosted"])
    _hostile_run(runs["hostile"])
    for run in runs.values():
        _cli("report", str(run), "-f", "html", "-o", str(run / "report.html"))
    return runs


@dataclass
class Loaded:
    """What the browser did with one page."""

    url: str
    console: list[dict[str, Any]]
    requests: list[str]


def _open(driver: Any, page: Path) -> Loaded:
    driver.get("about:blank")
    driver.get_log("performance")  # drop the start-up pages' traffic
    driver.get_log("browser")
    driver.get(page.as_uri())
    assert driver.execute_script("return document.readyState") == "complete"
    events = [json.loads(e["message"])["message"] for e in driver.get_log("performance")]
    requests = [
        e["params"]["request"]["url"] for e in events if e["method"] == "Network.requestWillBeSent"
    ]
    return Loaded(page.as_uri(), driver.get_log("browser"), requests)


@pytest.fixture(scope="module")
def pages(browser: Any, run_dirs: dict[str, Path]) -> dict[str, Loaded]:
    return {name: _open(browser, run / "report.html") for name, run in run_dirs.items()}


def _show(driver: Any, loaded: Loaded) -> None:
    if driver.current_url != loaded.url:
        driver.get(loaded.url)


@pytest.mark.parametrize("name", ["demo", "hosted", "hostile"])
def test_page_loads_offline_without_console_errors(pages: dict[str, Loaded], name: str) -> None:
    loaded = pages[name]
    assert [e for e in loaded.console if e["level"] == "SEVERE"] == []
    assert loaded.requests == [loaded.url]  # the file itself, nothing else


@pytest.mark.parametrize("name", ["demo", "hosted"])
def test_every_section_heading_is_visible(
    browser: Any, pages: dict[str, Loaded], run_dirs: dict[str, Path], name: str
) -> None:
    _show(browser, pages[name])
    shown = browser.execute_script(
        "return [...document.querySelectorAll('h1,h2,h3')]"
        ".filter(h => h.getClientRects().length).map(h => h.innerText.trim())"
    )
    run_name = read_json(run_dirs[name] / "manifest.json")["name"]
    assert shown[0].startswith(run_name)
    assert shown[1:] == HEADINGS


@pytest.mark.parametrize("name", ["demo", "hosted"])
def test_charts_are_drawn_with_their_marks(
    browser: Any, pages: dict[str, Loaded], run_dirs: dict[str, Path], name: str
) -> None:
    _show(browser, pages[name])
    sizes = browser.execute_script(
        "return [...document.querySelectorAll('svg')].map(s => {"
        "const r = s.getBoundingClientRect(); return [r.width, r.height]})"
    )
    assert len(sizes) >= 4 and all(w > 50 and h > 50 for w, h in sizes), sizes
    rows = read_json(run_dirs[name] / "metrics.json")["forcebench"]["rows"]
    judges = {r["judge_id"] for r in rows}
    with_ci = [r for r in rows if r["group_by"] == "overall" and r["mvr_lo"] is not None]
    grouped = [r for r in rows if r["group_by"] in ("axis", "severity")]

    def count(chart: str, marks: str) -> int:
        script = f"return document.querySelectorAll('{chart}')[0].querySelectorAll('{marks}')"
        return len(browser.execute_script(script))

    assert count("#charts svg", "circle.dot") == len(judges)  # the MVR chart
    assert count("#charts svg", "line.whisker") == 3 * len(with_ci)  # CI line and two caps
    assert count("#groups svg", "g > rect.cell") == len(grouped) > 0
    assert count("#factuality svg", "circle.dot") >= 1


def _table_cells(driver: Any, selector: str) -> dict[str, list[str]]:
    """A table's body rows by the text of their `td.judge` cell."""
    rows = driver.execute_script(
        f"return [...document.querySelectorAll('{selector} tbody tr')]"
        ".map(tr => [...tr.cells].map(td => td.innerText.trim()))"
    )
    first = 1 if selector == "table.summary" else 0
    return {r[first]: r for r in rows}


@pytest.mark.parametrize("name", ["demo", "hosted"])
def test_visible_numbers_equal_metrics_json(
    browser: Any, pages: dict[str, Loaded], run_dirs: dict[str, Path], name: str
) -> None:
    _show(browser, pages[name])
    metrics = read_json(run_dirs[name] / "metrics.json")
    summary = _table_cells(browser, "table.summary")
    for row in metrics["forcebench"]["rows"]:
        if row["group_by"] == "overall":
            cells = summary[row["judge_id"]]
            assert cells[4] == str(row["n"]) and cells[6] == f"{row['mvr']:.3f}"
            assert cells[8] == f"{row['fs']:.3f}"
    heat = browser.execute_script(
        "return [...document.querySelectorAll('#groups svg g')].filter(g => g.querySelector("
        "'rect.cell')).map(g => [g.querySelector('title').textContent, "
        "g.querySelector('text').textContent])"
    )
    cell_text = {tip.split(": MVR ")[0]: text for tip, text in heat}
    for row in metrics["forcebench"]["rows"]:
        if row["group_by"] == "axis":
            assert cell_text[f"{row['judge_id']} · {row['group']}"] == f"{row['mvr']:.2f}"
    facts = _table_cells(browser, "table.fact-summary")
    for row in metrics["factuality"]["scores"]["rows"]:
        macro = facts[row["verifier_id"]][8]
        assert macro.splitlines()[0] == f"{row['macro']:.3f}"
        assert facts[row["verifier_id"]][5] == str(row["n_claims"])


def test_hostile_names_stay_text(browser: Any, pages: dict[str, Loaded]) -> None:
    _show(browser, pages["hostile"])
    assert browser.execute_script("return typeof window.__pwned") == "undefined"
    assert browser.execute_script("return document.querySelectorAll('body script').length") == 0
    assert browser.execute_script("return document.querySelectorAll('img').length") == 0
    text = browser.execute_script("return document.body.innerText")
    for shown in ("run", "pairs", "answers", "judge"):
        assert f"{shown} {HOSTILE}" in text, shown


@pytest.mark.parametrize("name", ["demo", "hosted", "hostile"])
def test_no_horizontal_overflow_at_1280px(
    browser: Any, pages: dict[str, Loaded], name: str
) -> None:
    _show(browser, pages[name])
    width, inner = browser.execute_script(
        "return [document.documentElement.scrollWidth, window.innerWidth]"
    )
    assert inner == WIDTH
    assert width <= inner


# Decodes the screenshot in a canvas and counts the pixels that are not near-white.
_INK = """
const done = arguments[arguments.length - 1];
const img = new Image();
img.onload = () => {
  const c = document.createElement('canvas');
  c.width = img.width; c.height = img.height;
  const g = c.getContext('2d'); g.drawImage(img, 0, 0);
  const px = g.getImageData(0, 0, c.width, c.height).data;
  let ink = 0;
  for (let i = 0; i < px.length; i += 4) if (Math.min(px[i], px[i+1], px[i+2]) < 200) ink++;
  done([c.width, c.height, ink]);
};
img.onerror = () => done(null);
img.src = 'data:image/png;base64,' + arguments[0];
"""


def test_screenshot_is_not_blank(browser: Any, pages: dict[str, Loaded]) -> None:
    _show(browser, pages["demo"])
    png = browser.get_screenshot_as_png()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    browser.get("about:blank")
    width, height, ink = browser.execute_async_script(_INK, base64.b64encode(png).decode())
    assert width >= WIDTH - 20 and height > 0
    assert ink > 0.01 * width * height  # text, charts and table rules, not a white page
