"""structured_output = "instructor": tool-call, JSON and ```json answers over the loopback
server, re-asks counted as requests with their tokens, the cache, reparse, the manifest."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.errors import AssayError, ModelConfigError
from assay.judges import JudgeItem, Judgment, LLMJudge, Status
from assay.models import ChatRequest, ModelConfig, ResponseCache, RetryPolicy, make_client
from assay.prompts import Prompt, PromptRegistry, load_prompt_file
from assay.runs import Runner, RunOptions, iter_records, load_spec, read_json
from assay.runs.rebuild._reparse import reparse_run
from assay.testing import FakeOpenAIServer, http_error, refusal, reply, tool_call
from assay.testing._behaviors import _message_text

GOOD = '{"label": "fully_supported", "confidence": 0.9, "rationale": "stated"}'
BAD = '{"label": "fully_supported", "confidence": "very"'  # cut off: not JSON
FAST_RETRY = RetryPolicy(max_attempts=3, initial_wait_s=0.01, max_wait_s=0.5, jitter_s=0.01)


def _judge(
    server: FakeOpenAIServer,
    cache: ResponseCache | None = None,
    prompt: Prompt | None = None,
    **config: Any,
) -> LLMJudge:
    settings: dict[str, Any] = {
        "model": "openai/fake-judge",
        "api_base": server.base_url,
        "retry": FAST_RETRY,
        "timeout_s": 10.0,
        "structured_output": "instructor",
    }
    settings.update(config)
    client = make_client(ModelConfig.model_validate(settings), cache)
    return LLMJudge(client, prompt or PromptRegistry().get("generic-support@1"))


def _judge_once(judge: LLMJudge, tag: str = "a") -> Judgment:
    return asyncio.run(judge(JudgeItem(claim=f"claim {tag}", evidence=f"evidence {tag}")))


def _words(text: str) -> int:
    """The loopback server's token count (whitespace words)."""
    return len(text.split())


def test_tools_mode_parses_a_function_call_answer(server: FakeOpenAIServer) -> None:
    server.default = tool_call(GOOD)
    judgment = _judge_once(_judge(server))
    assert judgment.status is Status.OK
    assert judgment.label == "fully_supported" and judgment.score == 1.0
    assert judgment.raw_output == GOOD  # the function-call arguments are the raw output
    assert judgment.attempts == 1 and server.stats.total == 1
    body = server.requests[0]
    forced = body["tool_choice"]["function"]["name"]
    assert [t["function"]["name"] for t in body["tools"]] == [forced]
    assert set(body["tools"][0]["function"]["parameters"]["properties"]) >= {"label"}
    assert judgment.usage.prompt_tokens == _words(_message_text(body))
    assert judgment.usage.completion_tokens == _words(GOOD)


def test_a_malformed_answer_is_reasked_and_every_request_counted(
    server: FakeOpenAIServer,
) -> None:
    server.script(None, [tool_call(BAD), tool_call(GOOD)])
    judgment = _judge_once(_judge(server, max_reasks=1))
    assert judgment.status is Status.OK and judgment.label == "fully_supported"
    assert judgment.raw_output == GOOD
    assert judgment.attempts == 2 and server.stats.total == 2  # a re-ask is a retry
    first, reask = server.requests
    assert reask["messages"][: len(first["messages"])] == first["messages"]
    error_message = reask["messages"][-1]
    assert error_message["role"] == "tool" and "Validation Error" in error_message["content"]
    assert judgment.usage.prompt_tokens == sum(_words(_message_text(b)) for b in server.requests)
    assert judgment.usage.completion_tokens == _words(BAD) + _words(GOOD)
    assert judgment.usage.total_tokens == (
        judgment.usage.prompt_tokens + judgment.usage.completion_tokens
    )


def test_without_reasks_a_malformed_answer_is_a_recorded_parse_error(
    server: FakeOpenAIServer,
) -> None:
    server.script(None, [tool_call(BAD), tool_call(GOOD)])
    judgment = _judge_once(_judge(server))  # max_reasks defaults to 0
    assert judgment.status is Status.PARSE_ERROR and judgment.raw_output == BAD
    assert judgment.attempts == 1 and server.stats.total == 1
    assert judgment.usage.completion_tokens == _words(BAD)


def test_reasks_that_stay_invalid_end_in_parse_error_with_the_last_answer(
    server: FakeOpenAIServer,
) -> None:
    last = '{"confidence": 0.5}'  # valid JSON, still no label
    server.script(None, [tool_call(BAD), tool_call(BAD), tool_call(last)])
    judgment = _judge_once(_judge(server, max_reasks=2))
    assert judgment.status is Status.PARSE_ERROR and judgment.raw_output == last
    assert judgment.attempts == 3 and server.stats.total == 3
    assert judgment.usage.completion_tokens == 2 * _words(BAD) + _words(last)


def test_a_rate_limited_reask_is_retried_inside_the_loop(server: FakeOpenAIServer) -> None:
    server.script(None, [tool_call(BAD), http_error(429, retry_after=0.01), tool_call(GOOD)])
    judgment = _judge_once(_judge(server, max_reasks=1))
    assert judgment.status is Status.OK
    assert judgment.attempts == 3 and server.stats.by_status == {200: 2, 429: 1}
    # the 429 retried the re-ask: the first answer was not asked for again
    assert len(server.requests[2]["messages"]) > len(server.requests[0]["messages"])


def test_a_failed_request_is_an_api_error_counting_every_attempt(
    server: FakeOpenAIServer,
) -> None:
    server.script(None, [tool_call(BAD)] + [http_error(500)] * 3)
    judgment = _judge_once(_judge(server, max_reasks=1))
    assert judgment.status is Status.API_ERROR and "500" in (judgment.error or "")
    assert judgment.attempts == 4 and server.stats.total == 4  # no restart of the loop


def test_a_refusal_stays_a_refusal(server: FakeOpenAIServer) -> None:
    server.script(None, [refusal("I can't help with that.")])
    judgment = _judge_once(_judge(server, max_reasks=2))
    assert judgment.status is Status.REFUSAL and judgment.attempts == 1
    assert server.stats.total == 1  # a refusal is not re-asked


def test_a_cut_off_answer_is_truncated_and_not_cached(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    server.script(None, [tool_call(BAD, finish_reason="length"), tool_call(GOOD)])
    cache = ResponseCache(tmp_path / "cache")
    judgment = _judge_once(_judge(server, cache, max_reasks=2))
    assert judgment.status is Status.TRUNCATED and judgment.raw_output == BAD
    assert judgment.attempts == 1 and server.stats.total == 1
    assert _judge_once(_judge(server, cache, max_reasks=2)).status is Status.OK
    assert server.stats.total == 2  # the cut-off answer was not cached


@pytest.mark.parametrize("mode", ["json", "md_json"])
def test_json_modes_parse_the_message_text(server: FakeOpenAIServer, mode: str) -> None:
    answer = GOOD if mode == "json" else f"Here it is:\n```json\n{GOOD}\n```"
    server.script(None, [reply("not json at all"), reply(answer)])
    judgment = _judge_once(_judge(server, instructor_mode=mode, max_reasks=1))
    assert judgment.status is Status.OK and judgment.label == "fully_supported"
    assert judgment.raw_output == answer and judgment.attempts == 2
    first = server.requests[0]
    assert "tools" not in first
    assert "json_schema" in first["messages"][0]["content"]  # instructor's schema message
    if mode == "json":
        assert first["response_format"] == {"type": "json_object"}
    else:
        assert "response_format" not in first
        assert "```json" in first["messages"][-1]["content"]
    assert "Correct your JSON" in server.requests[1]["messages"][-1]["content"]


def test_the_prompts_output_model_decides_what_is_reasked(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    path = tmp_path / "rubric.v1.prompt"
    path.write_text(
        '+++\nid = "rubric"\nversion = 1\ntask = "judge"\nvariables = ["evidence", "claim"]\n'
        'labels = ["yes", "no"]\n[scores]\nyes = 1.0\nno = 0.0\n'
        '[output.label]\ntype = "enum"\nvalues = ["yes", "no"]\n'
        "+++\n=== user ===\nEvidence: {{ evidence }}\nClaim: {{ claim }}\n",
        encoding="utf-8",
    )
    server.script(None, [tool_call('{"label": "maybe"}'), tool_call('{"label": "no"}')])
    judgment = _judge_once(_judge(server, prompt=load_prompt_file(path), max_reasks=1))
    assert judgment.status is Status.OK and judgment.label == "no" and judgment.score == 0.0
    assert "maybe" in server.requests[1]["messages"][-1]["content"]


def test_cache_keys_name_the_mode_and_the_reasks(server: FakeOpenAIServer) -> None:
    request = _judge(server).request_for(JudgeItem(claim="c", evidence="e"))
    keys = {
        _judge(server, **settings).client.cache_key(request)
        for settings in (
            {},
            {"instructor_mode": "json"},
            {"instructor_mode": "md_json"},
            {"max_reasks": 1},
            {"structured_output": "json_schema"},
        )
    }
    assert len(keys) == 5


def test_cached_answers_replay_without_requests(server: FakeOpenAIServer, tmp_path: Path) -> None:
    server.script(None, [tool_call(BAD), tool_call(GOOD)])
    cache = ResponseCache(tmp_path / "cache")
    first = _judge_once(_judge(server, cache, max_reasks=1))
    again = _judge_once(_judge(server, cache, max_reasks=1))
    assert again.cache_hit and again.attempts == 0 and server.stats.total == 2
    assert (again.label, again.raw_output, again.usage) == (
        first.label,
        first.raw_output,
        first.usage,
    )
    other_mode = _judge_once(_judge(server, cache, max_reasks=0))
    assert not other_mode.cache_hit and server.stats.total == 3


def _spec(tmp_path: Path, base_url: str, settings: str) -> Path:
    from assay.datasets import resolve_dataset_path

    lines = resolve_dataset_path("builtin:forcebench-demo").read_text().splitlines()
    (tmp_path / "three.jsonl").write_text("\n".join(lines[:3]) + "\n", encoding="utf-8")
    spec = tmp_path / "spec.toml"
    spec.write_text(
        f"""
name = "instructor"
bootstrap = 0
[[datasets]]
path = "three.jsonl"
[defaults]
max_attempts = 2
initial_wait_s = 0.01
structured_output = "instructor"
[[judges]]
models = ["openai/fake-judge"]
prompts = ["generic-support@1"]
api_base = "{base_url}"
{settings}
""",
        encoding="utf-8",
    )
    return spec


def _run(spec: Path, out: Path) -> list[Any]:
    Runner(load_spec(spec), RunOptions(output_dir=str(out), progress=False)).run()
    return sorted(iter_records(out / "judgments.jsonl"), key=lambda r: r.key)


def test_a_run_counts_reasks_caches_them_and_reparses(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    spec = _spec(tmp_path, server.base_url, "max_reasks = 1")
    first_pair = json.loads((tmp_path / "three.jsonl").read_text().splitlines()[0])
    server.script(first_pair["calibrated_claim"], [tool_call(BAD), tool_call(GOOD)])
    server.default = tool_call(GOOD)
    records = _run(spec, tmp_path / "run")
    assert len(records) == 6 and all(r.status is Status.OK for r in records)
    judge = read_json(tmp_path / "run" / "manifest.json")["judges"][0]
    client = judge["client"]
    assert client["structured_output"] == "instructor"
    assert (client["instructor_mode"], client["max_reasks"]) == ("tools", 1)
    assert client["instructor_version"] == "1.17.0"
    stats = judge["stats"]
    assert (stats["requests_sent"], stats["retries"]) == (7, 1) == (server.stats.total, 1)
    assert stats["tokens"]["completion"] == 6 * _words(GOOD) + _words(BAD)

    again = _run(spec, tmp_path / "again")  # a new run directory: all from the cache
    assert server.stats.total == 7
    assert all(r.cache_hit and r.attempts == 0 for r in again)
    assert [(r.label, r.raw_output) for r in again] == [(r.label, r.raw_output) for r in records]

    path = tmp_path / "run" / "judgments.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    broken = json.loads(lines[0]) | {"status": "parse_error", "label": None, "score": None}
    path.write_text("\n".join([json.dumps(broken), *lines[1:]]) + "\n", encoding="utf-8")
    assert reparse_run(tmp_path / "run") == {"parse_error->ok": 1}
    assert server.stats.total == 7  # re-parsing sent nothing
    reparsed = sorted(iter_records(path), key=lambda r: r.key)
    assert [(r.label, r.raw_output) for r in reparsed] == [(r.label, r.raw_output) for r in records]


def test_a_spec_without_the_package_is_one_line_naming_the_extra(
    server: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "instructor", None)  # import instructor fails
    spec = _spec(tmp_path, server.base_url, "")
    with pytest.raises(AssayError) as caught:
        _run(spec, tmp_path / "run")
    message = caught.value.render()
    assert "\n" not in message and "pip install 'assay[instructor]'" in message
    assert str(spec) in message and "judges[0]" in message
    assert server.stats.total == 0


def test_tools_mode_without_litellms_mcp_extra_is_refused(
    server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)  # as if not installed
    with pytest.raises(ModelConfigError, match="mcp extra"):
        _judge(server)
    assert _judge(server, instructor_mode="json").client.describe()["instructor_mode"] == "json"


def test_instructor_settings_without_instructor_are_refused() -> None:
    with pytest.raises(ModelConfigError, match="max_reasks = 2 needs structured_output"):
        ModelConfig(model="openai/x", max_reasks=2)
    with pytest.raises(ModelConfigError, match="instructor_mode = 'json' needs"):
        ModelConfig(model="openai/x", structured_output="json_schema", instructor_mode="json")


def test_instructor_is_for_litellm_models() -> None:
    config = ModelConfig(model="mock/judge", structured_output="instructor")
    with pytest.raises(ModelConfigError, match="'mock' transport"):
        make_client(config)


def test_requests_without_an_output_model_are_sent_plainly(server: FakeOpenAIServer) -> None:
    server.default = reply("plain text")
    client = _judge(server, max_reasks=3).client
    request = ChatRequest(
        messages=PromptRegistry().get("generic-support@1").render({"claim": "c", "evidence": "e"})
    )
    result = asyncio.run(client.complete(request))
    assert result.response is not None and result.response.content == "plain text"
    assert result.attempts == 1 and "tools" not in server.requests[0]


def test_the_command_does_not_print_instructors_log_of_each_failed_call(
    server: FakeOpenAIServer, tmp_path: Path
) -> None:
    """A tools-mode judge answered in plain text: every call is recorded (parsed from the
    text), and instructor's error log of each ("Max retries exceeded ...") stays off the
    command's stderr, where logging's last-resort handler printed one line a judgment."""
    import os
    import subprocess

    spec = _spec(tmp_path, server.base_url, "max_reasks = 0")
    server.default = reply(GOOD)  # text, not a tool call
    env = {**os.environ, "ASSAY_CACHE_DIR": str(tmp_path / "cache")}
    argv = [sys.executable, "-m", "assay", "run", str(spec), "--no-progress"]
    done = subprocess.run(
        [*argv, "--output-dir", str(tmp_path / "run")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=tmp_path,
    )
    records = list(iter_records(tmp_path / "run" / "judgments.jsonl"))
    assert done.returncode == 0 and len(records) == 6, done.stderr[-500:]
    assert "Max retries" not in done.stderr and "instructor" not in done.stderr.lower()
