"""Spending caps on the loopback server (real HTTP on 127.0.0.1): a run's max_cost_usd
stops it `budget_exhausted` with nothing lost and nothing recorded as an error, a resume
with a higher cap sends each remaining judgment once and counts the first session's
spend; a judge's own cap; max_requests; a model with no price refuses a cost cap before
any request; the CLI's closing line resumes the run."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke
from test_openai_transport import write_mini_pairs

from assay.models._budget import request_bound
from assay.runs import Runner, RunOptions, iter_records, load_spec, read_json
from assay.testing import FakeOpenAIServer

PLANNED = 16  # 4 pairs x 2 members x 2 prompts
PRICE = 1e-6  # USD per token, both sides: given in the spec (the model has no map price)
MAX_TOKENS = 100


def write_spec(
    tmp: Path,
    base_url: str,
    *,
    top: str = "",
    judge_extra: str = "",
    prices: bool = True,
    model: str = "openai/fake-judge",
    concurrency: int = 4,
    transport: str = "openai",
) -> Path:
    """Two judges (one per prompt) on the mini pairs; `top` adds top-level keys."""
    write_mini_pairs(tmp)
    priced = f"input_cost_per_token = {PRICE}\noutput_cost_per_token = {PRICE}\n" if prices else ""
    spec = tmp / "spec.toml"
    spec.write_text(
        f"""{top}
name = "budget-test"
bootstrap = 0
[[datasets]]
name = "mini"
path = "pairs.jsonl"
[defaults]
max_tokens = {MAX_TOKENS}
max_concurrency = {concurrency}
max_attempts = 2
timeout_s = 5
transport = "{transport}"
{priced}
[[judges]]
models = ["{model}"]
prompts = ["generic-support@1"]
api_base = "{base_url}"
[[judges]]
models = ["{model}"]
prompts = ["force-aware@1"]
api_base = "{base_url}"
{judge_extra}
""",
        encoding="utf-8",
    )
    return spec


def run(spec: Path, tmp: Path, **options: Any) -> Any:
    opts = RunOptions(
        output_dir=str(tmp / "out"), progress=False, cache_dir=str(tmp / "cache"), **options
    )
    return Runner(load_spec(spec), opts).run()


def records(tmp: Path) -> list[Any]:
    return list(iter_records(tmp / "out" / "judgments.jsonl"))


def budget(tmp: Path) -> dict[str, Any]:
    section: dict[str, Any] = read_json(tmp / "out" / "manifest.json")["budget"]
    return section


def worst_cases(spec: Path, tmp: Path) -> list[float]:
    """Each planned request's worst case, from the run's own rendered requests."""
    runner = Runner(load_spec(spec), RunOptions(output_dir=str(tmp / "plan"), progress=False))
    stage = runner.judge_stage
    out = []
    for work, pair in stage.works_with_pairs(lambda key: True):
        judge: Any = stage.by_id[work.judge_id]
        from assay.runs.stages._judge import item_of

        prompt, cap = request_bound(judge.request_for(item_of(pair, work)))
        out.append((prompt + cap) * PRICE)
    return out


@pytest.mark.parametrize("transport", ["openai", "litellm"])
def test_a_cost_cap_stops_the_run_and_a_resume_with_more_finishes_it(
    tmp_path: Path, transport: str
) -> None:
    with FakeOpenAIServer() as server:
        spec = write_spec(tmp_path, server.base_url, transport=transport)
        worst = worst_cases(spec, tmp_path)
        cap = sum(sorted(worst)[:6])  # room for about six requests' worst case
        first = run(spec, tmp_path, max_cost_usd=cap)
        sent_first = server.stats.total
        kept = records(tmp_path)
        spent = budget(tmp_path)
        second = run(spec, tmp_path, max_cost_usd=1.0)
        sent_total = server.stats.total
    assert first.status == "budget_exhausted" and "max_cost_usd" in (first.message or "")
    assert 0 < len(kept) < PLANNED and len(kept) == sent_first  # every answer sent is kept
    assert not [r for r in kept if r.status.value == "api_error"]
    assert spent["spent_usd"] <= cap and spent["requests"] == sent_first
    assert spent["stopped"] and spent["max_cost_usd"] == cap
    assert spent["spent_usd"] == pytest.approx(sum(r.usage.cost_usd for r in kept))
    assert second.status == "complete" and sent_total == PLANNED  # none sent twice
    final = records(tmp_path)
    keys = {(r.judge_id, r.pair_id, r.member) for r in final}
    assert len(final) == PLANNED and len(keys) == PLANNED
    after = budget(tmp_path)  # the resumed run counted the first session's spend
    assert after["requests"] == PLANNED and after["stopped"] is None
    assert after["spent_usd"] == pytest.approx(sum(r.usage.cost_usd for r in final))
    manifest = read_json(tmp_path / "out" / "manifest.json")
    assert [s["status"] for s in manifest["sessions"]] == ["budget_exhausted", "complete"]


def test_a_judges_own_cap_stops_only_that_judge(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        spec = write_spec(tmp_path, server.base_url, judge_extra="max_cost_usd = 0.0012")
        outcome = run(spec, tmp_path)
    kept = records(tmp_path)
    by_judge = {j: [r for r in kept if r.judge_id == j] for j in {r.judge_id for r in kept}}
    capped = next(j for j in by_judge if "force-aware" in j)
    free = next(j for j in by_judge if "generic-support" in j)
    assert outcome.status == "budget_exhausted"
    assert len(by_judge[free]) == PLANNED // 2  # the other judge finished
    assert 0 < len(by_judge[capped]) < PLANNED // 2
    section = budget(tmp_path)["components"]
    assert section[capped]["exhausted"] and section[capped]["max_cost_usd"] == 0.0012
    assert section[capped]["spent_usd"] <= 0.0012 and not section[free]["exhausted"]
    assert budget(tmp_path)["stopped"] is None  # the run's own cap was not the reason


def test_max_requests_sends_exactly_that_many(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        spec = write_spec(tmp_path, server.base_url, top="max_requests = 5", prices=False)
        outcome = run(spec, tmp_path)
        sent, kept = server.stats.total, len(records(tmp_path))
        again = run(spec, tmp_path, max_requests=40)
    assert outcome.status == "budget_exhausted" and sent == 5 and kept == 5
    assert again.status == "complete" and budget(tmp_path)["requests"] == PLANNED
    assert len(records(tmp_path)) == PLANNED


def test_a_model_without_a_price_refuses_a_cost_cap_before_any_request(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        spec = write_spec(tmp_path, server.base_url, top="max_cost_usd = 1.0", prices=False)
        code, out, err = invoke(["run", str(spec), "--output-dir", str(tmp_path / "out")])
        assert server.stats.total == 0
    assert code == 2 and not (tmp_path / "out").exists()
    line = err.strip()
    assert len(line.splitlines()) == 1 and str(spec) in line and "max_cost_usd" in line
    assert "fake-judge" in line and "input_cost_per_token" in line


def test_the_cli_says_what_was_spent_and_its_resume_command_finishes(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        spec = write_spec(tmp_path, server.base_url, concurrency=1)
        argv = ["run", str(spec), "--output-dir", str(tmp_path / "out")]
        argv += ["--cache-dir", str(tmp_path / "cache"), "--no-progress"]
        code, out, err = invoke([*argv, "--max-cost-usd", "0.001"])
        assert code == 1 and "budget_exhausted" in out
        line = next(x for x in err.splitlines() if "to go on with a higher cap" in x)
        assert line.startswith("spent $") and "--max-cost-usd 0.002" in line
        resume = shlex.split(line.split("higher cap: ", 1)[1])
        code2 = None
        while code2 != 0:  # each resume doubles the cap: it ends within a few
            code2, out2, err2 = invoke(resume[1:])
            if code2:
                resume = shlex.split(err2.split("higher cap: ", 1)[1].splitlines()[0])
        assert server.stats.total == PLANNED
    assert len(records(tmp_path)) == PLANNED and "complete" in out2


def test_a_cap_of_zero_is_resumed_with_a_cap_that_sends(tmp_path: Path) -> None:
    """A cap of 0 sends nothing; doubled it would still be 0, so the resume command
    offers room for the request it refused (twice its worst case)."""
    with FakeOpenAIServer() as server:
        spec = write_spec(tmp_path, server.base_url, concurrency=1)
        argv = ["run", str(spec), "--output-dir", str(tmp_path / "out")]
        argv += ["--cache-dir", str(tmp_path / "cache"), "--no-progress"]
        code, out, err = invoke([*argv, "--max-cost-usd", "0"])
        assert code == 1 and "budget_exhausted" in out and server.stats.total == 0
        line = next(x for x in err.splitlines() if "to go on with a higher cap" in x)
        resume = shlex.split(line.split("higher cap: ", 1)[1])
        offered = float(resume[resume.index("--max-cost-usd") + 1])
        assert offered == pytest.approx(2 * budget(tmp_path)["next_request_usd"], rel=1e-5)
        code2, _, _ = invoke(resume[1:])
        assert code2 in (0, 1) and server.stats.total >= 1  # the resume sends


def test_dry_run_says_whether_the_plan_fits(tmp_path: Path) -> None:
    import json

    with FakeOpenAIServer() as server:
        spec = write_spec(tmp_path, server.base_url)
        worst = sum(worst_cases(spec, tmp_path))
        plans = {}
        for cap in (worst * 1.01, worst * 0.5):
            code, out, _ = invoke(
                ["run", str(spec), "--dry-run", "-f", "json", "--max-cost-usd", str(cap)]
            )
            assert code == 0
            plans[cap] = json.loads(out)["budget"]
        table_code, table, _ = invoke(["run", str(spec), "--dry-run", "--max-cost-usd", "1e-5"])
        assert server.stats.total == 0
        outcome = run(spec, tmp_path, max_cost_usd=worst * 1.01)
    fits, short = plans[worst * 1.01], plans[worst * 0.5]
    assert fits["worst_case_usd"] == pytest.approx(worst) and fits["to_send"] == PLANNED
    assert fits["fits"] is True and short["fits"] is False
    assert "budget: does not fit" in table and table_code == 0
    assert outcome.status == "complete"  # what fits is not stopped


def test_max_requests_caps_the_decomposer_and_verifiers_too(tmp_path: Path) -> None:
    from test_factuality_run import responder
    from test_factuality_run import write_spec as factuality_spec

    out = tmp_path / "fact"
    with FakeOpenAIServer(responder=responder) as server:
        spec = factuality_spec(tmp_path, server.base_url)
        first = Runner(
            load_spec(spec), RunOptions(output_dir=str(out), progress=False, max_requests=8)
        ).run()
        sent = server.stats.total
        kept = [json.loads(x) for x in (out / "verifications.jsonl").read_text().splitlines()]
        second = Runner(
            load_spec(spec), RunOptions(output_dir=str(out), progress=False, max_requests=20)
        ).run()
        total = server.stats.total
    assert first.status == "budget_exhausted" and sent == 8  # 6 decompositions, 2 verifications
    assert first.verifications_recorded is not None and first.verifications_recorded < 10
    assert not [v for v in kept if v["status"] == "api_error"]
    assert second.status == "complete" and total == 6 + 5  # nothing sent twice
    assert second.verifications_recorded == second.verifications_planned == 10
    components = read_json(out / "manifest.json")["budget"]["components"]
    assert sum(c["requests"] for c in components.values()) == 11 and len(components) == 2


def test_dry_run_fit_is_unknown_until_the_claims_are_known(tmp_path: Path) -> None:
    from test_factuality_run import write_spec as factuality_spec

    spec = factuality_spec(tmp_path, "http://127.0.0.1:9/v1")
    code, out, err = invoke(["run", str(spec), "--dry-run", "-f", "json", "--max-requests", "100"])
    assert code == 0, err
    fit = json.loads(out)["budget"]
    assert fit["after_decomposition"] and fit["fits"] is None and fit["to_send"] == 6
    code, out, _ = invoke(["run", str(spec), "--dry-run", "-f", "json", "--max-requests", "5"])
    assert json.loads(out)["budget"]["fits"] is False  # the decompositions alone exceed it
