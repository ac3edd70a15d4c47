"""`assay run SPEC --dry-run`: the runner's own plan, priced, with nothing sent or written."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke_as_process

from assay.runs import RunOptions, load_spec, run_spec
from assay.runs.preview._dryrun import DryRunPlan, PlanRow, plan_run
from assay.testing import FakeOpenAIServer, reply

PRICED = "openai/gpt-4o-mini"  # in litellm's bundled cost map
UNPRICED = "openai/h7-unpriced-judge"  # in no cost map
KEY_ENV = "H7_DRY_RUN_KEY"
MAX_TOKENS = 100


def _spec(tmp: Path, base_url: str, *, decomposer: str = "llm") -> Path:
    dec = (
        f'kind = "llm"\nmodel = "{UNPRICED}"\napi_base = "{base_url}"\napi_key_env = "{KEY_ENV}"'
        if decomposer == "llm"
        else f'kind = "{decomposer}"'
    )
    path = tmp / f"dry-{decomposer}.toml"
    path.write_text(
        f"""
name = "dry"
bootstrap = 200
# the fake server answers a verdict to the decomposer too (parse_error): this test is
# about what a dry run counts, not about the decompositions, so they may all fail
[failure]
max_failed_fraction = 1.0
[[datasets]]
name = "demo"
path = "builtin:forcebench-demo"
[defaults]
max_tokens = {MAX_TOKENS}
max_attempts = 1
timeout_s = 5
[[judges]]
models = ["{PRICED}", "{UNPRICED}"]
prompts = ["generic-support@1"]
api_base = "{base_url}"
api_key_env = "{KEY_ENV}"
[[baselines]]
name = "token-overlap"
[factuality]
datasets = [{{ name = "answers", path = "builtin:factuality-demo" }}]
[factuality.decomposer]
{dec}
[[factuality.verifiers]]
kind = "overlap"
[[factuality.verifiers]]
kind = "context"
model = "{PRICED}"
api_base = "{base_url}"
api_key_env = "{KEY_ENV}"
""",
        encoding="utf-8",
    )
    return path


def _answer(body: dict[str, Any]) -> Any:
    return reply(json.dumps({"label": "fully_supported", "confidence": 0.9, "rationale": "r"}))


@pytest.fixture
def fake() -> Any:
    with FakeOpenAIServer(responder=_answer) as srv:
        yield srv


def _cli(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != KEY_ENV}  # no key: dry runs need none
    env.update(NO_COLOR="1", COLUMNS="200", PYTHONIOENCODING="utf-8")
    # in-process (`main()`, as the console script): the same answer without a second's start-up
    return invoke_as_process([str(a) for a in args], env=env, cwd=cwd)


def _rows(plan: DryRunPlan) -> dict[str, PlanRow]:
    return {row.id: row for row in plan.rows}


def _plan(spec: Path, out: Path, **options: Any) -> dict[str, PlanRow]:
    return _rows(plan_run(load_spec(spec), RunOptions(output_dir=str(out), **options)))


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def _sentences() -> int:
    from assay.datasets import load_answers
    from assay.decomposers._sentences import split_sentences

    answers = load_answers("builtin:factuality-demo")
    return sum(len(split_sentences(a.answer)) for a in answers.items)


def test_cold_plan_sends_nothing_needs_no_key_and_prices(
    fake: FakeOpenAIServer, tmp_path: Path
) -> None:
    spec, out = _spec(tmp_path, fake.base_url), tmp_path / "runs" / "cold"
    proc = _cli("run", spec, "--output-dir", out, "--dry-run", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert fake.stats.total == 0 and not out.exists() and not (tmp_path / "runs").exists()
    plan = DryRunPlan.model_validate_json(proc.stdout)
    rows = _rows(plan)
    priced, unpriced = rows[f"{PRICED}::generic-support@1"], rows[f"{UNPRICED}::generic-support@1"]
    for row in (priced, unpriced):  # 60 pairs x 2 members, nothing recorded or cached yet
        assert (row.items, row.requests, row.recorded, row.cached, row.to_send) == (
            120,
            120,
            0,
            0,
            120,
        )
        assert row.input_tokens and row.output_tokens_max == 120 * MAX_TOKENS
    import litellm

    low = sum(litellm.cost_per_token(model=PRICED, prompt_tokens=priced.input_tokens))
    high = sum(
        litellm.cost_per_token(
            model=PRICED,
            prompt_tokens=priced.input_tokens,
            completion_tokens=priced.output_tokens_max,
        )
    )
    assert priced.cost_usd_min == pytest.approx(low) and priced.cost_usd_max == pytest.approx(high)
    assert 0 < low < high
    assert unpriced.cost_usd_min is None and unpriced.cost_usd_max is None
    assert rows["baseline:token-overlap"].requests == 0
    decomposer = rows[f"{UNPRICED}::decompose-conditional@1"]
    assert decomposer.items == decomposer.to_send == _sentences()
    verifier = rows[f"context:{PRICED}::verify-context@1"]
    assert verifier.items is None and "after decomposition" in (verifier.note or "")
    assert any(KEY_ENV in note for note in plan.notes)  # a note, not an error


def test_table_is_plain_text_with_unknown_price(fake: FakeOpenAIServer, tmp_path: Path) -> None:
    spec = _spec(tmp_path, fake.base_url)
    proc = _cli("run", spec, "--output-dir", tmp_path / "out", "--dry-run", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "nothing sent" in lines[0]
    unpriced = next(line for line in lines if line.startswith(f"judge       {UNPRICED}"))
    assert unpriced.split()[-1] == "unknown"
    assert "after decomposition" in proc.stdout
    assert not set("│┃━─╭") & set(proc.stdout)  # not a TTY: no box drawing
    assert fake.stats.total == 0 and not (tmp_path / "out").exists()


def test_format_needs_dry_run(tmp_path: Path) -> None:
    proc = _cli("run", tmp_path / "x.toml", "--format", "json", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ") and len(proc.stderr.strip().splitlines()) == 1


def test_after_a_real_run_everything_is_cached_or_recorded(
    fake: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import litellm

    spec = _spec(tmp_path, fake.base_url)
    cold = _plan(spec, tmp_path / "first")
    monkeypatch.setenv(KEY_ENV, "sk-test")
    outcome = run_spec(spec, RunOptions(output_dir=str(tmp_path / "first"), progress=False))
    assert outcome.status == "complete"
    sent = fake.stats.total
    # the plan rendered what the run sent: the same tokens over the bodies the server got
    # (the priced judge's requests are the ones with a JSON-schema response_format)
    bodies = [b for b in fake.requests if b["model"] == "gpt-4o-mini" and "response_format" in b]
    assert len(bodies) == 120
    counted = sum(litellm.token_counter(model=PRICED, messages=b["messages"]) for b in bodies)
    assert counted == cold[f"{PRICED}::generic-support@1"].input_tokens

    before = _snapshot(tmp_path / "first")
    fresh = _plan(spec, tmp_path / "second")  # a new run dir: all served by the cache
    for judge in (f"{PRICED}::generic-support@1", f"{UNPRICED}::generic-support@1"):
        row = fresh[judge]
        assert (row.recorded, row.cached, row.to_send, row.input_tokens) == (0, 120, 0, 0)
        assert row.cost_usd_min == row.cost_usd_max == 0.0
    decomposer = fresh[f"{UNPRICED}::decompose-conditional@1"]
    assert decomposer.cached == _sentences() and decomposer.to_send == 0

    resumed = _plan(spec, tmp_path / "first")  # the same run dir: all recorded
    row = resumed[f"{PRICED}::generic-support@1"]
    assert (row.recorded, row.cached, row.to_send) == (120, 0, 0)
    claims = len((tmp_path / "first" / "claims.jsonl").read_text().splitlines())
    verifier = resumed[f"context:{PRICED}::verify-context@1"]  # claims now on disk
    assert (verifier.items, verifier.recorded, verifier.cached, verifier.to_send) == (
        claims,
        claims,
        0,
        0,
    )

    uncached = _plan(spec, tmp_path / "second", use_cache=False)
    assert uncached[f"{PRICED}::generic-support@1"].to_send == 120
    assert fake.stats.total == sent  # no dry run sent anything
    assert _snapshot(tmp_path / "first") == before and not (tmp_path / "second").exists()


def test_sentence_decomposer_claims_are_known_before_the_run(
    fake: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import litellm

    spec = _spec(tmp_path, fake.base_url, decomposer="sentence")
    cold = _plan(spec, tmp_path / "run")
    monkeypatch.setenv(KEY_ENV, "sk-test")
    run_spec(spec, RunOptions(output_dir=str(tmp_path / "run"), progress=False))
    claims = len((tmp_path / "run" / "claims.jsonl").read_text().splitlines())
    assert cold["baseline:overlap"].items == claims and cold["baseline:overlap"].requests == 0
    verifier = cold[f"context:{PRICED}::verify-context@1"]
    # the verifier's requests are the priced model's bodies without a response schema
    sent = [b for b in fake.requests if b["model"] == "gpt-4o-mini" and "response_format" not in b]
    assert verifier.items == claims and verifier.recorded == 0
    assert verifier.requests == verifier.to_send == len(sent) > 0
    tokens = sum(litellm.token_counter(model=PRICED, messages=b["messages"]) for b in sent)
    assert verifier.input_tokens == tokens
    again = _plan(spec, tmp_path / "fresh")[f"context:{PRICED}::verify-context@1"]
    assert (again.cached, again.to_send, again.cost_usd_max) == (len(sent), 0, 0.0)
