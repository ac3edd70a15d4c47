"""Ordinal word labels in every report format: `assay recompute` reads the dataset's
`label_order` from the manifest, and the run report (table, markdown, JSON, CSV, HTML)
and `assay compare` (table, JSON, CSV, HTML, report_frames) show the statistics."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from _cli import invoke
from _item_runs import gold_items, labelled, write_item_run
from sklearn.metrics import cohen_kappa_score

from assay.compare import compare_runs, report_frames
from assay.core.rundir import read_json

LEVELS = ["unsupported", "partially_supported", "supported"]
STATS = ("linear_kappa", "quadratic_kappa", "ordinal_alpha", "mae_rank")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = np.random.default_rng(21)
    gold = rng.integers(0, 3, 60)
    judges = {
        "near": np.clip(gold + rng.choice([0, 0, 1], 60), 0, 2),
        "far": rng.integers(0, 3, 60),
    }
    judgments = [row for j, r in judges.items() for row in labelled(j, [LEVELS[x] for x in r])]
    base = tmp_path_factory.mktemp("ordinal-report")
    path = write_item_run(base / "run", "ord", gold_items([LEVELS[g] for g in gold]), judgments)
    block = {"kind": "items", "name": "d", "path": "d.csv", "label_order": LEVELS}
    manifest = {"name": "ord", "spec": {"datasets": [block]}}
    (path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    code, _, err = invoke(["recompute", str(path)])
    assert code == 0, err
    (path / "truth.json").write_text(
        json.dumps({j: cohen_kappa_score(gold, r, weights="linear") for j, r in judges.items()})
    )
    return path


def _report(run: Path, fmt: str) -> str:
    code, out, err = invoke(["report", str(run), "-f", fmt])
    assert code == 0, err
    return (run / "report.html").read_text(encoding="utf-8") if fmt == "html" else out


def test_recompute_reads_the_order_from_the_manifest(run: Path) -> None:
    items = read_json(run / "metrics.json")["items"]
    truth = json.loads((run / "truth.json").read_text())
    assert items["label_orders"] == {"d": LEVELS}
    for row in items["rows"]:
        assert row["linear_kappa"] == pytest.approx(truth[row["judge_id"]])
        assert row["n_of"]["ordinal_alpha"] == 60


@pytest.mark.parametrize("fmt", ["table", "markdown", "html"])
def test_run_report_has_the_ordinal_table(run: Path, fmt: str) -> None:
    text = _report(run, fmt)
    assert "Ordinal agreement" in text and "ord α" in text and "MAE rank" in text
    assert "unsupported &lt; partially_supported" in text or "unsupported < partially" in text


def test_run_report_json_and_csv_carry_the_statistics(run: Path) -> None:
    data = json.loads(_report(run, "json"))
    rows = data["metrics"]["items"]["rows"] if "metrics" in data else data["items"]["rows"]
    assert all(row["ordinal_alpha_lo"] <= row["ordinal_alpha"] for row in rows)
    records = list(csv.DictReader(io.StringIO(_report(run, "csv"))))
    mine = [r for r in records if r["metric"] in STATS and r["section"] == "items"]
    assert {r["metric"] for r in mine} == set(STATS)
    assert all(r["n"] == "60" and r["ci_low"] for r in mine)


@pytest.mark.parametrize("fmt", ["table", "json", "csv", "html"])
def test_compare_shows_the_ordinal_statistics(run: Path, fmt: str) -> None:
    code, out, err = invoke(["compare", str(run), "-f", fmt, "--n-boot", "100"])
    assert code == 0, err
    for name in STATS:
        assert name in out


def test_compare_frames_have_the_ordinal_rows(run: Path) -> None:
    frames = report_frames(compare_runs([run], n_boot=100))
    assert set(STATS) <= set(frames["comparisons"]["metric"])
    assert set(STATS) <= set(frames["ablation"]["metric"])
