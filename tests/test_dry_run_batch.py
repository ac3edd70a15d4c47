"""`assay run --dry-run` prices a `mode = "batch"` judge at the provider's batch prices,
the prices its records will carry, not the online ones."""

from __future__ import annotations

from pathlib import Path

import litellm
import pytest
from test_batch_mode import _spec

from assay.runs import RunOptions, load_spec
from assay.runs.preview._dryrun import PlanRow, plan_run


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_BATCH_TEST_KEY", "sk-dry-run-batch")


def _rows(spec: Path, tmp: Path) -> dict[str, PlanRow]:
    options = RunOptions(output_dir=str(tmp / "out"), cache_dir=str(tmp / "cache"))
    plan = plan_run(load_spec(spec), options)
    return {row.id: row for row in plan.rows if row.stage == "judge"}


def test_batch_judges_are_priced_at_batch_prices(tmp_path: Path) -> None:
    base = "http://127.0.0.1:9/v1"  # a dry run sends nothing
    online = _rows(_spec(tmp_path, base, mode="online"), tmp_path)
    batch = _rows(_spec(tmp_path, base, mode="batch"), tmp_path)
    info = litellm.get_model_info(model="openai/gpt-4o-mini")
    for judge_id, row in batch.items():
        same = online[judge_id]
        assert row.input_tokens == same.input_tokens > 0
        cap = row.output_tokens_max
        low = row.input_tokens * info["input_cost_per_token_batches"]
        assert row.cost_usd_min == pytest.approx(low, rel=1e-12)
        high = low + cap * info["output_cost_per_token_batches"]
        assert row.cost_usd_max == pytest.approx(high, rel=1e-12)
        assert row.cost_usd_min < same.cost_usd_min
        assert "batch prices" in (row.note or "")
        assert "batch" not in (same.note or "")


def test_a_model_without_batch_prices_is_priced_online_with_a_note(tmp_path: Path) -> None:
    base = "http://127.0.0.1:9/v1"
    rows = _rows(_spec(tmp_path, base, mode="batch", model="local-llama"), tmp_path)
    assert rows
    for row in rows.values():
        assert "has no batch price" in (row.note or "")
