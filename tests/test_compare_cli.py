"""`assay compare`: formats (table, json, csv, markdown, html), -o, and one-line errors."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from _cli import invoke
from _item_runs import gold_items, labelled, write_item_run

from assay.compare import compare_runs

KEYS = ["metric", "judge_a", "judge_b", "n", "value_a", "value_b", "diff", "ci_low",
        "ci_high", "test", "p_value", "p_holm"]  # fmt: skip
GOLD = ["yes", "no", "yes", "yes", "no", "no", "yes", "no", "yes", "yes", "no", "yes"]


@pytest.fixture
def run(tmp_path: Path) -> Path:
    a = ["yes", "no", "yes", "yes", "no", "yes", "yes", "no", "no", "yes", "no", None]
    b = ["yes", "yes", "no", "yes", "no", "yes", "no", "no", "yes", "no", "no", "yes"]
    c = ["no", "yes", "yes", "no", "yes", "no", "no", "yes", "yes", "yes", "no", "yes"]
    judgments = labelled("m::p@1", a) + labelled("m::p@2", b) + labelled("n::p@1", c)
    return write_item_run(tmp_path / "run", "ablate", gold_items(GOLD), judgments)


def _ok(argv: list[str]) -> str:
    code, out, err = invoke(argv)
    assert code == 0, err
    return out


def test_json_is_the_whole_comparison_with_the_documented_keys(run: Path) -> None:
    whole = json.loads(_ok(["compare", str(run), "-f", "json", "--n-boot", "200"]))
    report = compare_runs([run], n_boot=200)
    assert whole == report.model_dump(mode="json")
    rows = whole["comparisons"]
    assert len(rows) == 4 * 3 and all(list(row) == KEYS for row in rows)  # 4 metrics x 3 pairs
    assert {r["test"] for r in rows} == {"mcnemar-exact", "paired-bootstrap"}
    assert whole["panels"] and whole["kappa"]["raters"] and whole["confusions"]
    assert {p["panel"] for p in whole["panels"]} >= {"judges"}


def test_csv_one_row_per_comparison(run: Path) -> None:
    out = _ok(
        ["compare", str(run), "-f", "csv", "--metric", "cohen_kappa", "--reference", "m::p@1"]
    )
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0]) == KEYS
    assert [(r["metric"], r["judge_a"], r["judge_b"]) for r in rows] == [
        ("cohen_kappa", "m::p@2", "m::p@1"), ("cohen_kappa", "n::p@1", "m::p@1")]  # fmt: skip
    assert float(rows[0]["ci_low"]) <= float(rows[0]["diff"]) <= float(rows[0]["ci_high"])


def test_table_and_markdown_show_ablation_comparisons_and_notes(run: Path, tmp_path: Path) -> None:
    argv = ["compare", str(run), "--reference", "m::p@1", "--n-boot", "100"]
    table = _ok(argv)
    ablation, comparisons = table.split("\n\ncomparisons\n")
    assert ablation.startswith("ablation\njudge")
    assert "m::p@1 (reference)" in ablation and "Δ cohen_kappa" in ablation
    comparisons, notes = comparisons.split("\n\nnotes\n")
    comparisons, panels = comparisons.split("\n\nJudge panels: agreement\n")
    assert "lowers α most" in panels  # the judges' panel reliability, before the notes
    assert len(comparisons.strip().splitlines()) == 1 + 8 + 1  # header, rows, caption
    assert notes.startswith("- m::p@1: accuracy, balanced_accuracy, macro_f1, cohen_kappa on 11")
    report = compare_runs([run], reference="m::p@1", n_boot=100)
    first = report.comparisons[0]
    assert f"{first.value_a:.4f}" in comparisons and f"{first.diff:+.4f}" in comparisons
    markdown = _ok([*argv, "-f", "markdown"])
    assert markdown.startswith("## ablation\n\n| judge | run | model | prompt | accuracy |")
    tables = markdown.split("## Judge panels")[0]
    body = [line for line in tables.splitlines() if line.startswith("| ")]
    assert len(body) == (2 + 3) + (2 + 8)  # header + separator + rows, twice
    target = tmp_path / "out" / "cmp.md"
    code, out, err = invoke([*argv, "-f", "markdown", "-o", str(target)])
    assert code == 0 and out == "" and f"wrote {target}" in err
    assert target.read_text(encoding="utf-8") == markdown


def test_notes_follow_the_tables(run: Path, tmp_path: Path) -> None:
    other = write_item_run(
        tmp_path / "other", "other", gold_items(GOLD[:8]), labelled("m::p@1", GOLD[:8])
    )
    table = _ok(["compare", str(run), str(other), "--metric", "accuracy", "--n-boot", "50"])
    notes = table.split("\nnotes\n")[1].splitlines()
    assert notes[1] == "- items: compared on the 8 every run has (ablate 12, other 8)"
    assert notes[0] == (
        "- judge ids used by several runs are prefixed with the run name: "
        "ablate/m::p@1, other/m::p@1"
    )


def test_html_is_the_comparison_page(run: Path) -> None:
    html = _ok(["compare", str(run), "-f", "html", "--n-boot", "50"])
    assert html.lstrip().startswith("<!DOCTYPE html>") and "m::p@2" in html


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--format", "yaml"], "--format 'yaml': use one of csv, html, json, markdown, table"),
        (["--reference", "nobody"], "--reference 'nobody' is not a judge here; judges: "),
        (["--metric", "mvr"], "--metric mvr: not in these runs; available: accuracy, "),
        (["--n-boot", "0"], "--n-boot must be a positive integer, got 0"),
    ],
)
def test_bad_options_are_one_line(run: Path, argv: list[str], message: str) -> None:
    code, out, err = invoke(["compare", str(run), *argv])
    assert code == 2 and out == ""
    assert err.startswith(f"error: {message}") and err.count("\n") == 1


def test_bad_runs_are_one_line(run: Path, tmp_path: Path) -> None:
    cases = {
        "not a run": (tmp_path / "nowhere", "run directory not found"),
        "a file": (run / "items.jsonl", "is a file, not a run directory"),
    }
    lonely = write_item_run(tmp_path / "lonely", "lonely", gold_items(["x"]), labelled("j", ["x"]))
    disjoint = write_item_run(
        tmp_path / "disjoint",
        "disjoint",
        gold_items(["yes"], ["other"]),
        labelled("k", ["yes"], ["other"]),  # fmt: skip
    )
    for what, (path, message) in cases.items():
        code, _, err = invoke(["compare", str(path)])
        assert code == 2 and message in err and err.count("\n") == 1, what
    code, _, err = invoke(["compare", str(lonely)])
    assert code == 2 and err.startswith("error: no comparable metric: no metric has two judges")
    code, _, err = invoke(["compare", str(run), str(disjoint)])
    assert code == 2 and "runs ablate (12 items), disjoint (1 item) have no item in common" in err
    code, _, err = invoke(["compare", str(run), str(disjoint), "--strict"])
    assert code == 2 and err.count("\n") == 1


def test_benchmark_script_runs_compare_on_a_synthetic_run_dir() -> None:
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_compare.py"
    done = subprocess.run(
        [sys.executable, str(script), "--items", "200", "--n-boot", "20", "--scores"],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    out = done.stdout
    # 4 judges: 6 pairs x (accuracy, balanced_accuracy, macro_f1, cohen_kappa, mae,
    # pearson, spearman)
    assert "200 items x 4 judges (800 judgments), 42 comparisons, 20 paired resamples" in out
    assert re.search(r"assay compare_runs +\d+\.\d\ds +\d+\.\d\ds +\d+ MB", out)
    assert re.search(r"plain json \+ numpy +\d+\.\d\ds +\d+\.\d\ds +\d+ MB", out)
    assert re.search(r"assay / plain +\d+\.\d\dx", out)
    assert "24 of 24 plain comparisons matched" in out  # the label statistics, not scores
    gap = re.search(r"largest gap (\S+)", out)
    assert gap is not None and float(gap.group(1)) < 1e-9  # the same intervals
    assert re.search(r"assay compare CLI +\d+\.\d\d s, \d+ MB peak", out)
