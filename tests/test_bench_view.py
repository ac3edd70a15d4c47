"""benchmarks/bench_view.py runs end to end on a tiny run (so it cannot rot): through
`assay view` over HTTP and through `ViewIndex` in a process, and both see the same rows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "bench_view.py"


def bench(*flags: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--items", "200", "--repeat", "1", "--json", *flags],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr  # 1: a target missed, on a loaded machine
    figures: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    assert figures["total"] == figures["judgments"] > 800  # 4 judges, a tenth pairwise
    assert len(figures["steps"]) == 8 and figures["rss_mb"] > 0 and figures["first_s"] > 0
    return figures


@pytest.fixture(scope="module")
def library() -> dict[str, Any]:
    return bench("--library")


def test_the_library_measurement(library: dict[str, Any]) -> None:
    assert library["mode"] == "library"
    totals = [s["total"] for s in library["steps"]]
    assert 0 < totals[0] < library["total"]  # ~2% parse errors
    assert totals[1] == library["judgments"] // 4  # one judge of four
    assert totals[5] == totals[6] == library["total"]  # a sort and a page filter nothing


def test_the_server_measurement_answers_as_the_library(library: dict[str, Any]) -> None:
    http = bench()
    assert http["mode"] == "http" and http["listen_s"] <= http["first_s"]
    assert [s["total"] for s in http["steps"]] == [s["total"] for s in library["steps"]]
