"""Spending caps in batch mode, on the loopback server's files and batches endpoints: a
batch is capped at batch prices (gpt-4o-mini's are half the online ones in litellm's
cost map), requests over the cap are left out of the batch, unsent and unrecorded, and
a resume with a higher cap batches the rest, each judgment once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke
from test_openai_transport import write_mini_pairs

from assay.runs import Runner, RunOptions, iter_records, load_spec, read_json
from assay.testing import FakeOpenAIServer

PLANNED = 16  # 4 pairs x 2 members x 2 prompts


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_BUDGET_BATCH_KEY", "sk-budget-batch-0123456789")


def _spec(tmp: Path, base_url: str, mode: str) -> Path:
    write_mini_pairs(tmp)
    spec = tmp / f"{mode}.toml"
    spec.write_text(
        f"""
name = "budget-batch"
bootstrap = 0
[[datasets]]
name = "mini"
path = "pairs.jsonl"
[defaults]
max_tokens = 200
max_attempts = 2
timeout_s = 5
transport = "openai"
[[judges]]
models = ["openai/gpt-4o-mini"]
prompts = ["generic-support@1", "force-aware@1"]
api_base = "{base_url}"
api_key_env = "ASSAY_BUDGET_BATCH_KEY"
mode = "{mode}"
batch_poll_s = 0.02
""",
        encoding="utf-8",
    )
    return spec


def _worst_case(spec: Path) -> float:
    code, out, err = invoke(["run", str(spec), "--dry-run", "-f", "json", "--max-cost-usd", "1"])
    assert code == 0, err
    worst: float = json.loads(out)["budget"]["worst_case_usd"]
    return worst


def _run(spec: Path, out: Path, cap: float) -> Any:
    cache = out.parent / f"cache-{out.name}"
    options = RunOptions(
        output_dir=str(out), progress=False, cache_dir=str(cache), max_cost_usd=cap
    )
    return Runner(load_spec(spec), options).run()


def _records(out: Path) -> list[Any]:
    return list(iter_records(out / "judgments.jsonl"))


def test_a_batch_is_capped_at_batch_prices_and_resumed_with_more(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        batch = _spec(tmp_path, server.base_url, "batch")
        online, worst = _worst_case(_spec(tmp_path, server.base_url, "online")), _worst_case(batch)
        assert worst == pytest.approx(online / 2)  # batch prices: half
        full = _run(batch, tmp_path / "full", worst * 1.01)  # under the online worst case
        assert full.status == "complete" and len(server.batches.bodies) == PLANNED
        short = _run(batch, tmp_path / "short", worst * 0.5)
        in_batch = len(server.batches.bodies) - PLANNED
        kept = _records(tmp_path / "short")
        spent = read_json(tmp_path / "short" / "manifest.json")["budget"]
        rest = _run(batch, tmp_path / "short", worst * 2)
        chat_requests = server.stats.total
    assert short.status == "budget_exhausted" and 0 < in_batch < PLANNED
    assert len(kept) == in_batch and all(r.status.value != "api_error" for r in kept)
    assert spent["spent_usd"] <= worst * 0.5 and spent["requests"] == in_batch
    assert spent["spent_usd"] == pytest.approx(sum(r.usage.cost_usd for r in kept))
    assert rest.status == "complete" and chat_requests == 0  # all of it through batches
    assert len(server.batches.bodies) == 2 * PLANNED  # the rest batched once, nothing twice
    final = _records(tmp_path / "short")
    assert len({(r.judge_id, r.pair_id, r.member) for r in final}) == len(final) == PLANNED
