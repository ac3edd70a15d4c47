"""A re-run served from the cache (`assay.runs.stages._cache_first`) in the judge stage:
every cached judgment is recorded before the workers start, none is handed to a worker
or sent, and the records are those of the first run (order aside). The items stage's
version is in `test_items_run.py`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.core.records import JudgmentRecord
from assay.core.rundir import JUDGMENTS_FILE, iter_jsonl
from assay.runs import RunOptions, run_spec
from assay.runs.stages import _judge
from assay.testing import FakeOpenAIServer, reply

KEY_ENV = "CACHE_FIRST_KEY"


def _spec(tmp: Path, base_url: str) -> Path:
    spec = tmp / "spec.toml"
    spec.write_text(
        f"""
name = "cache-first"
bootstrap = 0
[[datasets]]
path = "builtin:forcebench-demo"
[[judges]]
models = ["openai/cache-first"]
prompts = ["generic-support@1", "force-aware@1"]
api_base = "{base_url}"
api_key_env = "{KEY_ENV}"
max_attempts = 1
[[baselines]]
name = "token-overlap"
""",
        encoding="utf-8",
    )
    return spec


def _answer(body: dict[str, Any]) -> Any:
    text = body["messages"][-1]["content"]
    if "force" in text.lower() and "gap" in text.lower():
        return reply(json.dumps({"label": "force_calibrated", "reasoning": "r"}))
    return reply(json.dumps({"label": "fully_supported", "reasoning": "r"}))


def test_a_cached_rerun_records_every_llm_judgment_before_the_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-cache-first-123456")
    with FakeOpenAIServer(responder=_answer) as srv:
        spec, cache = _spec(tmp_path, srv.base_url), str(tmp_path / "cache")
        first = run_spec(spec, RunOptions(output_dir=str(tmp_path / "a"), cache_dir=cache))
        sent = len(srv.requests)
        assert first.status == "complete" and sent > 0
        handled: list[str] = []
        real_judge = _judge.JudgeStage.judge

        async def counted(self: Any, work: Any, prepared: Any = None) -> Any:
            handled.append(work.judge_id)
            return await real_judge(self, work, prepared)

        monkeypatch.setattr(_judge.JudgeStage, "judge", counted)
        again = run_spec(spec, RunOptions(output_dir=str(tmp_path / "b"), cache_dir=cache))
        assert again.status == "complete" and len(srv.requests) == sent
    assert set(handled) == {"baseline:token-overlap"}  # no LLM judgment reached a worker

    def records(run: str) -> dict[Any, dict[str, Any]]:
        drop = {"latency_s", "recorded_at", "cache_hit", "attempts"}
        path = tmp_path / run / JUDGMENTS_FILE
        return {r.key: r.model_dump(exclude=drop) for r in iter_jsonl(path, JudgmentRecord)}

    assert records("b") == records("a")
    llm = [r for r in iter_jsonl(tmp_path / "b" / JUDGMENTS_FILE, JudgmentRecord) if r.model]
    assert llm and all(r.cache_hit and r.attempts == 0 for r in llm)
