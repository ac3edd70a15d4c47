"""`assay report` on a run with applied policies: a policies section in every format
(table, markdown, json, csv, html) whose numbers are metrics.json's, escaped claim text,
no section without policies, a warning (not a crash) for a tampered policy folder, and
the risk–coverage curve from sweep.jsonl or computed in-process the same way."""

from __future__ import annotations

import io
import json
import math
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _policies_cli_helpers import assay, lines
from _report_policies_run import HOSTILE, POLICIES, applied_run

from assay.policies.report._data import policy_reports
from assay.report._policies_html import curve_chart

pytest_plugins = ["_policies_fixtures"]  # run_dir (a copy of base_run below)

NAMES = ["cert", "gate", "render"]


@pytest.fixture(scope="module")
def base_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return applied_run(tmp_path_factory.mktemp("report_policies"))


def _report(run: Path, fmt: str) -> str:
    code, out, err = assay("report", run, "--format", fmt)
    assert code == 0, err
    return out


def _html(run: Path) -> str:
    target = run / "report.html"
    code, _, err = assay("report", run, "--format", "html", "-o", target)
    assert code == 0, err
    return target.read_text(encoding="utf-8")


def _ratios(run: Path, name: str) -> dict[str, dict[str, Any]]:
    metrics = json.loads((run / "policies" / name / "metrics.json").read_text())
    found = {**metrics, **metrics.get("metrics", {})}
    return {k: v for k, v in found.items() if isinstance(v, dict) and "numerator" in v}


def _mix(run: Path, name: str) -> Counter[tuple[str, str]]:
    folder = run / "policies" / name
    counts: Counter[tuple[str, str]] = Counter()
    for file, of, field in (
        ("responses.jsonl", "response outcome", "outcome"),
        ("gate_decisions.jsonl", "gate outcome", "outcome"),
        ("claims.jsonl", "claim decision", "decision"),
    ):
        if (folder / file).exists():
            counts.update((of, str(r[field])) for r in lines(folder / file))
    return counts


def test_every_policy_is_applied_with_defined_metrics(base_run: Path) -> None:
    assert sorted(p.name for p in (base_run / "policies").iterdir()) == NAMES
    for name in NAMES:  # the fixture is worth testing with: some metrics are defined
        assert any(r["value"] is not None for r in _ratios(base_run, name).values())


@pytest.mark.parametrize("fmt", ["markdown", "table"])
def test_text_formats_show_each_metric_to_four_decimals(base_run: Path, fmt: str) -> None:
    text = _report(base_run, fmt)
    for name in NAMES:
        assert f"Policy {name} (" in text and f"Policy {name} outcome mix" in text
        for metric, r in _ratios(base_run, name).items():
            value = "null" if r["value"] is None else f"{r['value']:.4f}"
            cells = [metric, value, f"{r['numerator']}/{r['denominator']}"]
            if fmt == "markdown":
                assert "| " + " | ".join(cells) + " |" in text, (name, metric)
            else:
                assert any(line.split()[:3] == cells for line in text.splitlines()), metric
    manifest = json.loads((base_run / "policies/cert/manifest.json").read_text())
    assert manifest["policy"]["policy_sha256"][:12] in text


def test_json_has_the_policies_with_metrics_json_values(base_run: Path) -> None:
    data = json.loads(_report(base_run, "json"))
    assert [p["name"] for p in data["policies"]] == NAMES
    for policy in data["policies"]:
        name = policy["name"]
        folder = base_run / "policies" / name
        manifest = json.loads((folder / "manifest.json").read_text())
        assert policy["policy_sha256"] == manifest["policy"]["policy_sha256"]
        assert policy["kind"] == manifest["policy"]["kind"]
        got = {m["name"]: (m["value"], m["numerator"], m["denominator"]) for m in policy["metrics"]}
        want = {
            k: (r["value"], r["numerator"], r["denominator"])
            for k, r in _ratios(base_run, name).items()
        }
        assert got == want
        assert {(m["of"], m["label"]): m["count"] for m in policy["mix"]} == dict(
            _mix(base_run, name)
        )
        metrics = json.loads((folder / "metrics.json").read_text())
        assert policy["n_refused"] == metrics["n_refused"]
        assert policy["warnings"] == []


def test_csv_rows_carry_the_unrounded_values(base_run: Path) -> None:
    frame = pd.read_csv(io.StringIO(_report(base_run, "csv")))
    rows = frame[frame["section"] == "policies"]
    for name in NAMES:
        mine = rows[rows["judge_or_verifier"] == name]
        values = mine[mine["group_by"] == "overall"].set_index("metric")["value"].astype(float)
        for metric, r in _ratios(base_run, name).items():
            if r["value"] is None:
                assert math.isnan(values[metric])
            else:
                assert values[metric] == r["value"], (name, metric)
        counts = mine[mine["metric"] == "count"]
        got = {(row.group_by, row.group): int(float(row.value)) for row in counts.itertuples()}
        assert got == dict(_mix(base_run, name))


def test_html_section_draws_curves_mix_and_escaped_renderings(base_run: Path) -> None:
    page = _html(base_run)
    assert page.count('<article class="policy"') == len(NAMES)
    assert page.count('<figure class="policy-curve">') == len(NAMES)  # gold labels: all defined
    assert page.count('<figure class="policy-mix">') == len(NAMES)
    assert "<script>window.__pwned" not in page and "<img src=x" not in page
    escaped = HOSTILE.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    assert escaped.replace('"', "&#34;") in page
    render = _ratios(base_run, "render")
    assert f'<td class="num">{render["vcp"]["value"]:.4f}</td>' in page


def test_hostile_claim_text_decides_like_any_other(base_run: Path) -> None:
    """The "[VERIFIED]" / "cite doc 3" claim stays UNVERIFIED and is hidden in strict."""
    (render,) = [p for p in policy_reports(base_run) if p.name == "render"]
    shown = [c for s in render.samples for c in s.claims if c.text == HOSTILE]
    assert [(c.state, c.strict, c.mixed) for c in shown] == [("UNVERIFIED", "hidden", "collapsed")]


def test_no_policies_no_section(run_dir: Path) -> None:
    shutil.rmtree(run_dir / "policies")
    assert "Polic" not in _report(run_dir, "markdown")
    assert "Polic" not in _report(run_dir, "table")
    assert "policies" not in json.loads(_report(run_dir, "json"))
    assert "policies" not in _report(run_dir, "csv")
    assert 'id="policies"' not in _html(run_dir)


def test_tampered_outputs_are_a_warning_row_not_a_crash(run_dir: Path) -> None:
    with (run_dir / "policies/cert/responses.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"outcome": "answer_full"}\n')
    (run_dir / "policies/gate/manifest.json").write_text("{not json", encoding="utf-8")
    text = _report(run_dir, "table")
    assert "responses.jsonl changed since the policy was applied" in text
    assert "manifest.json unreadable" in text
    data = json.loads(_report(run_dir, "json"))
    warned = {p["name"]: p["warnings"] for p in data["policies"]}
    assert warned["render"] == [] and warned["cert"] and warned["gate"]
    assert 'class="note warn policy-warning"' in _html(run_dir)


def test_computed_curve_equals_the_written_default_sweep(run_dir: Path) -> None:
    """No sweep.jsonl: the report computes the kind's default sweep; after `assay policies
    sweep` with its defaults it reads the file, and the curve is the same."""
    before = {p.name: p.curve for p in policy_reports(run_dir)}
    assert before["cert"] is not None and before["cert"].source.startswith("computed")
    policy = run_dir.parent / "policies.toml"
    policy.write_text(POLICIES, encoding="utf-8")
    code, _, err = assay("policies", "sweep", run_dir, "--policy", policy, "--name", "cert")
    assert code == 0, err
    after = {p.name: p.curve for p in policy_reports(run_dir)}
    assert after["cert"] is not None and after["cert"].source == "sweep.jsonl"
    assert after["cert"].points == before["cert"].points


def test_a_narrow_sweep_file_is_what_the_curve_shows(run_dir: Path) -> None:
    policy = run_dir.parent / "policies.toml"
    policy.write_text(POLICIES, encoding="utf-8")
    args = ("--name", "cert", "--from", "0.30", "--to", "0.50", "--step", "0.10")
    code, _, err = assay("policies", "sweep", run_dir, "--policy", policy, *args)
    assert code == 0, err
    written = lines(run_dir / "policies/cert/sweep.jsonl")
    (cert,) = [p for p in policy_reports(run_dir) if p.name == "cert"]
    assert cert.curve is not None
    want = [
        (p["metrics"]["critical_coverage"]["value"], p["metrics"]["critical_risk"]["value"])
        for p in written
        if p["metrics"]["critical_risk"]["value"] is not None
    ]
    assert [(p.coverage, p.risk) for p in cert.curve.points] == want


def test_gate_curve_summary_is_the_recorded_aurc(base_run: Path) -> None:
    (gate,) = [p for p in policy_reports(base_run) if p.name == "gate"]
    ratios = _ratios(base_run, "gate")
    assert gate.curve is not None
    assert gate.curve.summary == {k: ratios[k]["value"] for k in ("aurc", "aurc_opt", "e_aurc")}
    current = gate.curve.current
    assert current is not None
    assert (current.coverage, current.risk) == (
        ratios["coverage"]["value"],
        ratios["selective_risk_label"]["value"],
    )


def test_curve_geometry_maps_coverage_and_risk_onto_the_plot(base_run: Path) -> None:
    (cert,) = [p for p in policy_reports(base_run) if p.name == "cert"]
    assert cert.curve is not None
    chart = curve_chart("cert", cert.curve)
    for point, dot in zip(cert.curve.points, chart.dots, strict=True):
        assert dot.x == pytest.approx(chart.left + point.coverage * chart.plot_w)
        assert chart.top <= dot.y <= chart.top + chart.plot_h
    lowest = min(cert.curve.points, key=lambda p: p.risk)
    assert lowest.risk > 0 or any(
        d.y == pytest.approx(chart.top + chart.plot_h) for d in chart.dots
    )
