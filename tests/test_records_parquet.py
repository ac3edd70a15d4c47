"""`records_parquet = true`: a Parquet copy of each record file at the end of a run,
one row per key (the latest line) with the JSONL's values; toggling it keeps a run
resumable."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from assay.core.records import JudgmentRecord
from assay.core.rundir import latest_records
from assay.errors import SpecError
from assay.runs import Runner, RunOptions, load_spec
from assay.runs.store._parquet import write_parquet

SPEC = """
name = "pq"
bootstrap = 0
{parquet}
[[datasets]]
path = "builtin:forcebench-demo"
[[baselines]]
name = "token-overlap"
"""


def _run(tmp: Path, parquet: str) -> Path:
    spec = tmp / "s.toml"
    spec.write_text(SPEC.format(parquet=parquet), encoding="utf-8")
    out = tmp / "out"
    assert Runner(load_spec(spec), RunOptions(output_dir=str(out), progress=False)).run()
    return out


def test_a_run_writes_a_parquet_copy_equal_to_its_latest_records(tmp_path: Path) -> None:
    out = _run(tmp_path, "")
    assert not (out / "judgments.parquet").exists()  # off unless asked
    _run(tmp_path, "records_parquet = true")  # resumable: the key is not result-relevant
    table = pq.read_table(out / "judgments.parquet")
    records = latest_records(out / "judgments.jsonl")
    assert table.num_rows == len(records) == 120
    assert table.schema.field("score").type == "double"
    assert table.schema.field("severity").type == "int64"
    rows = {(r["dataset"], r["pair_id"], r["member"], r["judge_id"]): r for r in table.to_pylist()}
    for key, record in records.items():
        row, want = rows[key], record.model_dump(mode="json")
        assert json.loads(row["usage"]) == want["usage"]
        assert {k: row[k] for k in ("status", "label", "score", "axis", "severity")} == {
            k: want[k] for k in ("status", "label", "score", "axis", "severity")
        }


def test_the_latest_line_per_key_wins_and_a_torn_tail_is_skipped(tmp_path: Path) -> None:
    source = tmp_path / "judgments.jsonl"
    base = {"dataset": "d", "member": "raised", "judge_id": "j"}
    lines = [
        {**base, "pair_id": "p1", "status": "api_error", "error": "503"},
        {**base, "pair_id": "p2", "status": "ok", "score": 0.5, "parsed": {"label": "x"}},
        {**base, "pair_id": "p1", "status": "ok", "score": 1.0},
    ]
    text = "".join(JudgmentRecord.model_validate(x).model_dump_json() + "\n" for x in lines)
    source.write_text(text + '{"dataset": "d", "pair', encoding="utf-8")
    rows = pq.read_table(write_parquet(source, JudgmentRecord, tmp_path / "j.parquet"))
    got = [(r["pair_id"], r["status"], r["score"], r["parsed"]) for r in rows.to_pylist()]
    assert got == [("p2", "ok", 0.5, '{"label": "x"}'), ("p1", "ok", 1.0, None)]


def test_without_pyarrow_the_spec_key_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow -> ImportError
    with pytest.raises(SpecError, match="records_parquet = true needs pyarrow") as info:
        _run(tmp_path, "records_parquet = true")
    assert info.value.field == "records_parquet"
    assert not (tmp_path / "out").exists()  # refused before the run directory exists
