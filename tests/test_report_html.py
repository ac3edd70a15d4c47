"""The HTML report: content, escaping, well-formedness and `assay report --format html`."""

from __future__ import annotations

import html
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

from assay.cli import app
from assay.report import render_html_report
from assay.runs import MANIFEST_FILE, METRICS_FILE, Runner, RunOptions, load_spec, read_json

DEMO_SPEC = Path(__file__).parents[1] / "examples/forcebench-demo.toml"
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
EVIL = '<script>alert("x")</script>'


class _Checker(HTMLParser):
    """Tag balance, svg counts, attribute audit and the summary table's cell text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.starts: dict[str, int] = {}
        self.ends: dict[str, int] = {}
        self.attrs: list[tuple[str, str, str | None]] = []
        self.summary_rows: list[list[str]] = []
        self._table: str | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.starts[tag] = self.starts.get(tag, 0) + 1
        self.attrs += [(tag, k, v) for k, v in attrs]
        if tag == "table":
            self._table = dict(attrs).get("class")
        if self._table == "summary" and tag == "tr":
            self.summary_rows.append([])
        if self._table == "summary" and tag in ("td", "th"):
            self._cell = []
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.starts[tag] = self.starts.get(tag, 0) + 1
        self.ends[tag] = self.ends.get(tag, 0) + 1
        self.attrs += [(tag, k, v) for k, v in attrs]

    def handle_endtag(self, tag: str) -> None:
        self.ends[tag] = self.ends.get(tag, 0) + 1
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()
        if tag in ("td", "th") and self._cell is not None:
            self.summary_rows[-1].append("".join(self._cell).strip())
            self._cell = None
        if tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def check(page: str) -> _Checker:
    parser = _Checker()
    parser.feed(page)
    parser.close()
    assert parser.errors == []
    assert parser.stack == []
    assert parser.starts.get("svg", 0) == parser.ends.get("svg", 0) >= 1
    return parser


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo") / "run"
    options = RunOptions(output_dir=str(out), progress=False, use_cache=False)
    outcome = Runner(load_spec(DEMO_SPEC), options).run()
    assert outcome.status == "complete"
    return out


def load(run_dir: Path) -> tuple[dict[str, Any], pd.DataFrame]:
    manifest = read_json(run_dir / MANIFEST_FILE)
    metrics = pd.DataFrame(read_json(run_dir / METRICS_FILE)["forcebench"]["rows"])
    return manifest, metrics


def test_demo_report_has_judges_charts_and_table_numbers(demo_run: Path) -> None:
    manifest, metrics = load(demo_run)
    page = render_html_report(manifest, metrics)
    parsed = check(page)

    judge_ids = sorted(set(metrics["judge_id"]))
    assert len(judge_ids) == 5
    for jid in judge_ids:
        assert html.escape(jid) in page
    # MVR chart, FS chart and the axis/severity grid; one dot per judge per chart
    assert parsed.starts["svg"] == 3
    assert parsed.starts["circle"] == 2 * len(judge_ids)
    assert "MVR: share of pairs where the raised claim scored ≥ the calibrated one" in page
    for group in ("relation", "modality", "scope", "temporal", "numeric", "severity 1"):
        assert f">{group}</text>" in page
    assert manifest["name"] in page and manifest["datasets"][0]["sha256"][:12] in page

    # the summary row of one judge shows its MVR and CI exactly as the table formats them
    row = metrics[(metrics["group_by"] == "overall")].iloc[0]
    by_judge = {cells[1]: cells for cells in parsed.summary_rows[1:]}
    cells = by_judge[row["judge_id"]]
    assert f"{row['mvr']:.3f}" in cells
    assert f"[{row['mvr_lo']:.3f}, {row['mvr_hi']:.3f}]" in cells
    assert f"{row['fs']:.3f}" in cells
    # sorted by MVR, lowest first
    mvrs = [float(c[6]) for c in parsed.summary_rows[1:]]
    assert mvrs == sorted(mvrs)


def test_report_is_self_contained(demo_run: Path) -> None:
    page = render_html_report(*load(demo_run))
    parsed = check(page)
    assert "<script" not in page and "<link" not in page and "@import" not in page
    external = [
        (tag, k, v)
        for tag, k, v in parsed.attrs
        if k in ("src", "href") or (v and "://" in v and k != "xmlns")
    ]
    assert external == []


def test_judge_ids_and_manifest_strings_are_escaped() -> None:
    rows = [
        {
            "judge_id": EVIL,
            "model": "m<b>",
            "prompt_id": "p&q",
            "prompt_version": 1,
            "group_by": group_by,
            "group": group,
            "n": 10,
            "n_failed": 1,
            "mvr": 0.25,
            "mvr_lo": 0.1,
            "mvr_hi": 0.4,
            "fs": 0.3,
            "fs_lo": 0.2,
            "fs_hi": 0.4,
        }
        for group_by, group in (("overall", "all"), ("axis", "scope"), ("severity", "2"))
    ]
    manifest: dict[str, Any] = {
        "name": "<img src=x onerror=alert(1)>",
        "status": "complete",
        "warnings": ["<b>warn</b>"],
        "judges": [
            {
                "id": EVIL,
                "kind": "llm",
                "client": {"provider": "p", "model": "<i>model</i>", "api_base": "x\"'y"},
                "prompt": {"id": "p&q", "version": 1, "file": "/a/<b>.prompt", "sha256": "ab"},
                "decoding": {"temperature": 0.0},
                "stats": {"by_status": {"ok": 19, "<weird>": 1}, "requests_sent": 20},
            }
        ],
    }
    page = render_html_report(manifest, pd.DataFrame(rows))
    check(page)
    assert "<script" not in page
    assert "<img" not in page and "<weird>" not in page and "<i>model" not in page
    assert html.escape(EVIL) in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "0.250" in page and "[0.100, 0.400]" in page


def test_records_supply_status_counts_and_empty_input_renders() -> None:
    records = pd.DataFrame(
        {"judge_id": ["j", "j", "j"], "status": ["ok", "parse_error", "parse_error"]}
    )
    page = render_html_report({"name": "r", "judges": [{"id": "j"}]}, pd.DataFrame(), records)
    assert "<svg" not in page  # no metrics: no charts, but still a page
    assert "No metrics yet" in page and "judgments.jsonl" in page
    assert "<td class='num warn'>2</td>" in page
    assert render_html_report({}, pd.DataFrame()).startswith("<!DOCTYPE html>")


def test_cli_writes_html(demo_run: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["report", str(demo_run), "--format", "html"])
    assert result.exit_code == 0, result.output
    target = demo_run / "report.html"
    assert result.output.strip() == str(target)
    check(target.read_text(encoding="utf-8"))

    other = tmp_path / "out" / "r.html"
    result = runner.invoke(app, ["report", str(demo_run), "-f", "html", "--output", str(other)])
    assert result.exit_code == 0, result.output
    assert other.read_text(encoding="utf-8") == target.read_text(encoding="utf-8")

    result = runner.invoke(app, ["report", str(demo_run), "--format", "markdown"])
    assert result.exit_code == 0 and result.output.startswith("| judge |")
