"""Run directories written by assay 0.1 (before the open-core refactor) stay readable.

`tests/fixtures/runs_v0_1/` holds two run directories written by that version (the
demo spec, and the hosted spec against the loopback server, so LLM judge, decomposer
and verifier records with raw outputs) and what `report`, `recompute` and `reparse`
printed or wrote then. Today's code must give the same output on them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke

FIXTURES = Path(__file__).parent / "fixtures" / "runs_v0_1"
RUNS = ("demo", "hosted")


def _invoke(argv: list[str]) -> tuple[int, str]:
    code, out, err = invoke(argv)
    assert code == 0, err
    return code, out


def _copy(run: str, tmp_path: Path) -> Path:
    target = tmp_path / run
    shutil.copytree(FIXTURES / run, target)
    return target


def _metrics(path: Path) -> dict[str, Any]:
    """metrics.json without what legitimately changes: the record-file digests section."""
    data = json.loads(path.read_text(encoding="utf-8"))
    data.pop("records_sha256", None)
    return data


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("fmt", ["json", "markdown", "csv"])
def test_report_is_unchanged(run: str, fmt: str, tmp_path: Path) -> None:
    run_dir = _copy(run, tmp_path)
    _, out = _invoke(["report", str(run_dir), "-f", fmt])
    expected = (FIXTURES / "expected" / f"{run}.report.{fmt}").read_text(encoding="utf-8")
    got = out.replace(str(run_dir), "<RUN>")
    if fmt == "json":
        assert _strip_digests(json.loads(got)) == _strip_digests(json.loads(expected))
    else:
        assert got == expected


def _lines(path: Path) -> list[dict[str, Any]]:
    """Records as parsed objects: key order within a line is not part of the format."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _strip_digests(report: Any) -> Any:
    if isinstance(report, dict):
        return {k: _strip_digests(v) for k, v in report.items() if k != "records_sha256"}
    if isinstance(report, list):
        return [_strip_digests(v) for v in report]
    return report


@pytest.mark.parametrize("run", RUNS)
def test_recompute_gives_the_same_metrics(run: str, tmp_path: Path) -> None:
    run_dir = _copy(run, tmp_path)
    _invoke(["recompute", str(run_dir)])
    assert _metrics(run_dir / "metrics.json") == _metrics(FIXTURES / run / "metrics.json")


@pytest.mark.parametrize("run", RUNS)
def test_reparse_changes_no_record_and_prints_the_same(run: str, tmp_path: Path) -> None:
    run_dir = _copy(run, tmp_path)
    _, out = _invoke(["reparse", str(run_dir)])
    expected = (FIXTURES / "expected" / f"{run}.reparse.out").read_text(encoding="utf-8")
    # the first line wraps at the terminal width, which depends on the path's length
    assert " ".join(out.replace(str(run_dir), "<RUN>").split()) == " ".join(expected.split())
    for name in ("judgments.jsonl", "verifications.jsonl", "claims.jsonl"):
        assert _lines(run_dir / name) == _lines(FIXTURES / run / name), name
    assert _metrics(run_dir / "metrics.json") == _metrics(FIXTURES / run / "metrics.json")
