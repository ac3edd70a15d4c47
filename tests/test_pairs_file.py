"""A run reads its ForceBench file twice (validated at once, then read again as it
judges) instead of holding it: same pairs, same errors, a changed file refused, and only
the pairs in flight held while judging."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from assay.core.judging import JudgeItem, Judgment
from assay.core.outcomes import Status
from assay.datasets import _pairs_file, load_pairs, scan_pairs
from assay.errors import DatasetError
from assay.runs import Runner, RunOptions, iter_records, load_spec

DEMO = Path(__file__).resolve().parents[1] / "assay" / "data" / "forcebench_demo.jsonl"


def _rows(n: int) -> list[dict[str, Any]]:
    first = json.loads(DEMO.read_text(encoding="utf-8").splitlines()[0])
    return [{**first, "id": f"p{i:04d}"} for i in range(n)]


def _write(path: Path, rows: list[dict[str, Any]], *, bom: bool = False) -> Path:
    text = "".join(json.dumps(r) + "\n" for r in rows)
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    return path


def test_scan_keeps_ids_and_reads_the_same_pairs_again(tmp_path: Path, streamed: None) -> None:
    path = _write(tmp_path / "pairs.jsonl", _rows(30), bom=True)
    scanned, loaded = scan_pairs(path), load_pairs(path)
    assert scanned.ids == [p.id for p in loaded.pairs] and scanned.rows == 30
    assert scanned.sha256 == loaded.sha256 and scanned.name == "pairs"
    assert list(scanned.iter_pairs()) == loaded.pairs
    assert scanned.load() == loaded


@pytest.mark.parametrize(
    ("tail", "line", "message"),
    [
        (b"{not json}\n", 4, "invalid JSON"),
        (b"[1, 2]\n", 4, "each row must be a JSON object"),
        (b'{"id": "x\xff"}\n', 4, "not valid UTF-8"),
        (json.dumps({**_rows(1)[0], "id": "p0001"}).encode() + b"\n", 4, "duplicate id"),
        (b'{"id": "q"}\n', 4, "Field required"),
    ],
)
def test_scan_errors_name_the_line_as_loading_does(
    tmp_path: Path, tail: bytes, line: int, message: str
) -> None:
    path = _write(tmp_path / "bad.jsonl", _rows(2))
    path.write_bytes(path.read_bytes() + b"\n" + tail)  # a blank line 3, then the bad line
    errors = []
    for read in (scan_pairs, load_pairs):
        with pytest.raises(DatasetError) as caught:
            read(path)
        errors.append(caught.value)
    assert str(errors[0]) == str(errors[1])
    assert errors[0].line == line and message in str(errors[0])


@pytest.fixture
def streamed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files of any size read again as the run goes (small ones are otherwise held)."""
    monkeypatch.setattr(_pairs_file, "HOLD_BYTES", 0)


def test_a_small_file_is_read_once_and_held(tmp_path: Path) -> None:
    path = _write(tmp_path / "pairs.jsonl", _rows(5))
    scanned = scan_pairs(path)
    path.unlink()  # not read again
    assert [p.id for p in scanned.iter_pairs()] == scanned.ids


def test_a_file_changed_after_the_scan_is_refused(tmp_path: Path, streamed: None) -> None:
    path = _write(tmp_path / "pairs.jsonl", _rows(5))
    scanned = scan_pairs(path)
    rows = _rows(5)
    rows[4]["evidence"] = "Something else entirely."
    _write(path, rows)
    with pytest.raises(DatasetError, match="changed while the run was reading it"):
        list(scanned.iter_pairs())


class _InFlightJudge:
    """Notes how many pairs the judge stage holds each time it is asked."""

    id = "py:in-flight"
    max_concurrency = 8

    def __init__(self) -> None:
        self.stage: Any = None
        self.held: list[int] = []

    def describe(self) -> dict[str, Any]:
        return {"kind": "python"}

    async def __call__(self, item: JudgeItem) -> Judgment:
        self.held.append(len(self.stage._live))
        await asyncio.sleep(0)
        return Judgment(status=Status.OK, label="supported", score=1.0)


def test_a_run_holds_only_the_pairs_in_flight(tmp_path: Path, streamed: None) -> None:
    _write(tmp_path / "pairs.jsonl", _rows(300))
    spec = tmp_path / "spec.toml"
    spec.write_text('name = "flight"\nbootstrap = 0\n[[datasets]]\npath = "pairs.jsonl"\n')
    judge = _InFlightJudge()
    options = RunOptions(output_dir=str(tmp_path / "out"), progress=False, use_cache=False)
    runner = Runner(load_spec(spec, given_in_python=["judges"]), options, judges=[judge])
    judge.stage = runner.judge_stage
    outcome = runner.run()
    assert outcome.status == "complete" and outcome.recorded == 600
    assert max(judge.held) <= judge.max_concurrency + 1  # never the 300 pairs of the file
    assert runner.judge_stage._live == {}  # every pair let go once recorded
    keys = [r.key for r in iter_records(tmp_path / "out" / "judgments.jsonl")]
    assert len(keys) == len(set(keys)) == 600


def test_a_csv_file_is_scanned_and_read_again_like_jsonl(tmp_path: Path, streamed: None) -> None:
    import csv

    rows = _rows(6)
    path = tmp_path / "pairs.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    scanned, loaded = scan_pairs(path), load_pairs(path)
    assert scanned.sha256 == loaded.sha256 and scanned.ids == [p.id for p in loaded.pairs]
    assert list(scanned.iter_pairs()) == loaded.pairs
    path.write_text(path.read_text(encoding="utf-8").replace("p0003", "p0099"), encoding="utf-8")
    with pytest.raises(DatasetError, match="changed while the run was reading it"):
        list(scanned.iter_pairs())
