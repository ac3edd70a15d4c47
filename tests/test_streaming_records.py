"""A run keeps each key's status and per-judge counters, not records, and its metrics
stream the judgments file: the manifest's counters and the metrics (bootstrap CIs
included) are exactly what the whole records give, on the demo and on a generated file
with retried keys."""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections import Counter
from pathlib import Path
from typing import Any

from assay.core.outcomes import Status
from assay.core.records import ItemJudgmentRecord, JudgmentRecord
from assay.core.rundir import latest, latest_records
from assay.metrics import force_metrics
from assay.runs import Runner, RunOptions, load_spec, read_json
from assay.runs.rebuild._metrics import compute_metrics
from assay.runs.store._counters import counters_of
from assay.runs.store._manifest import judges_section
from assay.runs.store._store import TallyLog
from assay.testing import FakeOpenAIServer, reply

LABELS = ["fully_supported", "partially_supported", "not_supported"]


def _varied(body: dict[str, Any]) -> Any:
    """A label that depends on the request, so scores differ and CIs are not degenerate."""
    text = json.dumps(body["messages"])
    pick = int(hashlib.sha256(text.encode()).hexdigest(), 16) % 3
    return reply(json.dumps({"label": LABELS[pick], "confidence": 0.8, "rationale": "r"}))


def _demo_run(tmp: Path, base_url: str) -> Path:
    spec = tmp / "demo.toml"
    spec.write_text(
        f"""
name = "demo"
bootstrap = 200
[[datasets]]
path = "builtin:forcebench-demo"
[[baselines]]
name = "token-overlap"
[[judges]]
models = ["openai/fake-judge"]
prompts = ["generic-support@1"]
api_base = "{base_url}"
""",
        encoding="utf-8",
    )
    out = tmp / "run"
    options = RunOptions(output_dir=str(out), use_cache=False, progress=False)
    assert Runner(load_spec(spec), options).run().status == "complete"
    return out


def _whole_records_metrics(path: Path, n_boot: int, seed: int) -> dict[str, Any]:
    """The implementation before streaming: every latest record as an object."""
    records = list(latest_records(path).values())
    return force_metrics(records, n_boot=n_boot, seed=seed).model_dump(mode="json")


def test_demo_run_metrics_and_counters_match_the_whole_records(tmp_path: Path) -> None:
    with FakeOpenAIServer(responder=_varied) as srv:
        out = _demo_run(tmp_path, srv.base_url)
    judgments = out / "judgments.jsonl"
    metrics = read_json(out / "metrics.json")["forcebench"]
    assert metrics == _whole_records_metrics(judgments, n_boot=200, seed=0)
    assert any(r["mvr_lo"] != r["mvr_hi"] for r in metrics["rows"])  # real CIs were drawn

    manifest = read_json(out / "manifest.json")
    records = list(latest_records(judgments).values())
    runner = Runner(load_spec(tmp_path / "demo.toml"), RunOptions(output_dir=str(out)))
    planned = Counter(w.judge_id for w in runner.plan())
    from_records = judges_section(runner.judges, counters_of(records), planned)
    assert [j["stats"] for j in manifest["judges"]] == [j["stats"] for j in from_records]
    assert any(j["stats"]["tokens"]["total"] > 0 for j in manifest["judges"])  # LLM usage


def _generated(path: Path, n_pairs: int, seed: int) -> None:
    """Three judges over two datasets; some keys recorded twice (an error, then redone)."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n_pairs):
            for member in ("calibrated", "raised"):
                for judge in ("j-a", "j-b", "j-c"):
                    base = {
                        "dataset": f"d{i % 2}",
                        "pair_id": f"p{i}",
                        "member": member,
                        "judge_id": judge,
                        "axis": ["scope", "numeric", None][i % 3],
                        "severity": [1, 2, 3, None][i % 4],
                        "model": f"m-{judge}",
                        "usage": {"prompt_tokens": rng.randint(1, 99), "total_tokens": 120},
                    }
                    if rng.random() < 0.1:
                        error = {**base, "status": "api_error", "error": "503"}
                        fh.write(JudgmentRecord.model_validate(error).model_dump_json() + "\n")
                    status = "ok" if rng.random() < 0.95 else "parse_error"
                    score = round(rng.random(), 3) if status == "ok" else None
                    row = {**base, "status": status, "score": score, "latency_s": rng.random()}
                    fh.write(JudgmentRecord.model_validate(row).model_dump_json() + "\n")


def test_generated_file_metrics_equal_the_whole_records_implementation(tmp_path: Path) -> None:
    _generated(tmp_path / "judgments.jsonl", n_pairs=400, seed=7)
    for n_boot, seed in ((300, 0), (150, 11)):
        streamed = compute_metrics(tmp_path, n_boot=n_boot, seed=seed)["forcebench"]
        whole = _whole_records_metrics(tmp_path / "judgments.jsonl", n_boot=n_boot, seed=seed)
        assert streamed == whole
        assert {r["dataset"] for r in streamed["rows"]} == {"all", "d0", "d1"}


def _reference_stats(records: list[Any], planned: int) -> dict[str, Any]:
    """The manifest's counters by plain sums over the latest records (the definition)."""
    sent = [r for r in records if not r.cache_hit]
    costs = [r.usage.cost_usd for r in sent if r.usage.cost_usd is not None]
    statuses = Counter(r.status.value for r in records)
    return {
        "planned": planned,
        "recorded": len(records),
        "requests_sent": sum(r.attempts for r in sent),
        "cache_hits": len(records) - len(sent),
        "retries": sum(max(r.attempts - 1, 0) for r in sent),
        "by_status": {s.value: statuses.get(s.value, 0) for s in Status},
        "failures": sum(v for k, v in statuses.items() if k != "ok"),
        "tokens": {
            "prompt": sum(r.usage.prompt_tokens for r in records),
            "completion": sum(r.usage.completion_tokens for r in records),
            "total": sum(r.usage.total_tokens for r in records),
            "prompt_uncached": sum(r.usage.prompt_tokens for r in sent),
            "completion_uncached": sum(r.usage.completion_tokens for r in sent),
        },
        "cost_usd": round(math.fsum(costs), 6) if costs else None,
        "model_returned": sorted({r.model_returned for r in records if r.model_returned}),
        "mean_latency_s": round(math.fsum(r.latency_s for r in records) / len(records), 6)
        if records
        else None,
    }


def _by_judge(records: Any) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for r in records:
        out.setdefault(r.judge_id, []).append(r)
    return out


def test_a_log_keeps_statuses_and_counters_equal_to_the_records(tmp_path: Path) -> None:
    path = tmp_path / "judgments.jsonl"
    _generated(path, n_pairs=50, seed=3)  # some keys recorded twice: the later line wins
    log: TallyLog[JudgmentRecord] = TallyLog(path, JudgmentRecord)
    statuses = log.load()
    records = latest_records(path)
    assert statuses == {k: r.status for k, r in records.items()}
    want = {j: _reference_stats(rs, 100) for j, rs in _by_judge(records.values()).items()}
    assert {j: c.stats(100) for j, c in log.counters().items()} == want


def test_forgotten_and_redone_keys_count_once_with_their_new_record(tmp_path: Path) -> None:
    path = tmp_path / "judgments.jsonl"
    _generated(path, n_pairs=20, seed=5)
    log: TallyLog[JudgmentRecord] = TallyLog(path, JudgmentRecord)
    log.load()
    redo = [k for k, status in log.records.items() if status is not Status.OK]
    assert redo
    for key in redo:
        log.forget(key)
    kept = [r for k, r in latest_records(path).items() if k not in redo]
    want = {j: _reference_stats(rs, 0) for j, rs in _by_judge(kept).items()}
    assert {j: c.stats(0) for j, c in log.counters().items()} == want
    log.open()
    again = []
    for dataset, pair_id, member, judge_id in redo:
        row = {"dataset": dataset, "pair_id": pair_id, "member": member, "judge_id": judge_id}
        row |= {"status": "ok", "score": 0.5, "latency_s": 0.25, "attempts": 2}
        again.append(JudgmentRecord.model_validate(row))
        log.append(again[-1])
    want = {j: _reference_stats(rs, 0) for j, rs in _by_judge([*kept, *again]).items()}
    assert {j: c.stats(0) for j, c in log.counters().items()} == want
    log.close()
    assert {k: latest_records(path)[k].status for k in redo} == {k: Status.OK for k in redo}


def test_item_judgments_are_tallied_like_judgments(tmp_path: Path) -> None:
    path = tmp_path / "item_judgments.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for i in range(30):
            row = {"dataset": "d", "item_id": f"i{i}", "judge_id": "j", "status": "ok"}
            row["usage"] = {"prompt_tokens": i, "cost_usd": 0.001 * i}
            fh.write(ItemJudgmentRecord.model_validate(row).model_dump_json() + "\n")
    log = TallyLog(path, ItemJudgmentRecord)
    statuses = log.load()
    records = latest(path, ItemJudgmentRecord)
    assert statuses == {k: r.status for k, r in records.items()}
    assert log.counters()["j"].stats(30) == _reference_stats(list(records.values()), 30)


def test_the_response_cache_does_not_map_its_file_into_memory(tmp_path: Path) -> None:
    """diskcache's defaults map 64 MiB of the file and keep 32 MiB of pages: memory that
    grew with a long run's cache."""
    from assay.models._cache import ResponseCache

    cache = ResponseCache(tmp_path / "cache")
    try:
        assert cache._cache._sql("PRAGMA mmap_size").fetchone() == (0,)
        assert cache._cache._sql("PRAGMA cache_size").fetchone() == (1024,)
    finally:
        cache.close()


def test_a_session_holds_nothing_per_judgment_it_records(tmp_path: Path) -> None:
    source = tmp_path / "source.jsonl"
    _generated(source, n_pairs=40, seed=9)
    records = list(latest_records(source).values())
    log: TallyLog[JudgmentRecord] = TallyLog(tmp_path / "judgments.jsonl", JudgmentRecord)
    log.load()
    log.open()
    for record in records:
        log.append(record)
    assert log.records == {} and log.written == len(records)  # counters only
    want = {j: _reference_stats(rs, 0) for j, rs in _by_judge(records).items()}
    assert {j: c.stats(0) for j, c in log.counters().items()} == want
    failing = {Status.PARSE_ERROR, Status.API_ERROR}
    assert log.failed(failing) == sum(r.status in failing for r in records)
    log.close()
    again: TallyLog[JudgmentRecord] = TallyLog(tmp_path / "judgments.jsonl", JudgmentRecord)
    assert again.load() == {k: r.status for k, r in latest_records(source).items()}
