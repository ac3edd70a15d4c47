"""A run whose hosted judges all use the lean transport never imports litellm (~130 MB
and ~2 s): prices, `structured_output = "auto"` and the missing-key check come from
litellm's bundled cost map, read directly, and agree with what the litellm path says."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from assay.errors import ModelConfigError
from assay.models import LiteLLMTransport, ModelConfig
from assay.models._openai_http import OpenAIHTTPTransport
from assay.testing import FakeOpenAIServer

DEMO = Path(__file__).resolve().parents[1] / "assay" / "data" / "forcebench_demo.jsonl"

RUN_AND_REPORT = """
import json, sys
from assay.runs import Runner, RunOptions, load_spec
outcome = Runner(load_spec(sys.argv[1]), RunOptions(output_dir=sys.argv[2],
                 cache_dir=sys.argv[3], progress=False)).run()
print(json.dumps({"status": outcome.status, "litellm": "litellm" in sys.modules}))
"""


def _lean_spec(tmp: Path, base_url: str) -> Path:
    """Four demo pairs, two prompts of one priced model, all on the lean transport."""
    pairs = DEMO.read_text(encoding="utf-8").splitlines(True)[:4]
    (tmp / "pairs.jsonl").write_text("".join(pairs), encoding="utf-8")
    spec = tmp / "lean.toml"
    spec.write_text(
        f"""
name = "lean"
bootstrap = 0
[[datasets]]
name = "mini"
path = "pairs.jsonl"
[[judges]]
models = ["openai/gpt-4o-mini"]
prompts = ["generic-support@1", "force-aware@1"]
api_base = "{base_url}"
transport = "openai"
structured_output = "auto"
max_attempts = 2
""",
        encoding="utf-8",
    )
    return spec


def test_a_lean_run_records_prices_without_importing_litellm(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        spec = _lean_spec(tmp_path, server.base_url)
        out, cache = tmp_path / "out", tmp_path / "cache"
        done = subprocess.run(
            [sys.executable, "-c", RUN_AND_REPORT, str(spec), str(out), str(cache)],
            capture_output=True,
            text=True,
            check=True,
        )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"status": "complete", "litellm": False}
    records = [json.loads(line) for line in (out / "judgments.jsonl").read_text().splitlines()]
    assert len(records) == 16
    assert all(r["usage"]["cost_usd"] and r["usage"]["cost_usd"] > 0 for r in records)


@pytest.mark.parametrize(
    "model", ["openai/gpt-4o-mini", "openai/gpt-3.5-turbo", "openai/o1", "openai/local-model"]
)
def test_structured_auto_resolves_as_the_litellm_path_does(model: str) -> None:
    config = ModelConfig(model=model, api_base="http://127.0.0.1:9/v1", structured_output="auto")
    lean = OpenAIHTTPTransport(config.model_copy(update={"transport": "openai"}))
    assert lean.structured_mode() == LiteLLMTransport(config).structured_mode()


def test_missing_openai_key_is_refused_in_the_litellm_paths_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = ModelConfig(model="openai/gpt-4o-mini")
    messages = []
    for transport in (LiteLLMTransport(config), OpenAIHTTPTransport(config)):
        with pytest.raises(ModelConfigError) as caught:
            transport.preflight()
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
    assert "OPENAI_API_KEY" in messages[0]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    OpenAIHTTPTransport(config).preflight()  # a key: nothing to refuse
