"""docs/how-to/troubleshooting.md quotes what the browser tests say when they skip.

Its runnable blocks run in tests/test_docs_blocks.py; the skip reasons cannot (they need a
machine without Chromium), so here each line of that shown block must be a reason the
browser test gives, word for word, and the page must link the errors reference."""

from __future__ import annotations

from pathlib import Path

from test_readme import readme_blocks

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "how-to" / "troubleshooting.md"
BROWSER_TEST = ROOT / "tests" / "test_report_browser.py"


def test_the_skip_reasons_shown_are_the_browser_tests_own() -> None:
    shown = [b for b in readme_blocks(PAGE.read_text(encoding="utf-8")) if b.lang == ""]
    reasons = [line for b in shown for line in b.text.splitlines() if line.strip()]
    assert len(reasons) == 2, reasons
    source = BROWSER_TEST.read_text(encoding="utf-8")
    for reason in reasons:
        assert f'"{reason}"' in source, f"{PAGE.name} shows a skip reason the test no longer gives"


def test_the_page_links_the_errors_reference() -> None:
    assert "](../reference/errors.md)" in PAGE.read_text(encoding="utf-8")
    assert (PAGE.parent / "../reference/errors.md").resolve().is_file()
