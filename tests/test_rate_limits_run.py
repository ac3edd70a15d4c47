"""Rate limits through `assay run`: the spec's settings reach every model, and the
manifest records, per endpoint, the limits in force, the 429s and the lowest
concurrency reached (loopback server; a window of 10 requests a second)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.runs import Runner, RunOptions, iter_records, load_spec, read_json
from assay.testing import FakeOpenAIServer, RateWindows

ROOT = Path(__file__).resolve().parents[1]


def _spec(tmp: Path, base_url: str, transport: str, settings: str) -> Path:
    pairs = (ROOT / "assay" / "data" / "forcebench_demo.jsonl").read_text(encoding="utf-8")
    (tmp / "pairs.jsonl").write_text("".join(pairs.splitlines(True)[:6]), encoding="utf-8")
    spec = tmp / f"{transport}.toml"
    spec.write_text(
        f"""
name = "rates"
bootstrap = 0
[[datasets]]
name = "mini"
path = "pairs.jsonl"
[defaults]
timeout_s = 5
transport = "{transport}"
{settings}
[[judges]]
models = ["openai/gpt-4o-mini"]
prompts = ["generic-support@1", "force-aware@1"]
api_base = "{base_url}"
""",
        encoding="utf-8",
    )
    return spec


def _run(spec: Path, out: Path) -> dict[str, object]:
    options = RunOptions(output_dir=str(out), progress=False, use_cache=False)
    assert Runner(load_spec(spec), options).run().status == "complete"
    records = list(iter_records(out / "judgments.jsonl"))
    assert len(records) == 24  # every request answered (force-aware@1 rejects the
    assert {r.status.value for r in records} == {"ok", "parse_error"}  # fake's label)
    [entry] = read_json(out / "manifest.json")["rate_limits"]
    assert isinstance(entry, dict)
    return entry


@pytest.mark.parametrize("transport", ["openai", "litellm"])
def test_manifest_records_429s_and_the_lowest_concurrency(tmp_path: Path, transport: str) -> None:
    with FakeOpenAIServer(rate_limits=RateWindows(rpm=10, period_s=1.0)) as server:
        base = server.base_url
        entry = _run(_spec(tmp_path, base, transport, ""), tmp_path / "run")
        refused = server.stats.by_status.get(429, 0)
    assert refused > 0  # 24 requests at once into a window of 10
    assert entry == {
        "endpoint": base,
        "model": "openai/gpt-4o-mini",
        "rpm": None,
        "tpm": None,
        "adaptive_concurrency": True,
        "max_concurrency": 16,
        "rate_limited": refused,
        "lowest_concurrency": entry["lowest_concurrency"],
    }
    assert isinstance(entry["lowest_concurrency"], int) and entry["lowest_concurrency"] < 16


def test_manifest_records_the_limits_in_force(tmp_path: Path) -> None:
    settings = "rpm = 600\ntpm = 200000\nadaptive_concurrency = false\nmax_concurrency = 4"
    with FakeOpenAIServer(rate_limits=RateWindows(rpm=600, tpm=200_000)) as server:
        entry = _run(_spec(tmp_path, server.base_url, "openai", settings), tmp_path / "run")
        assert server.stats.by_status.get(429, 0) == 0
    assert (entry["rpm"], entry["tpm"], entry["adaptive_concurrency"]) == (600, 200_000, False)
    assert entry["rate_limited"] == 0 and entry["lowest_concurrency"] == 4
