"""The run report's "Judges compared" section shows each judge's own value and CI as
the summary does (one bootstrap per judge and metric: the run's, in metrics.json); only
the paired Δs and their CIs come from the comparison's paired bootstrap."""

from __future__ import annotations

import html
import shutil
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke

from assay.report import RunReport
from assay.report._formats import run_compared
from assay.runs import read_json

FIXTURES = Path(__file__).parent / "fixtures" / "runs_v0_1"
NOTE = "each judge's own value and CI are the run's (metrics.json, as in the summary)"


def _summary(metrics: dict[str, Any]) -> dict[tuple[str, str], tuple[float, float, float]]:
    """(judge, metric) -> (value, lo, hi) as the summary tables show them."""
    out = {}
    for r in metrics["forcebench"]["rows"]:
        if r["group_by"] == "overall":
            for k in ("mvr", "fs"):
                out[(r["judge_id"], k)] = (r[k], r[f"{k}_lo"], r[f"{k}_hi"])
    for r in metrics["factuality"]["scores"]["rows"]:
        for k in ("macro", "micro"):
            out[(r["verifier_id"], f"factuality_{k}")] = (r[k], r[f"{k}_lo"], r[f"{k}_hi"])
    return out


@pytest.fixture()
def demo(tmp_path: Path) -> Path:
    run = Path(shutil.copytree(FIXTURES / "demo", tmp_path / "demo"))
    assert invoke(["recompute", str(run)])[0] == 0
    return run


def test_judges_compared_shows_the_summary_cis(demo: Path) -> None:
    metrics = read_json(demo / "metrics.json")
    report = RunReport(demo, read_json(demo / "manifest.json"), metrics)
    compared = run_compared(report)
    assert compared is not None
    summary = _summary(metrics)
    shown = {
        (row.judge, metric): (cell.value, cell.ci_low, cell.ci_high)
        for row in compared.ablation
        for metric, cell in row.metrics.items()
    }
    common = set(shown) & set(summary)
    assert {m for _, m in common} >= {"mvr", "fs", "factuality_macro", "factuality_micro"}
    for key in sorted(common):
        assert shown[key] == pytest.approx(summary[key]), key
    for point in compared.force:
        assert (point.fs, point.fs_lo, point.fs_hi) == pytest.approx(summary[(point.judge, "fs")])
        assert (point.mvr_lo, point.mvr_hi) == pytest.approx(summary[(point.judge, "mvr")][1:])
    assert any(NOTE in note for note in compared.notes)


def test_the_page_says_where_the_cis_come_from(demo: Path) -> None:
    page = demo / "report.html"
    assert invoke(["report", str(demo), "-f", "html", "-o", str(page)])[0] == 0
    assert NOTE in html.unescape(page.read_text(encoding="utf-8"))
