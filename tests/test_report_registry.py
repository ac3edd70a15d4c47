"""Report formats are REPORT_FORMATS entries; the templates render and escape every part."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.core.registry import REPORT_FORMATS
from assay.errors import AssayError
from assay.report import ReportFormat, RunReport, check_records, render_html_report

FIXTURES = Path(__file__).parent / "fixtures" / "runs_v0_1"
HOSTILE = '"><img src=x onerror=alert(1)><script>alert(2)</script>'


def _run(run: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURES / run, tmp_path / run))


@pytest.fixture()
def word_count_format() -> Iterator[str]:
    """A format a plugin could register: one line per judge with its MVR."""

    @REPORT_FORMATS.register("mvr-lines", description="one line per judge")
    def mvr_lines(report: RunReport) -> str:
        rows = (report.metrics.get("forcebench") or {}).get("rows") or []
        overall = [r for r in rows if r["group_by"] == "overall"]
        return "".join(f"{r['judge_id']} {r['mvr']:.4f}\n" for r in overall)

    assert isinstance(mvr_lines, ReportFormat)
    yield "mvr-lines"
    REPORT_FORMATS._entries.pop("mvr-lines")  # leave the registry as other tests expect it


def test_builtin_formats_are_registry_entries() -> None:
    assert {"table", "json", "csv", "markdown", "html"} <= set(REPORT_FORMATS.names())
    assert REPORT_FORMATS.info("html").package == "assay"
    assert "HTML" in REPORT_FORMATS.info("html").description


def test_a_registered_format_is_usable_from_the_cli(word_count_format: str, tmp_path: Path) -> None:
    run_dir = _run("demo", tmp_path)
    result = CliRunner().invoke(app, ["report", str(run_dir), "-f", word_count_format])
    assert result.exit_code == 0, result.output
    metrics = json.loads((run_dir / "metrics.json").read_text())
    judges = {r["judge_id"] for r in metrics["forcebench"]["rows"]}
    lines = result.output.splitlines()
    assert len(lines) == len(judges) == 5 and {line.split()[0] for line in lines} == judges
    target = tmp_path / "out.txt"
    args = ["report", str(run_dir), "-f", word_count_format, "-o", str(target)]
    result = CliRunner().invoke(app, args)
    assert result.output.strip() == str(target) and target.read_text().splitlines() == lines


def test_unknown_format_is_one_line_listing_the_known_ones(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["report", str(tmp_path), "-f", "pdf"])
    assert isinstance(result.exception, AssayError)
    message = result.exception.render()
    assert "\n" not in message and "'pdf'" in message
    assert all(name in message for name in ("csv", "html", "json", "markdown", "table"))


class _Audit(HTMLParser):
    """Section ids, every tag, attributes that could run code."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: list[str] = []
        self.tags: set[str] = set()
        self.handlers: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.handlers += [k for k, _ in attrs if k.startswith("on")]
        if tag == "section":
            self.sections.append(str(dict(attrs).get("id")))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _audit(page: str) -> _Audit:
    audit = _Audit()
    audit.feed(page)
    return audit


@pytest.mark.parametrize("run", ["demo", "hosted"])
def test_every_section_renders_for_the_fixture_runs(run: str, tmp_path: Path) -> None:
    run_dir = _run(run, tmp_path)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    metrics = json.loads((run_dir / "metrics.json").read_text())
    page = render_html_report(manifest, metrics, None, check_records(run_dir, metrics))
    audit = _audit(page)
    assert audit.sections == ["summary", "charts", "groups", "statuses", "factuality", "repro"]
    assert page.count("<svg") == 5  # MVR, FS, heatmap, macro/micro, claim outcomes
    text = " ".join(" ".join(audit.text).split())
    for row in metrics["forcebench"]["rows"]:
        if row["group_by"] == "overall":
            assert f"{row['mvr']:.3f} [{row['mvr_lo']:.3f}, {row['mvr_hi']:.3f}]" in text
    for row in metrics["factuality"]["scores"]["rows"]:
        assert f"macro {row['macro']:.3f} [{row['macro_lo']:.3f}, {row['macro_hi']:.3f}]" in text
    for name in ("judgments.jsonl", "claims.jsonl", "Record files", "Factuality pipeline"):
        assert name in text


def _hostile(manifest: dict[str, Any], metrics: dict[str, Any]) -> None:
    """Plant HOSTILE in judge, verifier, decomposer and dataset names and a claim text."""
    old = manifest["judges"][0]["id"]
    manifest["judges"][0]["id"] = HOSTILE
    for row in metrics["forcebench"]["rows"]:
        row["judge_id"] = HOSTILE if row["judge_id"] == old else row["judge_id"]
    manifest["datasets"][0]["name"] = HOSTILE
    fact = manifest["factuality"]
    fact["datasets"][0]["name"] = HOSTILE
    fact["decomposer"]["id"] = HOSTILE
    fact["verifiers"][0]["id"] = HOSTILE
    metrics["factuality"]["scores"]["rows"][0]["verifier_id"] = HOSTILE
    manifest["warnings"] = [f"claim {HOSTILE} has no evidence"]
    manifest["message"] = HOSTILE


@pytest.mark.parametrize("run", ["demo", "hosted"])
def test_hostile_names_are_escaped_everywhere(run: str, tmp_path: Path) -> None:
    run_dir = _run(run, tmp_path)
    manifest = json.loads((run_dir / "manifest.json").read_text())
    metrics = json.loads((run_dir / "metrics.json").read_text())
    _hostile(manifest, metrics)
    page = render_html_report(manifest, metrics)
    audit = _audit(page)
    assert "img" not in audit.tags and "script" not in audit.tags
    assert audit.handlers == [] and "<img" not in page and "<script" not in page
    text = "".join(audit.text)
    assert text.count(HOSTILE) >= 8  # every planted place shows it, as text


def test_compare_formats_are_the_registry_entries_that_compare(
    word_count_format: str, tmp_path: Path
) -> None:
    """`assay compare -f` takes its formats from REPORT_FORMATS: a plugin format that also
    renders comparisons (`compares_with`) works there; one that renders runs only is a
    one-line error naming the formats that compare."""
    from _cli import invoke

    from assay.report import compares_with

    run_dir = _run("demo", tmp_path)
    code, _, err = invoke(["compare", str(run_dir), "-f", word_count_format])
    assert code == 2 and err.count("\n") == 1
    assert f"--format '{word_count_format}' renders run reports only" in err
    assert "use one of csv, html, json, markdown, table" in err

    @REPORT_FORMATS.register("n-comparisons", description="how many comparisons")
    @compares_with(lambda report: f"{len(report.comparisons)} comparisons\n")
    def n_comparisons(report: RunReport) -> str:
        return "runs are not counted\n"

    try:
        code, out, err = invoke(["compare", str(run_dir), "-f", "n-comparisons"])
        assert code == 0, err
        assert out.endswith(" comparisons\n") and int(out.split()[0]) > 0
    finally:
        REPORT_FORMATS._entries.pop("n-comparisons")
