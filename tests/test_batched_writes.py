"""Record files are written in batches: on a timer, every N lines and on close; a run
killed with SIGKILL loses at most its unwritten batch, which --resume redoes, so every
judgment ends up recorded exactly once and as an uninterrupted run records it."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from test_interrupt import GOOD, demo_spec

from assay.core.records import JudgmentRecord
from assay.core.rundir import iter_jsonl
from assay.runs import Runner, RunOptions, load_spec, read_json
from assay.runs.store._store import RecordLog, RecordWriter
from assay.testing import FakeOpenAIServer, reply

TIMING = {"latency_s", "recorded_at"}
DEMO_JUDGMENTS = 120


def _record(i: int) -> JudgmentRecord:
    return JudgmentRecord(
        dataset="d", pair_id=f"p{i}", member="raised", judge_id="j", status="ok", label="x"
    )


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_without_an_event_loop_every_line_is_written_at_once(tmp_path: Path) -> None:
    writer = RecordWriter(tmp_path / "r.jsonl")
    writer.write(_record(0))
    assert _lines(tmp_path / "r.jsonl") == 1 and writer.pending == 0
    writer.close()


def test_in_a_run_lines_wait_for_the_timer_or_a_full_batch(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"

    async def main() -> None:
        writer = RecordWriter(path, flush_lines=5, flush_delay_s=0.2)
        for i in range(3):
            writer.write(_record(i))
        assert _lines(path) == 0 and writer.pending == 3  # buffered, not flushed per line
        await asyncio.sleep(0.4)
        assert _lines(path) == 3 and writer.pending == 0  # the timer wrote the batch
        for i in range(3, 8):
            writer.write(_record(i))
        assert _lines(path) == 8  # five lines fill a batch: written without waiting
        writer.write(_record(8))
        writer.close()  # the last, partial batch is written on close
        assert _lines(path) == 9

    asyncio.run(main())
    assert [r.pair_id for r in iter_jsonl(path, JudgmentRecord)] == [f"p{i}" for i in range(9)]


def test_a_stage_that_raises_still_writes_what_it_recorded(tmp_path: Path) -> None:
    """The stages close their logs in `finally`: an error never strands a batch."""
    path = tmp_path / "r.jsonl"

    async def main() -> None:
        log: RecordLog[JudgmentRecord] = RecordLog(path, JudgmentRecord)
        log.open()
        try:
            for i in range(4):
                log.append(_record(i))
            raise RuntimeError("boom")
        finally:
            log.close()

    with pytest.raises(RuntimeError):
        asyncio.run(main())
    assert _lines(path) == 4


def _assay_run(spec: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "assay", "run", str(spec), "--output-dir", str(out)] + [
        "--no-cache",
        "--no-progress",
    ]


def _kill_when_written(cmd: list[str], path: Path, lines: int) -> int:
    """Start `cmd`, SIGKILL it once `path` has `lines` lines; the lines it had then."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 90
    try:
        while _lines(path) < lines and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    return _lines(path)


def _by_key(path: Path) -> dict[Any, dict[str, Any]]:
    """Every record of the file, without its timing fields; fails on a duplicate."""
    out: dict[Any, dict[str, Any]] = {}
    for record in iter_jsonl(path, JudgmentRecord):
        assert record.key not in out, f"recorded twice: {record.key}"
        out[record.key] = record.model_dump(mode="json", exclude=TIMING)
    return out


def test_sigkill_then_resume_records_every_judgment_once(tmp_path: Path) -> None:
    with FakeOpenAIServer(default=reply(GOOD), latency_s=0.05) as srv:
        spec = demo_spec(tmp_path, srv.base_url, name="kill", bootstrap=100, max_concurrency=4)
        killed = tmp_path / "killed"
        had = _kill_when_written(_assay_run(spec, killed), killed / "judgments.jsonl", 20)
        assert 20 <= had < DEMO_JUDGMENTS  # killed mid-run, not after it ended
        kept = _by_key(killed / "judgments.jsonl")  # whole lines only (a torn tail is cut)
        assert read_json(killed / "manifest.json")["status"] == "running"  # no clean exit
        sent = srv.stats.total
        env = dict(os.environ)
        resumed = subprocess.run(_assay_run(spec, killed), capture_output=True, env=env)
        assert resumed.returncode == 0, resumed.stderr.decode()
        assert srv.stats.total - sent == DEMO_JUDGMENTS - len(kept)  # only the lost ones
        whole = tmp_path / "whole"
        options = RunOptions(output_dir=str(whole), use_cache=False, progress=False)
        assert Runner(load_spec(spec), options).run().status == "complete"
    after = _by_key(killed / "judgments.jsonl")
    assert len(after) == _lines(killed / "judgments.jsonl") == DEMO_JUDGMENTS
    assert after == _by_key(whole / "judgments.jsonl")
    metrics, reference = read_json(killed / "metrics.json"), read_json(whole / "metrics.json")
    metrics.pop("records_sha256"), reference.pop("records_sha256")
    assert metrics == reference  # same records: same metrics, bootstrap included
    assert read_json(killed / "manifest.json")["recorded_judgments"] == DEMO_JUDGMENTS
