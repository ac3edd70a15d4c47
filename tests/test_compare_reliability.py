"""`assay compare` shows each judge's reliability bins: the bins the run's own calibration
metrics give for the same judge (one run compared alone), in the report, its frames, the
table/markdown output and the HTML page; nothing of it without label probabilities."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke

from assay.compare import compare_runs, report_frames
from assay.runs import Runner, RunOptions, load_spec
from assay.testing import Behavior, FakeOpenAIServer, reply

GOLD = ("fully_supported", "unsupported")


def _answer(body: dict[str, Any]) -> Behavior:
    """Right on 7 items in 10, with a confidence spread over several bins."""
    i = int(body["messages"][-1]["content"].split("claim ")[1].split()[0])
    label = GOLD[i % 2] if i % 10 < 7 else GOLD[1 - i % 2]
    content = json.dumps({"label": label, "rationale": "as the passage says"})
    if not body.get("logprobs"):
        return reply(content)
    return reply(content, logprobs={label: math.log(0.52 + 0.47 * ((i * 7) % 13) / 12)})


def _run(base: Path, logprobs: bool, bins: int | None = None) -> Path:
    rows = [
        {"id": f"c{i:02d}", "claim": f"claim {i}", "evidence": "a passage"}
        | {"gold_label": GOLD[i % 2]}
        for i in range(60)
    ]
    (base / "claims.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    with FakeOpenAIServer(responder=_answer) as server:
        (base / "spec.toml").write_text(
            f"""name = "reliability"
bootstrap = 0
[[datasets]]
kind = "items"
path = "{(base / "claims.jsonl").as_posix()}"
[[judges]]
models = ["openai/sharp", "openai/honest"]
prompts = ["generic-support@1"]
api_base = "{server.base_url}"
transport = "openai"
logprobs = {"true" if logprobs else "false"}
"""
            + ("" if bins is None else f"[calibration]\nbins = {bins}\n"),
            encoding="utf-8",
        )
        options = RunOptions(output_dir=str(base / "run"), progress=False)
        assert Runner(load_spec(base / "spec.toml"), options).run().status == "complete"
    return base / "run"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Callable[[bool], Path]:
    made: dict[bool, Path] = {}

    def get(logprobs: bool) -> Path:
        if logprobs not in made:
            made[logprobs] = _run(tmp_path_factory.mktemp(f"rel{int(logprobs)}"), logprobs)
        return made[logprobs]

    return get


def test_compare_bins_equal_the_runs_own_bins(runs: Callable[[bool], Path]) -> None:
    run = runs(True)
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))["items"]
    own = {(r["judge_id"], r["dataset"]): r for r in metrics["calibration"]}
    report = compare_runs([run], n_boot=20)
    assert len(own) == 2 and {(t.judge, t.dataset) for t in report.reliability} == set(own)
    for t in report.reliability:
        row = own[(t.judge, t.dataset)]
        assert t.bins == row["bins"] == 10 and t.n == row["n"] == 60
        assert [b.model_dump() for b in t.reliability] == row["reliability"]
        assert t.ece == pytest.approx(row["ece"]) and t.brier == pytest.approx(row["brier"])
        assert sum(b.count > 0 for b in t.reliability) >= 3  # the spread reached several bins
    frame = report_frames(report)["reliability"]
    assert len(frame) == 20 and set(frame["judge"]) == {t.judge for t in report.reliability}
    assert frame["n"].sum() == 120


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_text_output_has_the_bins(runs: Callable[[bool], Path], fmt: str) -> None:
    code, out, err = invoke(["compare", str(runs(True)), "-f", fmt, "--n-boot", "20"])
    assert code == 0, err
    assert "reliability diagram" in out and "confidence" in out and "(0.9, 1]" in out


def test_html_draws_a_diagram_per_judge(runs: Callable[[bool], Path]) -> None:
    code, out, err = invoke(["compare", str(runs(True)), "-f", "html", "--n-boot", "20"])
    assert code == 0, err
    assert 'id="cmp-reliability"' in out and out.count('<figure class="reliability">') == 2


def test_no_probabilities_no_bins(runs: Callable[[bool], Path]) -> None:
    report = compare_runs([runs(False)], n_boot=20)
    assert report.reliability == [] and report_frames(report)["reliability"].empty
    for fmt in ("table", "markdown", "html"):
        code, out, err = invoke(["compare", str(runs(False)), "-f", fmt, "--n-boot", "20"])
        assert code == 0, err
        assert "reliability diagram" not in out.lower() and 'class="reliability"' not in out


def test_compare_bins_as_the_run_declares_them(
    runs: Callable[[bool], Path], tmp_path: Path
) -> None:
    """`[calibration] bins = 5`: ECE and the diagram's bins are the run's five; runs that
    bin differently are compared with the default ten, and a note says so."""
    five = _run(tmp_path, True, bins=5)
    metrics = json.loads((five / "metrics.json").read_text(encoding="utf-8"))["items"]
    own = {(r["judge_id"], r["dataset"]): r for r in metrics["calibration"]}
    report = compare_runs([five], n_boot=20)
    for t in report.reliability:
        row = own[(t.judge, t.dataset)]
        assert t.bins == row["bins"] == 5 and len(t.reliability) == 5
        assert t.ece == pytest.approx(row["ece"])
        assert [b.model_dump() for b in t.reliability] == row["reliability"]
    (ece,) = [c for c in report.comparisons if c.metric == "ece"]
    assert ece.value_a == pytest.approx(own[(ece.judge_a, "claims")]["ece"])
    mixed = compare_runs([five, runs(True)], n_boot=20)
    assert {t.bins for t in mixed.reliability} == {10}
    assert any("bin ECE differently" in n and "5, 10" in n for n in mixed.notes)
