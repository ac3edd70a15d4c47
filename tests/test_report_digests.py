"""metrics.json records the sha256 of its record files; reports check them on disk."""

from __future__ import annotations

import hashlib
import io
import json
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from _cli import invoke
from typer.testing import CliRunner

from assay.cli import app
from assay.core.rundir import RECORD_FILES
from assay.report import check_records

FIXTURES = Path(__file__).parent / "fixtures" / "runs_v0_1"


def _copy(run: str, tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIXTURES / run, tmp_path / run))


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def _json_report(run_dir: Path) -> dict[str, Any]:
    out = _invoke("report", str(run_dir), "-f", "json")
    report: dict[str, Any] = json.loads(out)
    return report


@pytest.fixture()
def recomputed(tmp_path: Path) -> Path:
    run_dir = _copy("demo", tmp_path)
    _invoke("recompute", str(run_dir))
    return run_dir


def test_recompute_records_the_sha256_of_every_record_file(recomputed: Path) -> None:
    metrics = json.loads((recomputed / "metrics.json").read_text(encoding="utf-8"))
    present = [n for n in RECORD_FILES if (recomputed / n).exists()]
    assert len(present) == 5
    assert metrics["records_sha256"] == {
        n: hashlib.sha256((recomputed / n).read_bytes()).hexdigest() for n in present
    }


def test_reports_confirm_unchanged_records(recomputed: Path) -> None:
    digests = _json_report(recomputed)["records_sha256"]
    assert digests["stale"] is False
    assert {f["state"] for f in digests["files"].values()} == {"match"}
    page = _html(recomputed)
    assert "metrics.json matches the record files on disk (sha256)" in page
    sha = hashlib.sha256((recomputed / "claims.jsonl").read_bytes()).hexdigest()
    assert page.count(sha) == 2  # recorded and on disk


def _html(run_dir: Path) -> str:
    target = run_dir / "page.html"
    _invoke("report", str(run_dir), "-f", "html", "-o", str(target))
    return target.read_text(encoding="utf-8")


def test_a_record_file_changed_since_metrics_is_reported_stale(recomputed: Path) -> None:
    claims = recomputed / "claims.jsonl"
    claims.write_text(claims.read_text(encoding="utf-8") + "\n")  # one blank line more
    digests = _json_report(recomputed)["records_sha256"]
    assert digests["stale"] is True
    assert digests["files"]["claims.jsonl"]["state"] == "changed"
    assert digests["files"]["judgments.jsonl"]["state"] == "match"
    line = (
        "stale: claims.jsonl changed since metrics.json was computed; "
        f"run `assay recompute {recomputed}`"
    )
    assert digests["message"] == line
    page = _html(recomputed)
    assert f'<p class="note bad">{line}</p>' in page  # in the header, first thing seen
    (recomputed / "verifications.jsonl").unlink()
    files = _json_report(recomputed)["records_sha256"]["files"]
    assert files["verifications.jsonl"] == {
        "recorded": json.loads((recomputed / "metrics.json").read_text())["records_sha256"][
            "verifications.jsonl"
        ],
        "on_disk": None,
        "state": "missing",
    }
    _invoke("recompute", str(recomputed))
    assert _json_report(recomputed)["records_sha256"]["stale"] is False


@pytest.mark.parametrize("run", ["demo", "hosted"])
def test_old_runs_show_current_digests_not_recorded(run: str, tmp_path: Path) -> None:
    run_dir = _copy(run, tmp_path)
    check = check_records(run_dir, json.loads((run_dir / "metrics.json").read_text()))
    assert not check.recorded and not check.stale
    assert [f.state for f in check.files] == ["not recorded"] * len(check.files)
    assert all(f.on_disk and f.recorded is None for f in check.files)
    page = _html(run_dir)
    assert page.count("not recorded by this run") == 1 + len(check.files)
    assert 'class="note bad"' not in page
    assert _json_report(run_dir)["records_sha256"]["message"].startswith(
        "record digests not recorded by this run"
    )


def test_stale_records_are_said_in_every_text_format(recomputed: Path) -> None:
    """table, markdown and csv carry the stale line too (not only json and html); a
    format whose text cannot hold it (csv) also warns on stderr."""
    claims = recomputed / "claims.jsonl"
    claims.write_text(claims.read_text(encoding="utf-8") + "\n")
    line = (
        "stale: claims.jsonl changed since metrics.json was computed; "
        f"run `assay recompute {recomputed}`"
    )
    for fmt in ("table", "markdown", "csv"):
        code, out, err = invoke(["report", str(recomputed), "-f", fmt])
        assert code == 0, err
        assert line in out + err, fmt
    _, table, _ = invoke(["report", str(recomputed)])
    assert table.splitlines()[1] == line  # under the status line, before any table
    _, markdown, _ = invoke(["report", str(recomputed), "-f", "markdown"])
    assert markdown.startswith(f"> **{line}**\n")
    code, csv_text, err = invoke(["report", str(recomputed), "-f", "csv"])
    assert err == f"warning: {line}\n"
    frame = pd.read_csv(io.StringIO(csv_text))
    stale = frame[frame["section"] == "records"]
    assert stale[["group", "metric", "value"]].values.tolist() == [["claims.jsonl", "stale", 1]]
    assert pd.api.types.is_numeric_dtype(frame["value"])  # still one numeric column
    _invoke("recompute", str(recomputed))
    for fmt in ("table", "markdown", "csv"):
        code, out, err = invoke(["report", str(recomputed), "-f", fmt])
        assert code == 0 and "stale:" not in out + err, fmt
