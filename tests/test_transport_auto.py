"""`transport = "auto"` (the default) on the loopback server: the lean client for a plain
openai/ spec (litellm never imported), litellm where a setting needs it, the choice and
its reason in the manifest, the same records and cache entries either way; and the rules
behind the choice agree with what litellm does."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke
from test_openai_transport import write_mini_pairs

from assay.models import (
    ChatRequest,
    Decoding,
    ModelConfig,
    RetryPolicy,
    choose_transport,
    transport_for,
)
from assay.models._cost_map import openai_model_info
from assay.models._openai_http import OPENAI_API_BASE
from assay.models._transport_choice import (
    LEAN_EXTRA_BODY_KEYS,
    LEAN_REASON,
    litellm_rewrites_parameters,
)
from assay.models._transport_choice import (
    OPENAI_API_BASE as CHOICE_API_BASE,
)
from assay.models._types import Message
from assay.runs import Runner, RunOptions, iter_records, load_spec, read_json
from assay.testing import FakeOpenAIServer

TIMING_FIELDS = ("latency_s", "recorded_at")
INSTRUCTOR_REASON = "structured_output = instructor needs litellm"

RUN_AND_REPORT = """
import json, sys
from assay.runs import Runner, RunOptions, load_spec
outcome = Runner(load_spec(sys.argv[1]), RunOptions(output_dir=sys.argv[2],
                 cache_dir=sys.argv[3], progress=False)).run()
print(json.dumps({"status": outcome.status, "litellm": "litellm" in sys.modules}))
"""


def _spec(tmp: Path, name: str, base_url: str, judge_keys: str = "", extra: str = "") -> Path:
    """Four demo pairs, two prompts of one priced openai/ model; no `transport` key
    unless `judge_keys` gives one."""
    write_mini_pairs(tmp)
    spec = tmp / f"{name}.toml"
    spec.write_text(
        f"""
name = "{name}"
bootstrap = 0
[[datasets]]
name = "mini"
path = "pairs.jsonl"
[defaults]
max_attempts = 2
timeout_s = 5
[[judges]]
models = ["openai/gpt-4o-mini"]
prompts = ["generic-support@1", "force-aware@1"]
api_base = "{base_url}"
{judge_keys}
{extra}""",
        encoding="utf-8",
    )
    return spec


def _clients(run_dir: Path) -> list[dict[str, Any]]:
    return [j["client"] for j in read_json(run_dir / "manifest.json")["judges"]]


def test_a_plain_openai_spec_runs_lean_without_importing_litellm(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        spec = _spec(tmp_path, "auto", server.base_url)
        out, cache = tmp_path / "out", tmp_path / "cache"
        done = subprocess.run(
            [sys.executable, "-c", RUN_AND_REPORT, str(spec), str(out), str(cache)],
            capture_output=True,
            text=True,
            check=True,
        )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
        "status": "complete",
        "litellm": False,
    }
    clients = _clients(out)
    assert len(clients) == 2
    for client in clients:
        assert (client["transport"], client["transport_reason"]) == ("openai", LEAN_REASON)


def test_instructor_goes_through_litellm_and_says_why(tmp_path: Path) -> None:
    instructor = """
[[judges]]
models = ["openai/gpt-4o-mini"]
prompts = ["generic-support@1"]
name = "validated"
api_base = "{base}"
structured_output = "instructor"
instructor_mode = "json"
"""
    with FakeOpenAIServer() as server:
        extra = instructor.format(base=server.base_url)
        spec = _spec(tmp_path, "mixed", server.base_url, extra=extra)
        outcome = Runner(
            load_spec(spec), RunOptions(output_dir=str(tmp_path / "out"), progress=False)
        ).run()
    assert outcome.status == "complete"
    chosen = [(c["transport"], c["transport_reason"]) for c in _clients(tmp_path / "out")]
    assert chosen == [("openai", LEAN_REASON)] * 2 + [("litellm", INSTRUCTOR_REASON)]


@pytest.mark.parametrize(
    ("settings", "name", "reason"),
    [
        ({"model": "anthropic/claude-3-5-haiku-latest"}, "litellm", "provider anthropic: litellm"),
        ({"model": "azure/my-deployment"}, "litellm", "provider azure: litellm"),
        ({"model": "openai/m", "structured_output": "instructor"}, "litellm", INSTRUCTOR_REASON),
        ({"model": "openai/m", "api_key_env": "MY_KEY"}, "openai", LEAN_REASON),
        ({"model": "openai/m", "extra_body": {"top_k": 5}}, "openai", LEAN_REASON),
        (
            {"model": "openai/m", "extra_body": {"api_version": "2024-10-21"}},
            "litellm",
            "extra_body key 'api_version' may be one litellm reads itself: litellm",
        ),
        (
            {"model": "openai/o3-mini"},
            "litellm",
            "o3-mini: litellm rewrites a reasoning model's parameters (max_completion_tokens)",
        ),
        (
            {"model": "openai/m", "transport": "litellm"},
            "litellm",
            'transport = "litellm" in the spec',
        ),
        (
            {"model": "openai/m", "transport": "openai"},
            "openai",
            'transport = "openai" in the spec',
        ),
    ],
)
def test_each_config_gets_its_client_and_reason(
    settings: dict[str, Any], name: str, reason: str
) -> None:
    config = ModelConfig.model_validate({"api_base": "http://127.0.0.1:9/v1", **settings})
    choice = choose_transport(config)
    assert (choice.name, choice.reason) == (name, reason)
    described = transport_for(config).describe()
    assert (described["transport"], described["transport_reason"]) == (name, reason)


def test_a_proxy_variable_keeps_litellm_unless_no_proxy_exempts_the_host(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for var in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(var, raising=False)
        monkeypatch.delenv(var.upper(), raising=False)
    hosted, local = (
        ModelConfig(model="openai/m"),
        ModelConfig(model="openai/m", api_base="http://127.0.0.1:9/v1"),
    )
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    assert choose_transport(hosted).reason == "HTTPS_PROXY is set: litellm honours proxies"
    assert choose_transport(local).name == "openai"  # an http:// api_base: no https proxy
    monkeypatch.setenv("NO_PROXY", "api.openai.com")
    assert choose_transport(hosted).name == "openai"
    assert CHOICE_API_BASE == OPENAI_API_BASE


@pytest.mark.parametrize("variable", ["OPENAI_BASE_URL", "OPENAI_API_BASE", "OPENAI_ORG_ID"])
def test_a_variable_litellms_openai_client_reads_keeps_litellm(
    variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without api_base, litellm sends openai/ requests to OPENAI_BASE_URL (or
    OPENAI_API_BASE); the organisation variables reach OpenAI as headers."""
    monkeypatch.setenv(variable, "http://127.0.0.1:9/v1")
    choice = choose_transport(ModelConfig(model="openai/m"))
    assert (choice.name, choice.reason) == ("litellm", f"{variable} is set: litellm reads it")
    with_base = choose_transport(ModelConfig(model="openai/m", api_base="http://127.0.0.1:9/v1"))
    assert with_base.name == ("litellm" if variable == "OPENAI_ORG_ID" else "openai")


async def _send(config: ModelConfig, request: ChatRequest) -> None:
    await transport_for(config).send(request)


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "openai/fake-judge"])
def test_every_lean_extra_body_key_reaches_the_server_as_litellm_sends_it(
    server: FakeOpenAIServer, model: str
) -> None:
    """The keys auto lets through to the lean client, each sent by both clients."""
    values: dict[str, Any] = {
        "headers": {"X-A": "1"},
        "extra_headers": {"X-B": "2"},
        "extra_body": {"nested": True},
        "metadata": {"run": "r"},
        "frequency_penalty": 0.5,
        "presence_penalty": 0.25,
        "logit_bias": {"50256": -100},
        "service_tier": "default",
        "store": False,
        "prompt_cache_key": "k",
        "safety_identifier": "s",
        "top_k": 5,
        "min_p": 0.1,
        "repetition_penalty": 1.1,
        "min_tokens": 1,
        "chat_template_kwargs": {"thinking": False},
        "guided_json": {"type": "object"},
        "guided_choice": ["a", "b"],
        "guided_regex": "a+",
        "guided_grammar": "root ::= 'a'",
        "structured_outputs": {"choice": ["a"]},
        "skip_special_tokens": False,
        "include_stop_str_in_output": True,
    }
    assert set(values) == LEAN_EXTRA_BODY_KEYS
    request = ChatRequest(
        messages=[Message(role="user", content="same body")], decoding=Decoding(seed=3)
    )
    for transport in ("litellm", "auto"):
        config = ModelConfig(
            model=model,
            api_base=server.base_url,
            retry=RetryPolicy(max_attempts=1),
            transport=transport,  # type: ignore[arg-type]
            extra_body=values,
        )
        assert choose_transport(config).name == ("litellm" if transport == "litellm" else "openai")
        asyncio.run(_send(config, request))
    litellm_body, lean_body = server.requests
    assert lean_body == litellm_body
    litellm_headers, lean_headers = server.headers_seen
    assert (lean_headers["x-a"], lean_headers["x-b"]) == (
        litellm_headers["x-a"],
        litellm_headers["x-b"],
    )


def test_the_lean_keys_are_none_litellm_reads_itself() -> None:
    from litellm.types.utils import all_litellm_params

    handled_alike = {"headers", "extra_headers", "extra_body", "metadata"}
    assert not (LEAN_EXTRA_BODY_KEYS - handled_alike) & set(all_litellm_params)


def _litellm_rewrites(name: str) -> bool:
    """Whether litellm sends this openai/ model's `max_tokens` as something else."""
    from litellm.utils import get_optional_params

    try:
        sent = get_optional_params(model=name, custom_llm_provider="openai", max_tokens=100)
    except Exception:  # refused before sending: not the request the lean client sends
        return True
    return bool(sent.get("max_tokens") != 100)


def test_reasoning_models_are_those_litellm_rewrites() -> None:
    """Every OpenAI model of litellm's cost map, and names of the shapes litellm matches."""
    from assay.models._cost_map import _openai_models

    names = sorted(_openai_models())
    names += ["my-org/gpt-5", "gpt-5-chat-latest", "o9-local", "local-model", "gpt-4o-mini"]
    assert any(litellm_rewrites_parameters(n) for n in names)
    assert not all(litellm_rewrites_parameters(n) for n in names)
    assert openai_model_info("o3-mini") is not None
    disagree = [n for n in names if litellm_rewrites_parameters(n) != _litellm_rewrites(n)]
    assert disagree == []


def _records(run_dir: Path) -> list[dict[str, Any]]:
    records = [r.model_dump(mode="json") for r in iter_records(run_dir / "judgments.jsonl")]
    for record in records:
        for name in TIMING_FIELDS:
            record.pop(name, None)
    return sorted(records, key=lambda r: json.dumps(r, sort_keys=True))


def _run(spec: Path, out: Path, cache: Path) -> list[dict[str, Any]]:
    options = RunOptions(output_dir=str(out), progress=False, cache_dir=str(cache))
    assert Runner(load_spec(spec), options).run().status == "complete"
    return _records(out)


def test_auto_and_litellm_write_the_same_records_and_cache_entries(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        auto = _spec(tmp_path, "auto", server.base_url)
        litellm = _spec(tmp_path, "litellm", server.base_url, 'transport = "litellm"')
        runs = {
            "auto": _run(auto, tmp_path / "auto", tmp_path / "cache-auto"),
            "litellm": _run(litellm, tmp_path / "litellm", tmp_path / "cache-litellm"),
        }
        sent = server.stats.total
        again = _run(litellm, tmp_path / "again", tmp_path / "cache-auto")
        assert server.stats.total == sent  # served entirely from the auto run's cache
    assert runs["auto"] == runs["litellm"] and len(runs["auto"]) == 16
    assert all(r["cache_hit"] for r in again) and len(again) == 16
    assert [c["transport"] for c in _clients(tmp_path / "auto")] == ["openai"] * 2
    assert [c["transport"] for c in _clients(tmp_path / "litellm")] == ["litellm"] * 2
    for run in ("auto", "litellm"):  # request keys reproduced from either client description
        code, out, err = invoke(["verify", str(tmp_path / run)])
        assert code == 0 and "requests     pass" in out, out + err
