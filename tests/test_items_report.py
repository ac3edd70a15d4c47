"""The report of an items run in every format: its own title, the judges-vs-gold,
pairwise and raters tables, and the n each statistic is computed on wherever it is not N
(5 of 16 gold cells empty: accuracy is over 11, and every format says so)."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import os
import re
import shutil
from pathlib import Path

import pytest
from _cli import invoke
from _item_runs import write_item_run

ROOT = Path(__file__).resolve().parents[1]

SPEC = """name = "items-report"
bootstrap = 100
[[datasets]]
kind = "items"
name = "claims"
path = "claims.csv"
gold_label_column = "label"
raters = ["r1", "r2"]
variables = { claim = "response", evidence = "context" }
[[baselines]]
name = "token-overlap"
[[baselines]]
name = "forcecheck-rule"
"""


def _report(run: Path, fmt: str) -> str:
    code, out, err = invoke(["report", str(run), "-f", fmt])
    assert code == 0, err
    return (run / "report.html").read_text(encoding="utf-8") if fmt == "html" else out


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example CSV with its first 5 gold cells emptied, judged by two baselines."""
    base = tmp_path_factory.mktemp("items-report")
    text = (ROOT / "examples" / "items" / "claims.csv").read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text)))
    for row in rows[1:6]:
        row[3] = ""
    with (base / "claims.csv").open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows(rows)
    (base / "spec.toml").write_text(SPEC, encoding="utf-8")
    run = base / "run"
    argv = ["run", str(base / "spec.toml"), "--output-dir", str(run), "--no-progress"]
    code, out, err = invoke(argv)
    assert code == 0, out + err
    return run


@pytest.fixture(scope="module")
def pairwise(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """8 pairwise items, gold preference on 5; the judge is inconsistent on 4."""
    run = tmp_path_factory.mktemp("items-pairwise") / "run"
    items = [
        {"item_id": f"i{k}", "pairwise": True, "gold_preference": "A" if k % 3 else None}
        for k in range(8)
    ]
    judgments = [
        {"item_id": f"i{k}", "judge_id": "duel", "order": order, "label": label}
        for k in range(8)
        for order, label in (("ab", "a"), ("ba", "a" if k % 2 else "b"))
    ]
    write_item_run(run, "duel-run", items, judgments)
    code, _, err = invoke(["recompute", str(run)])
    assert code == 0, err
    return run


def _cells(text: str, fmt: str, judge: str) -> tuple[list[str], list[str]]:
    """(header, row) of `judge`'s row in a plain-text or markdown table (plain-text
    cells are at least two spaces apart; a header may hold one space)."""
    lines = text.splitlines()
    row_at = next(i for i, ln in enumerate(lines) if judge in ln)
    head_at = next(i for i in range(row_at, -1, -1) if lines[i].lstrip("| ").startswith("judge"))
    if fmt == "markdown":
        split = [[c.strip() for c in lines[i].strip("|").split("|")] for i in (head_at, row_at)]
    else:
        split = [re.split(r"\s{2,}", lines[i].strip()) for i in (head_at, row_at)]
    return split[0], split[1]


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_tables_show_the_n_of_gold_statistics_next_to_them(single: Path, fmt: str) -> None:
    header, row = _cells(_report(single, fmt), fmt, "baseline:token-overlap")
    assert len(header) == len(row), (header, row)
    assert row[header.index("N")] == "16"  # the dataset's items
    at = header.index("n gold")
    assert header[at + 1] == "acc" and row[at] == "11", (header, row)


def test_json_gives_each_statistic_its_n(single: Path) -> None:
    rows = json.loads(_report(single, "json"))["items"]["rows"]
    assert {r["n_of"]["accuracy"] for r in rows} == {11}
    assert {r["n_items"] for r in rows} == {16}


def test_the_csv_gives_each_gold_statistic_its_own_n(single: Path) -> None:
    rows = list(csv.DictReader(io.StringIO(_report(single, "csv"))))
    items = [r for r in rows if r["section"] == "items"]
    n_of = {
        r["metric"]: r["n"] for r in items if r["judge_or_verifier"] == "baseline:token-overlap"
    }
    assert n_of["accuracy"] == n_of["cohen_kappa"] == n_of["macro_f1"] == "11"
    assert n_of["coverage"] == "16"
    raters = [r for r in rows if r["section"] == "raters"]
    assert {r["metric"] for r in raters} >= {"krippendorff_alpha", "fleiss_kappa", "cohen_kappa"}


def test_pairwise_tables_and_csv_show_the_n_of_accuracy_and_bias(pairwise: Path) -> None:
    text = _report(pairwise, "markdown")
    header, row = _cells(text, "markdown", "duel")
    assert row[header.index("acc") - 1] == "5" and header[header.index("acc") - 1] == "n gold"
    assert row[header.index("bias") - 1] == "4"
    rows = list(csv.DictReader(io.StringIO(_report(pairwise, "csv"))))
    n_of = {r["metric"]: r["n"] for r in rows if r["section"] == "items"}
    assert n_of["accuracy"] == "5" and n_of["position_bias"] == "4"
    assert n_of["win_rate_a"] == "8"


def test_the_html_report_of_an_items_run_has_its_tables(single: Path) -> None:
    html = _report(single, "html")
    assert "ForceBench" not in html and "No metrics yet" not in html
    assert "items-report · assay report" in html and "Items run report" in html
    for heading in ("Judges vs gold", "Human raters", "Judges and raters: Cohen"):
        assert heading in html, heading
    assert '<th class="num">n gold</th>' in html and '<td class="num">11</td>' in html
    assert "Judgment statuses" in html  # requests, tokens and cost per judge, as for pairs
    assert html.count("Judgment statuses") == 1


def test_the_html_report_of_a_pairwise_run_has_its_table(pairwise: Path) -> None:
    html = _report(pairwise, "html")
    assert "ForceBench" not in html and "No metrics yet" not in html
    assert "Pairwise judges" in html and "n incons." in html


def test_a_run_with_pairs_and_items_reports_both(single: Path, tmp_path: Path) -> None:
    spec = (single.parent / "spec.toml").read_text(encoding="utf-8")
    spec += '[[datasets]]\npath = "builtin:forcebench-demo"\n'
    (single.parent / "mixed.toml").write_text(spec, encoding="utf-8")
    run = tmp_path / "mixed"
    argv = ["run", str(single.parent / "mixed.toml"), "--output-dir", str(run), "--no-progress"]
    code, out, err = invoke(argv)
    assert code == 0, out + err
    html = _report(run, "html")
    assert "ForceBench + items run report" in html and "ForceBench summary" in html
    assert "Judges vs gold" in html and "No metrics yet" not in html
    markdown = _report(run, "markdown")
    assert "| MVR |" in markdown and "| n gold |" in markdown


def test_the_items_page_in_headless_chromium(single: Path, tmp_path: Path) -> None:
    """Every section heading is visible, the tables fit and nothing is fetched."""
    missing = shutil.which("chromium") is None or shutil.which("chromedriver") is None
    if missing or importlib.util.find_spec("selenium") is None:
        reason = "chromium, chromedriver and selenium are needed"
        if os.environ.get("CI"):  # as tests/test_report_browser.py: CI must run it
            pytest.fail(reason)
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    page = tmp_path / "report.html"
    page.write_text(_report(single, "html"), encoding="utf-8")
    options = webdriver.ChromeOptions()
    options.binary_location = str(shutil.which("chromium"))
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--window-size=1280,900",
    ):
        options.add_argument(arg)
    service = Service(str(shutil.which("chromedriver")))
    driver = webdriver.Chrome(options=options, service=service)
    try:
        driver.get(page.as_uri())
        headings = [h.text for h in driver.find_elements(By.CSS_SELECTOR, "h2, h3")]
        for heading in ("Judges vs gold", "Human raters", "Judges and raters: Cohen's κ · claims"):
            assert heading in headings, headings
        assert not any("ForceBench" in h or h == "Summary" for h in headings), headings
        tables = driver.find_elements(By.CSS_SELECTOR, "section#items table")
        assert tables and all(t.is_displayed() for t in tables)
        width = driver.execute_script("return document.documentElement.scrollWidth")
        assert width <= 1280, width
    finally:
        driver.quit()


def test_a_missing_verdict_shows_as_the_n_of_the_gold_statistics(tmp_path: Path) -> None:
    """Gold on all 6 items, one judgment a parse error: accuracy is over 5, not N = 6."""
    gold = ["yes", "no", "yes", "no", "yes", "no"]
    items = [{"item_id": f"item-{i}", "gold_label": g} for i, g in enumerate(gold)]
    labels = ["yes", "no", "no", None, "yes", "no"]
    judgments = [
        {"item_id": f"item-{i}", "judge_id": "j", "label": lab}
        if lab
        else {"item_id": f"item-{i}", "judge_id": "j", "status": "parse_error"}
        for i, lab in enumerate(labels)
    ]
    run = write_item_run(tmp_path / "run", "one-failed", items, judgments)
    assert invoke(["recompute", str(run)])[0] == 0
    header, row = _cells(_report(run, "markdown"), "markdown", "| j |")
    assert row[header.index("N")] == "6" and row[header.index("n gold")] == "5"
    assert row[header.index("acc")] == "0.800"


def test_raters_with_empty_cells_show_the_n_of_fleiss_kappa(tmp_path: Path) -> None:
    r1 = ["yes", "no", "yes", "no", "yes", "no"]
    r2 = ["yes", "no", None, "no", "yes", None]
    items = [
        {"item_id": f"item-{i}", "gold_label": a, "ratings": {"r1": a, "r2": b}}
        for i, (a, b) in enumerate(zip(r1, r2, strict=True))
    ]
    judgments = [{"item_id": f"item-{i}", "judge_id": "j", "label": "yes"} for i in range(6)]
    run = write_item_run(tmp_path / "run", "raters", items, judgments)
    assert invoke(["recompute", str(run)])[0] == 0
    text = _report(run, "markdown")
    lines = text.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("| dataset | raters"))
    header = [c.strip() for c in lines[at].strip("|").split("|")]
    row = [c.strip() for c in lines[at + 2].strip("|").split("|")]
    assert row[header.index("N")] == "6" and row[header.index("n complete")] == "4"
    rows = list(csv.DictReader(io.StringIO(_report(run, "csv"))))
    fleiss = next(r for r in rows if r["section"] == "raters" and r["metric"] == "fleiss_kappa")
    assert fleiss["n"] == "4"
