"""Calibration end to end: two judges with `logprobs = true` against the loopback server
(one overconfident, one honest), an items dataset with dev/test splits; Brier, ECE, the
reliability bins and the fitted recalibration in every report format, the run's Python
frame, and `assay compare`."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke
from sklearn.metrics import brier_score_loss

from assay.core.records import ItemJudgmentRecord
from assay.core.rundir import latest
from assay.runs import Runner, RunOptions, load_spec
from assay.testing import Behavior, FakeOpenAIServer, reply

GOLD = ("fully_supported", "unsupported")
CONFIDENCE = {"sharp": 0.97, "honest": 0.7}


def _answer(body: dict[str, Any]) -> Behavior:
    """Both judges are right on 7 items in 10; they differ only in their confidence."""
    i = int(body["messages"][-1]["content"].split("claim ")[1].split()[0])
    label = GOLD[i % 2] if i % 10 < 7 else GOLD[1 - i % 2]
    content = json.dumps({"label": label, "rationale": "as the passage says"})
    return reply(content, logprobs={label: math.log(CONFIDENCE[body["model"]])})


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("calibration")
    rows = [
        {"id": f"c{i:02d}", "claim": f"claim {i}", "evidence": "a passage"}
        | {"gold_label": GOLD[i % 2], "split": "dev" if i < 40 else "test"}
        for i in range(80)
    ]
    (base / "claims.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    with FakeOpenAIServer(responder=_answer) as server:
        (base / "spec.toml").write_text(
            f"""name = "calibration"
bootstrap = 200
[[datasets]]
kind = "items"
path = "{(base / "claims.jsonl").as_posix()}"
split_column = "split"
[[judges]]
models = ["openai/sharp", "openai/honest"]
prompts = ["generic-support@1"]
api_base = "{server.base_url}"
transport = "openai"
logprobs = true
[calibration]
bins = 5
""",
            encoding="utf-8",
        )
        options = RunOptions(output_dir=str(base / "run"), progress=False)
        assert Runner(load_spec(base / "spec.toml"), options).run().status == "complete"
        assert all(body["logprobs"] is True for body in server.requests)
    return base / "run"


def _report(run: Path, fmt: str) -> str:
    code, out, err = invoke(["report", str(run), "-f", fmt])
    assert code == 0, err
    return (run / "report.html").read_text(encoding="utf-8") if fmt == "html" else out


def test_records_carry_the_label_probability_and_tokens(run: Path) -> None:
    records = latest(run / "item_judgments.jsonl", ItemJudgmentRecord).values()
    sharp = [r for r in records if r.model == "openai/sharp"]
    assert len(sharp) == 80
    assert [r.label_probability for r in sharp] == pytest.approx([0.97] * 80)
    assert all(r.logprobs and "".join(t.token for t in r.logprobs) == r.raw_output for r in sharp)


def test_metrics_json_has_brier_ece_bins_and_the_fitted_maps(run: Path) -> None:
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))["items"]
    rows = {r["judge_id"].split("::")[0]: r for r in metrics["calibration"]}
    right = [float(i % 10 < 7) for i in range(80)]
    for name, row in rows.items():
        p = CONFIDENCE[name.removeprefix("openai/")]
        assert row["brier"] == pytest.approx(brier_score_loss(right, [p] * 80))
        assert row["ece"] == pytest.approx(abs(p - 0.7), abs=1e-12)
        assert row["bins"] == 5 and len(row["reliability"]) == 5  # the [calibration] table
        assert sum(b["count"] for b in row["reliability"]) == 80
        assert {f["method"] for f in row["fitted"]} == {"temperature", "isotonic"}
    sharp = {f["method"]: f for f in rows["openai/sharp"]["fitted"]}
    assert sharp["temperature"]["temperature"] > 1  # overconfidence softened
    assert sharp["isotonic"]["ece_after"] < sharp["isotonic"]["ece_before"]
    flat = {r["judge_id"].split("::")[0]: r for r in metrics["rows"]}
    assert flat["openai/sharp"]["brier"] == rows["openai/sharp"]["brier"]
    assert flat["openai/sharp"]["brier_lo"] < flat["openai/sharp"]["brier"]


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_text_reports_show_the_calibration_tables(run: Path, fmt: str) -> None:
    out = _report(run, fmt)
    assert "Calibration vs gold" in out and "Calibration fitted on a split" in out
    assert "0.283" in out  # sharp's Brier: 0.7 * 0.03² + 0.3 * 0.97²


def test_csv_and_the_python_frame_have_the_calibration_section(run: Path) -> None:
    rows = list(csv.DictReader(io.StringIO(_report(run, "csv"))))
    section = [r for r in rows if r["section"] == "calibration"]
    counts = [r for r in section if r["metric"] == "bin_count" and r["value"] != "0"]
    assert {r["group"] for r in counts} == {"0.8-1", "0.6-0.8"}
    assert {r["metric"] for r in section} >= {"brier_before", "brier_after", "temperature"}
    assert any(r["metric"] == "ece" and r["ci_low"] for r in rows)


def test_the_html_report_draws_a_reliability_diagram_per_judge(run: Path) -> None:
    html = _report(run, "html")
    assert html.count('<figure class="reliability">') == 2
    assert "Calibration vs gold" in html and "perfect calibration" in html


def test_compare_gives_paired_brier_and_ece(run: Path) -> None:
    code, out, err = invoke(["compare", str(run), "--metric", "brier", "--metric", "ece"])
    assert code == 0, err
    code, out, err = invoke(["compare", str(run), "-f", "json", "--n-boot", "200"])
    assert code == 0, err
    rows = {c["metric"]: c for c in json.loads(out)["comparisons"]}
    assert {"brier", "ece"} <= set(rows)
    brier = rows["brier"]
    assert abs(brier["diff"]) == pytest.approx(0.2829 - 0.21)
    assert brier["ci_low"] * brier["ci_high"] > 0  # the CI excludes 0


def test_reparse_finds_the_label_probability_again(run: Path) -> None:
    code, out, err = invoke(["reparse", str(run)])
    assert code == 0, out + err
    records = latest(run / "item_judgments.jsonl", ItemJudgmentRecord).values()
    honest = [r.label_probability for r in records if r.model == "openai/honest"]
    assert honest == pytest.approx([0.7] * 80)
