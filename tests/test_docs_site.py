"""The documentation site (mkdocs.yml) builds strictly and works offline.

`mkdocs build --strict` fails on a broken link, a missing anchor, a nav entry without its
page or a page missing from the nav. The built site must then stand alone:
opened over file:// in headless Chromium (test_report_browser's browser), no page
requests anything but local files, logs no console error, and the search box finds pages.
Without mkdocs (the `docs` extra) or the browser the tests skip, except in CI (`CI` set),
where they fail.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_report_browser import Loaded, _open
from test_report_browser import browser as browser  # the module-scoped headless Chromium

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "mkdocs.yml"
INSTALL_PAGE = ROOT / "docs" / "get-started" / "install.md"
# Material's bundle names two CDN scripts it loads only on demand: a ResizeObserver polyfill
# for browsers without one (Chromium has it) and mermaid for a page with a diagram (none
# has: test_no_page_asks_for_mermaid). Any other network address in the site fails.
ON_DEMAND = {
    "https://unpkg.com/resize-observer-polyfill",
    "https://unpkg.com/mermaid@11/dist/mermaid.min.js",
}
NETWORK_ASSET = {
    ".html": re.compile(
        r"<(?:script|img|iframe|source|audio|video|embed)\b[^>]*\ssrc=[\"']?((?:https?:)?//[^\"'\s>]+)"
        r"|<link\b[^>]*\shref=[\"']?((?:https?:)?//[^\"'\s>]+)",
        re.IGNORECASE,
    ),
    ".css": re.compile(r"url\(\s*[\"']?((?:https?:)?//[^\"')\s]+)|@import\s+[\"']?([^\"';\s]+)"),
    ".js": re.compile(r"[\"'`]((?:https?:)?//(?:fonts\.|cdn|unpkg|[^\"'`/]*jsdelivr)[^\"'`\s]*)"),
}


def _nav_pages(node: Any) -> Iterator[str]:
    """Every page path (relative to docs/) named anywhere in a mkdocs nav tree."""
    if isinstance(node, str):
        if node.endswith(".md"):
            yield node
    elif isinstance(node, list):
        for item in node:
            yield from _nav_pages(item)
    elif isinstance(node, dict):
        for value in node.values():
            yield from _nav_pages(value)


def nav_pages() -> list[str]:
    return list(_nav_pages(yaml.safe_load(CONFIG.read_text(encoding="utf-8"))["nav"]))


def built_path(site: Path, page: str) -> Path:
    """Where a page lands (use_directory_urls is off, so links work over file://)."""
    return site / Path(page).with_suffix(".html")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site as CI builds it: `mkdocs build --strict` into a temporary directory."""
    if importlib.util.find_spec("mkdocs") is None:
        reason = "mkdocs is not installed (pip install -e '.[docs]')"
        if os.environ.get("CI"):
            pytest.fail(f"CI must build the documentation site: {reason}")
        pytest.skip(reason)
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}{done.stderr}"
    return out


def test_every_extra_is_on_the_install_page() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    page = INSTALL_PAGE.read_text(encoding="utf-8")
    missing = [name for name in extras if f"| `{name}` |" not in page]
    assert not missing, f"docs/get-started/install.md's extras table lacks {missing}"


def test_the_nav_is_organised_by_job() -> None:
    sections = [next(iter(entry)) for entry in yaml.safe_load(CONFIG.read_text("utf-8"))["nav"]]
    assert sections == [
        "Home",
        "Get started",
        "Tutorials",
        "How-to guides",
        "Reference",
        "Explanations",
        "Benchmarks",
    ]


def test_every_nav_page_is_built(site: Path) -> None:
    pages = nav_pages()
    assert "index.md" in pages and len(pages) == len(set(pages)), pages
    for page in pages:
        html = built_path(site, page)
        assert html.is_file(), f"{page} is in the nav but was not built"
        assert "<h1" in html.read_text(encoding="utf-8"), f"{page} has no title"


def test_no_asset_is_loaded_from_the_network(site: Path) -> None:
    found = []
    for path in sorted(site.rglob("*")):
        pattern = NETWORK_ASSET.get(path.suffix)
        if pattern is None:
            continue
        for match in pattern.finditer(path.read_text(encoding="utf-8", errors="replace")):
            url = next(group for group in match.groups() if group)
            if url not in ON_DEMAND:
                found.append(f"{path.relative_to(site)}: {url}")
    assert not found, "the site loads from the network:\n" + "\n".join(found)


def test_the_example_report_pages_are_made_by_the_build(site: Path) -> None:
    """docs/_hooks/example_reports.py runs the examples at build time: the pages hold the
    numbers the code computes now (the demo's forcecheck-axis MVR, the items run's
    forcecheck-rule accuracy), and a tutorial links each one."""
    demo = (site / "examples" / "demo-report.html").read_text(encoding="utf-8")
    assert "baseline:forcecheck-axis" in demo and "0.100" in demo
    items = (site / "examples" / "compare-items-comparison.html").read_text(encoding="utf-8")
    assert "forcecheck-rule" in items and "0.812" in items
    linked = (site / "tutorials" / "compare-judges.html").read_text(encoding="utf-8")
    assert "../examples/compare-items-comparison.html" in linked


def test_no_page_asks_for_mermaid(site: Path) -> None:
    diagrams = [p.name for p in site.rglob("*.html") if 'class="mermaid"' in p.read_text("utf-8")]
    assert not diagrams, f"a mermaid diagram makes the theme fetch mermaid: {diagrams}"


def pages_to_open(site: Path) -> list[str]:
    """Home, the first page of each nav section and every page that embeds an image or a
    frame: all pages share the theme's assets (the grep above covers every page's own
    addresses), so these show what a browser loads without opening all ~40 (~1 s each)."""
    config = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    firsts = [next(_nav_pages(section), "") for section in config["nav"]]
    embeds = [
        page
        for page in nav_pages()
        if re.search(r"<(?:img|iframe)\b", built_path(site, page).read_text(encoding="utf-8"))
    ]
    return list(dict.fromkeys(p for p in firsts + embeds if p))


@pytest.fixture(scope="module")
def opened(browser: Any, site: Path) -> dict[str, Loaded]:
    """The pages to open, over file://: what each requested and logged."""
    return {page: _open(browser, built_path(site, page)) for page in pages_to_open(site)}


def test_pages_open_offline_without_console_errors(opened: dict[str, Loaded]) -> None:
    for page, loaded in opened.items():
        remote = [u for u in loaded.requests if not u.startswith(("file:", "data:"))]
        assert not remote, f"{page} requested {remote}"
        errors = [e for e in loaded.console if e["level"] == "SEVERE"]
        assert not errors, f"{page}: {errors}"


def test_search_finds_a_page_offline(browser: Any, site: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get((site / "index.html").as_uri())
    box = browser.find_element(By.CSS_SELECTOR, "input.md-search__input")
    box.click()  # at 1280 px the search box sits in the header
    box.send_keys("bootstrap")
    hits = WebDriverWait(browser, 20).until(
        lambda d: d.find_elements(
            By.CSS_SELECTOR, ".md-search-result__item .md-search-result__link"
        )
    )
    targets = [str(a.get_attribute("href")) for a in hits]
    assert all(t.startswith(site.as_uri()) for t in targets), targets
    assert [e for e in browser.get_log("browser") if e["level"] == "SEVERE"] == []
