"""The HTML report: content, escaping, well-formedness and `assay report --format html`."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from markupsafe import escape
from typer.testing import CliRunner

from assay.cli import app
from assay.report import check_records, render_html_report
from assay.report._formats import RunReport, run_comparison
from assay.runs import MANIFEST_FILE, METRICS_FILE, Runner, RunOptions, load_spec, read_json

DEMO_SPEC = Path(__file__).parents[1] / "examples/forcebench-demo.toml"
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}
EVIL = '<script>alert("x")</script>'


def esc(text: str) -> str:
    """`text` as the page's autoescaping writes it (quotes as `&#34;`/`&#39;`)."""
    return str(escape(text))


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
        assert esc(jid) in page
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
    assert esc(EVIL) in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "0.250" in page and "[0.100, 0.400]" in page


def test_records_supply_status_counts_and_empty_input_renders() -> None:
    records = pd.DataFrame(
        {"judge_id": ["j", "j", "j"], "status": ["ok", "parse_error", "parse_error"]}
    )
    page = render_html_report({"name": "r", "judges": [{"id": "j"}]}, pd.DataFrame(), records)
    assert "<svg" not in page  # no metrics: no charts, but still a page
    assert "No metrics yet" in page and "judgments.jsonl" in page
    assert '<td class="num warn">2</td>' in page
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
    assert result.exit_code == 0 and result.output.startswith("## ForceBench")
    assert "\n| judge | N |" in result.output


# --------------------------------------------------------------------------- factuality

BOTH_SPEC = Path(__file__).parents[1] / "examples/demo.toml"
FACT_ONLY = """
name = "fact-only"
bootstrap = 200
[factuality]
datasets = [{ name = "factuality-demo", path = "builtin:factuality-demo" }]
decomposer = { kind = "sentence" }
verifiers = [{ kind = "overlap" }]
"""


class _Sections(HTMLParser):
    """Ids of the <section>s, tables by class with their cell texts, h2/h3 texts."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.sections: list[str] = []
        self.headings: list[str] = []
        self.tables: dict[str, list[list[str]]] = {}
        self._table: list[str | None] = []
        self._cell: list[str] | None = None
        self._heading: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "section" and a.get("id"):
            self.sections.append(str(a["id"]))
        if tag in ("h2", "h3"):
            self._heading = []
        if tag == "table":
            self._table.append(a.get("class"))
            self.tables.setdefault(str(a.get("class")), [])
        if tag == "tr" and self._table:
            self.tables[str(self._table[-1])].append([])
        if tag in ("td", "th") and self._table:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("h2", "h3") and self._heading is not None:
            self.headings.append("".join(self._heading).strip())
            self._heading = None
        if tag in ("td", "th") and self._cell is not None and self._table:
            self.tables[str(self._table[-1])][-1].append(" ".join("".join(self._cell).split()))
            self._cell = None
        if tag == "table" and self._table:
            self._table.pop()

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)
        if self._heading is not None:
            self._heading.append(data)


def sections(page: str) -> _Sections:
    parser = _Sections()
    parser.feed(page)
    parser.close()
    return parser


def _run(spec: Path, out: Path) -> Path:
    outcome = Runner(load_spec(spec), RunOptions(output_dir=str(out), progress=False)).run()
    assert outcome.status == "complete"
    return out


@pytest.fixture(scope="module")
def both_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run(BOTH_SPEC, tmp_path_factory.mktemp("both") / "run")


@pytest.fixture(scope="module")
def fact_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("fact")
    spec = base / "spec.toml"
    spec.write_text(FACT_ONLY, encoding="utf-8")
    return _run(spec, base / "run")


def load_all(run_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    return read_json(run_dir / MANIFEST_FILE), read_json(run_dir / METRICS_FILE)


def test_run_with_both_parts_renders_both_sections(both_run: Path) -> None:
    manifest, metrics = load_all(both_run)
    assert metrics["forcebench"] and metrics["factuality"]
    page = render_html_report(manifest, metrics)
    check(page)
    parsed = sections(page)
    for sid in ("summary", "charts", "groups", "statuses", "factuality", "repro"):
        assert sid in parsed.sections
    assert "ForceBench summary" in parsed.headings and "Factuality" in parsed.headings
    assert "ForceBench + factuality run report" in page
    # the ForceBench part is the same as from the frame alone
    assert len(parsed.tables["summary"]) == 1 + 5

    row = metrics["factuality"]["scores"]["rows"][0]
    head, *body = parsed.tables["fact-summary"]
    assert head[:8] == [
        "verifier",
        "model",
        "prompt",
        "responses",
        "0-claim rate",
        "claims",
        "scored",
        "unscored",
    ]
    assert head[8].startswith("macro") and head[9].startswith("micro")
    assert len(body) == 1 and body[0][0] == row["verifier_id"]
    cells = body[0]
    assert cells[3] == str(row["n_responses"]) and cells[5] == str(row["n_claims"])
    assert cells[8] == f"{row['macro']:.3f}[{row['macro_lo']:.3f}, {row['macro_hi']:.3f}]"
    assert cells[9] == f"{row['micro']:.3f}[{row['micro_lo']:.3f}, {row['micro_hi']:.3f}]"
    # macro/micro chart and the stacked outcome bar
    assert 'aria-label="Macro and micro factuality per verifier' in page
    assert 'aria-label="Claim outcomes per verifier' in page
    assert f"{row['n_supported']:,} of {row['n_claims']:,} claims" in page
    # the pipeline in the reproducibility box
    assert "Factuality pipeline" in parsed.headings
    repro = {r[0]: r for r in parsed.tables["repro-judges"][1:]}
    assert any(k.startswith("decomposer") and "sentence" in k for k in repro)
    assert any(row["verifier_id"] in k and "threshold 0.7" in r[3] for k, r in repro.items())


def test_factuality_only_run_renders_without_forcebench(fact_run: Path) -> None:
    manifest, metrics = load_all(fact_run)
    assert metrics["forcebench"] is None and metrics["factuality"]
    page = render_html_report(manifest, metrics)
    check(page)
    parsed = sections(page)
    assert parsed.sections == ["factuality", "repro"]
    assert "summary" not in parsed.tables and "statuses" not in parsed.tables
    assert "MVR" not in page and "judgments" not in page
    assert "Factuality run report" in page
    assert "fact-summary" in parsed.tables
    # no gold labels in the demo data: no gold or correlation tables
    assert "gold" not in parsed.tables and "correlation" not in parsed.tables


def _fact_metrics(vid: str) -> dict[str, Any]:
    counts = {
        "n_supported": 5,
        "n_unsupported": 2,
        "n_contradicted": 1,
        "n_parse_error": 3,
        "n_refusal": 0,
        "n_truncated": 0,
        "n_api_error": 1,
        "n_missing": 2,
    }
    row = {
        "verifier_id": vid,
        "model": "<i>model</i>",
        "prompt_id": "p&q",
        "prompt_version": 2,
        "n_responses": 4,
        "n_responses_scored": 3,
        "n_zero_claim": 1,
        "zero_claim_rate": 0.25,
        "n_claims": 14,
        "n_scored": 8,
        "n_unscored": 6,
        **counts,
        "macro": 0.61,
        "macro_lo": 0.4,
        "macro_hi": 0.8,
        "micro": 0.625,
        "micro_lo": 0.3,
        "micro_hi": 0.9,
        "macro_length_penalized": 0.5,
        "macro_length_penalized_lo": 0.2,
        "macro_length_penalized_hi": 0.7,
    }
    gold = {
        "verifier_id": vid,
        "unscored": "exclude",
        "n": 8,
        "n_gold": 14,
        "n_excluded_unscored": 6,
        "tp": 4,
        "fp": 1,
        "fn": 1,
        "tn": 2,
        "accuracy": 0.75,
        "balanced_accuracy": 0.733,
        "precision": 0.8,
        "recall": 0.8,
        "f1": 0.8,
        "confusion": {
            "supported": {"supported": 4, "not_supported": 1},
            "not_supported": {"supported": 1, "not_supported": 2},
        },
        "label_confusion": {"supported": {"supported": 4, "parse_error": 3, "<b>x</b>": 1}},
    }
    corr = {
        "verifier_id": vid,
        "n": 4,
        "n_predicted": 3,
        "n_gold": 4,
        "spearman": 0.42,
        "spearman_lo": -0.1,
        "spearman_hi": 0.9,
        "n_boot_degenerate": 0,
    }
    return {
        "scores": {
            "rows": [row],
            "n_boot": 100,
            "seed": 0,
            "confidence": 0.95,
            "length_penalty": "factscore",
            "gamma": 10,
        },
        "gold": {"rows": [gold], "positive": ["supported"], "unscored": "exclude"},
        "correlation": {
            "rows": [corr],
            "gold_source": "given",
            "predicted": "factuality",
            "n_boot": 100,
            "seed": 0,
            "confidence": 0.95,
        },
    }


def test_factuality_strings_are_escaped_and_every_part_renders() -> None:
    manifest: dict[str, Any] = {
        "name": "n",
        "status": "complete",
        "factuality": {
            "datasets": [{"name": "<b>ds</b>", "path": "/x/<y>.jsonl", "sha256": "ab", "rows": 4}],
            "decomposer": {
                "kind": "llm-decomposer",
                "id": "<svg onload=alert(1)>",
                "client": {"provider": "openai", "model": "<m>", "api_base": "http://h/'\""},
                "prompt": {"id": "d<p>", "version": 1, "sha256": "cafe", "file": "/<f>"},
                "decoding": {"temperature": 0.0},
                "stats": {"recorded": 4, "claims": 14, "by_status": {"ok": 3, "refusal": 1}},
            },
            "verifiers": [
                {
                    "kind": "llm-retrieval",
                    "id": EVIL,
                    "client": {"provider": "openai", "model": "<i>model</i>"},
                    "prompt": {"id": "p&q", "version": 2, "sha256": "beef", "file": "/a/<b>"},
                    "parser": "<legacy>",
                    "parser_version": "v<1>",
                    "threshold": 0.5,
                    "retriever": {
                        "kind": "<bm25>",
                        "k1": 1.5,
                        "corpus": {"path": "/c/<d>.jsonl", "sha256": "ff", "size": 3},
                    },
                    "top_k": 3,
                    "stats": {"recorded": 12, "planned": 14, "requests_sent": 12},
                }
            ],
            "planned_verifications": 14,
            "recorded_verifications": 12,
        },
    }
    page = render_html_report(manifest, {"forcebench": None, "factuality": _fact_metrics(EVIL)})
    check(page)
    assert "<script" not in page and "<svg onload" not in page and "<i>model" not in page
    for raw in ("<b>ds", "<b>x", "<m>", "<p>", "<f>", "<legacy>", "<bm25>", "<d>", "<1>"):
        assert raw not in page
    assert esc(EVIL) in page
    assert "p&amp;q@2" in page and "&lt;legacy&gt;" in page and "v&lt;1&gt;" in page
    assert "&lt;bm25&gt;" in page and "top 3" in page and "threshold 0.5" in page
    parsed = sections(page)
    row = parsed.tables["fact-summary"][1]
    # unscored total and its breakdown; macro, micro and the length-penalized macro
    assert row[7] == "6parse error 3api error 1missing 2"
    assert row[8:] == ["0.610[0.400, 0.800]", "0.625[0.300, 0.900]", "0.500[0.200, 0.700]"]
    assert parsed.tables["gold"][1][1:] == [
        "0.750",
        "0.733",
        "0.800",
        "0.800",
        "0.800",
        "8",
        "6",
        "14",
    ]
    assert parsed.tables["confusion"][1:] == [["supported", "4", "1"], ["not supported", "1", "2"]]
    # the raw label table shows unscored statuses and the odd label, escaped
    assert parsed.tables["confusion raw"][0][1:] == ["supported", "parse error", "<b>x</b>"]
    assert parsed.tables["correlation"][1][1:4] == ["0.420", "[-0.100, 0.900]", "4"]
    # every outcome segment, the unscored ones hatched
    for status, n in (("parse error", 3), ("api error", 1), ("missing", 2)):
        assert f"{esc(EVIL)} · {status}: {n} of 14 claims" in page
    assert page.count('fill="url(#assay-unscored)"') == 3
    assert "8 scored · 6 unscored (42.9%)" in page


def test_metrics_dict_without_parts_renders() -> None:
    assert "No metrics yet" in render_html_report({}, {})
    page = render_html_report({}, {"forcebench": None, "factuality": None})
    assert page.startswith("<!DOCTYPE html>") and "No metrics yet" in page
    page = render_html_report({"factuality": {"verifiers": [{"id": "v", "kind": "x"}]}}, {})
    assert "No factuality scores: the run recorded no verifications" in page
    assert "summary" not in sections(page).sections


@pytest.mark.parametrize("which", ["both", "fact"])
def test_cli_writes_html_for_factuality_runs(
    which: str, both_run: Path, fact_run: Path, tmp_path: Path
) -> None:
    run_dir = both_run if which == "both" else fact_run
    target = tmp_path / "r.html"
    result = CliRunner().invoke(app, ["report", str(run_dir), "-f", "html", "-o", str(target)])
    assert result.exit_code == 0, result.output
    page = target.read_text(encoding="utf-8")
    check(page)
    found = sections(page).sections
    assert "factuality" in found
    assert ("summary" in found) == (which == "both")
    manifest, metrics = load_all(run_dir)
    comparison = run_comparison(RunReport(run_dir, manifest, metrics))
    assert ("comparison" in found) == (comparison is not None) == (which == "both")
    expected = render_html_report(
        manifest, metrics, None, check_records(run_dir, metrics), comparison=comparison
    )
    assert page == expected


# --------------------------------------------------------------------------- datasets


def _force(judge: str, dataset: str, mvr: float, group_by: str = "overall") -> dict[str, Any]:
    group = "all" if group_by == "overall" else "scope"
    return {
        "judge_id": judge,
        "dataset": dataset,
        "group_by": group_by,
        "group": group,
        "n": 20,
        "n_failed": 0,
        "mvr": mvr,
        "mvr_lo": None,
        "mvr_hi": None,
        "fs": 0.25,
        "fs_lo": None,
        "fs_hi": None,
    }


def test_per_dataset_rows_get_their_own_section_and_pooled_charts() -> None:
    datasets = {"pubmed-set": 0.111, "legal-set": 0.222, "all": 0.1666}
    rows = [
        _force(f"judge-{k}", d, v + k / 100, g)
        for d, v in datasets.items()
        for k in range(2)
        for g in ("overall", "axis")
    ]
    fact = {"verifier_id": "v", "n_responses": 4, "zero_claim_rate": 0.0, "n_claims": 9}
    fact |= {"n_scored": 9, "n_unscored": 0, "macro": 0.5, "micro": 0.5}
    scores = [fact | {"dataset": d, "macro": 0.5 + i / 10} for i, d in enumerate(datasets)]
    metrics = {"forcebench": {"rows": rows}, "factuality": {"scores": {"rows": scores}}}
    page = render_html_report({"name": "multi"}, metrics)
    parser = check(page)
    pooled = [r for r in parser.summary_rows[1:] if r]
    assert len(pooled) == 2 and all("0.167" in r or "0.177" in r for r in pooled)
    section = page.split('<section id="datasets">')[1].split("</section>")[0]
    for name, value in datasets.items():
        assert f"<td>{name}</td>" in section and f"{value:.3f}" in section
    assert "<td>legal-set</td><td>v</td>" in section and "0.600" in section
    assert "—" in section  # null CIs
    single = render_html_report({"name": "one"}, {"forcebench": {"rows": rows[-4:]}})
    assert 'id="datasets"' not in single
