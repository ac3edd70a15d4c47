"""Cache keys: complete, deterministic, credential-free; the cache itself across processes."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# `import assay.models` in a fresh interpreter currently fails with a circular import
# (see test_assay_models_imports_on_its_own); importing assay.judges first avoids it so
# the rest of this module can still run.
import assay.judges  # noqa: F401
from assay.judges import Usage
from assay.models import (
    ChatRequest,
    Decoding,
    ModelConfig,
    RawResponse,
    ResponseCache,
    cache_key,
    cache_key_parts,
    redact_url,
)
from assay.prompts import Message

SECRET = "sk-test-SECRET-value-93a7c1f0"

BASE_CONFIG: dict[str, Any] = {
    "model": "openai/judge-model",
    "api_base": "http://127.0.0.1:8000/v1",
    "api_key_env": "ASSAY_TEST_SECRET_KEY",
    "structured_output": "json_schema",
    "extra_body": {"reasoning_effort": "low"},
}
BASE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"label": {"type": "string"}},
    "required": ["label"],
}
BASE_REQUEST: dict[str, Any] = {
    "messages": [
        {"role": "system", "content": "You are a careful judge."},
        {"role": "user", "content": "Evidence: E. Claim: C."},
    ],
    "decoding": {"temperature": 0.0, "top_p": 0.9, "max_tokens": 256, "seed": 7, "stop": ["\n\n"]},
    "response_schema": BASE_SCHEMA,
    "sample_index": 0,
}


def _config(**changes: Any) -> ModelConfig:
    return ModelConfig.model_validate({**BASE_CONFIG, **changes})


def _request(**changes: Any) -> ChatRequest:
    data = json.loads(json.dumps(BASE_REQUEST))
    decoding = changes.pop("decoding", None)
    if decoding is not None:
        data["decoding"].update(decoding)
    data.update(changes)
    return ChatRequest.model_validate(data)


def _msgs(
    system: str | None = "You are a careful judge.",
    user: str = "Evidence: E. Claim: C.",
    user_role: str = "user",
) -> list[dict[str, str]]:
    out = [] if system is None else [{"role": "system", "content": system}]
    return [*out, {"role": user_role, "content": user}]


BASE_KEY = cache_key(_config(), _request())

CONFIG_CHANGES: dict[str, dict[str, Any]] = {
    "provider": {"model": "anthropic/judge-model"},
    "model_id": {"model": "openai/judge-model-2"},
    "model_id_case": {"model": "openai/Judge-Model"},
    "api_base_none": {"api_base": None},
    "api_base_port": {"api_base": "http://127.0.0.1:8001/v1"},
    "api_base_host": {"api_base": "http://127.0.0.2:8000/v1"},
    "api_base_path": {"api_base": "http://127.0.0.1:8000/v2"},
    "api_base_scheme": {"api_base": "https://127.0.0.1:8000/v1"},
    "structured_output": {"structured_output": "off"},
    "structured_output_obj": {"structured_output": "json_object"},
    "extra_body_value": {"extra_body": {"reasoning_effort": "high"}},
    "extra_body_empty": {"extra_body": {}},
    "extra_body_more": {"extra_body": {"reasoning_effort": "low", "top_k": 5}},
}

REQUEST_CHANGES: dict[str, dict[str, Any]] = {
    "system_prompt": {"messages": _msgs(system="You are a lenient judge.")},
    "no_system_prompt": {"messages": _msgs(system=None)},
    "system_role": {
        "messages": [
            {"role": "developer", "content": "You are a careful judge."},
            {"role": "user", "content": "Evidence: E. Claim: C."},
        ]
    },
    "user_content": {"messages": _msgs(user="Evidence: E. Claim: D.")},
    "user_content_whitespace": {"messages": _msgs(user="Evidence: E. Claim: C. ")},
    "user_role": {"messages": _msgs(user_role="assistant")},
    "extra_message": {
        "messages": [*_msgs(), {"role": "assistant", "content": "ok"}],
    },
    "message_order": {"messages": list(reversed(_msgs()))},
    "temperature": {"decoding": {"temperature": 0.7}},
    "top_p": {"decoding": {"top_p": 1.0}},
    "top_p_none": {"decoding": {"top_p": None}},
    "max_tokens": {"decoding": {"max_tokens": 257}},
    "seed": {"decoding": {"seed": 8}},
    "seed_none": {"decoding": {"seed": None}},
    "stop": {"decoding": {"stop": ["###"]}},
    "stop_none": {"decoding": {"stop": None}},
    "response_schema": {
        "response_schema": {**BASE_SCHEMA, "properties": {"label": {"type": "integer"}}}
    },
    "response_schema_none": {"response_schema": None},
    "sample_index": {"sample_index": 1},
}


@pytest.mark.parametrize("name", sorted(CONFIG_CHANGES))
def test_config_change_changes_key(name: str) -> None:
    key = cache_key(_config(**CONFIG_CHANGES[name]), _request())
    assert key != BASE_KEY, f"changing {name} left the cache key unchanged"


@pytest.mark.parametrize("name", sorted(REQUEST_CHANGES))
def test_request_change_changes_key(name: str) -> None:
    key = cache_key(_config(), _request(**REQUEST_CHANGES[name]))
    assert key != BASE_KEY, f"changing {name} left the cache key unchanged"


def test_all_single_changes_give_distinct_keys() -> None:
    keys = {BASE_KEY}
    for change in CONFIG_CHANGES.values():
        keys.add(cache_key(_config(**change), _request()))
    for change in REQUEST_CHANGES.values():
        keys.add(cache_key(_config(), _request(**change)))
    assert len(keys) == 1 + len(CONFIG_CHANGES) + len(REQUEST_CHANGES)


def test_schema_name_is_part_of_the_key() -> None:
    """BUG (assay/models/_cache.py `cache_key_parts`): ChatRequest.schema_name is sent to
    the provider as response_format.json_schema.name (assay/models/_hosted.py `_kwargs`)
    but is not in the key, so two requests that differ only in it share a cache entry,
    contrary to the module's "everything that can change the output"."""
    key = cache_key(_config(), _request(schema_name="ForceVerdict"))
    assert key != cache_key(_config(), _request(schema_name="SupportVerdict"))


def test_unchanged_inputs_give_identical_key() -> None:
    assert cache_key(_config(), _request()) == BASE_KEY
    assert cache_key(_config(), _request()) == cache_key(_config(), _request())
    assert len(BASE_KEY) == 64 and int(BASE_KEY, 16) >= 0


def test_settings_that_cannot_change_output_do_not_change_key() -> None:
    same = [
        _config(api_key_env="OTHER_KEY_ENV"),
        _config(api_key_env=None),
        _config(timeout_s=5.0),
        _config(max_concurrency=1),
        _config(extra_body={"reasoning_effort": "low"}),
    ]
    for cfg in same:
        assert cache_key(cfg, _request()) == BASE_KEY


def test_extra_body_key_order_is_canonical() -> None:
    a = cache_key(_config(extra_body={"a": 1, "b": {"x": 1, "y": 2}}), _request())
    b = cache_key(_config(extra_body={"b": {"y": 2, "x": 1}, "a": 1}), _request())
    assert a == b


def test_credentials_in_api_base_do_not_change_key() -> None:
    plain = cache_key(_config(api_base="http://127.0.0.1:8000/v1"), _request())
    with_user = cache_key(_config(api_base=f"http://user:{SECRET}@127.0.0.1:8000/v1"), _request())
    with_query = cache_key(_config(api_base=f"http://127.0.0.1:8000/v1?key={SECRET}"), _request())
    assert plain == with_user == with_query == BASE_KEY


_KEY_SCRIPT = """
import json, sys
import assay.judges
from assay.models import ChatRequest, ModelConfig, cache_key
cfg, req = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(cache_key(ModelConfig.model_validate(cfg), ChatRequest.model_validate(req)))
"""


def test_key_is_identical_in_another_process() -> None:
    keys = set()
    for seed in ("0", "12345"):
        proc = subprocess.run(
            [sys.executable, "-c", _KEY_SCRIPT, json.dumps(BASE_CONFIG), json.dumps(BASE_REQUEST)],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        assert proc.returncode == 0, proc.stderr
        keys.add(proc.stdout.strip())
    assert keys == {BASE_KEY}


def test_assay_models_imports_on_its_own() -> None:
    """BUG: `import assay.models` (or assay.models._cache) in a fresh interpreter raises
    ImportError: assay/models/_types.py imports assay.core.judging, which runs
    assay/judges/__init__.py -> assay/judges/_llm.py -> `from assay.models import
    ChatRequest, ...` while assay.models is only partially initialised."""
    for module in ("assay.models", "assay.models._cache"):
        proc = subprocess.run(
            [sys.executable, "-c", f"import {module}"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, (
            f"`import {module}` fails in a fresh interpreter (circular import):\n"
            + proc.stderr.strip().splitlines()[-1]
        )


# ---- credentials -----------------------------------------------------------------------


def test_key_parts_never_contain_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ASSAY_TEST_SECRET_KEY", SECRET)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    for api_base in (
        "http://127.0.0.1:8000/v1",
        f"http://user:{SECRET}@127.0.0.1:8000/v1",
        f"http://127.0.0.1:8000/v1?api_key={SECRET}&x=1",
        f"https://{SECRET}@example.invalid/v1/",
    ):
        parts = cache_key_parts(_config(api_base=api_base), _request())
        text = str(parts) + json.dumps(parts)
        assert SECRET not in text
        assert "ASSAY_TEST_SECRET_KEY" not in text
        assert "api_key" not in text
        assert "user" not in str(parts["api_base"])


def test_key_parts_shape() -> None:
    parts = cache_key_parts(_config(), _request())
    assert set(parts) == {
        "cache_schema",
        "provider",
        "api_base",
        "model",
        "messages",
        "decoding",
        "structured_output",
        "response_schema",
        "schema_name",
        "extra_body",
        "sample_index",
    }
    assert parts["provider"] == "openai"
    assert parts["api_base"] == "http://127.0.0.1:8000/v1"
    assert parts["decoding"] == BASE_REQUEST["decoding"]
    assert isinstance(parts["response_schema"], str) and len(parts["response_schema"]) == 64


# ---- redact_url ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (None, None),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
        ("http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1"),
        ("http://user:pass@127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
        ("https://user@api.example.com/v1", "https://api.example.com/v1"),
        ("https://api.example.com/v1?key=abc123", "https://api.example.com/v1"),
        ("https://u:p@api.example.com:443/v1?key=abc&b=2#frag", "https://api.example.com:443/v1"),
        ("https://API.Example.com/v1", "https://api.example.com/v1"),
    ],
)
def test_redact_url(url: str | None, expected: str | None) -> None:
    assert redact_url(url) == expected


def test_redact_url_keeps_ipv6_brackets() -> None:
    """BUG (assay/models/_cache.py `redact_url`): it rebuilds the netloc from
    `parts.hostname`, which drops the brackets of an IPv6 literal, so
    'http://[::1]:8000/v1' becomes the invalid URL 'http://::1:8000/v1' (recorded in
    manifests via HostedClient.describe) and collides with 'http://[::1:8000]/v1'."""
    assert redact_url("http://[::1]:8000/v1") == "http://[::1]:8000/v1"
    assert redact_url("http://[::1]:8000/v1") != redact_url("http://[::1:8000]/v1")


# ---- ResponseCache ---------------------------------------------------------------------


def _raw(text: str = '{"label": "fully_supported"}', **fields: Any) -> RawResponse:
    data: dict[str, Any] = {
        "content": text,
        "finish_reason": "stop",
        "model_returned": "judge-model-2024",
        "response_id": "resp-1",
        "usage": Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15, cost_usd=0.001),
    }
    data.update(fields)
    return RawResponse(**data)


def test_cache_round_trip(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c")
    try:
        assert cache.get(BASE_KEY) is None
        raw = _raw()
        cache.set(BASE_KEY, raw)
        assert cache.get(BASE_KEY) == raw
        assert len(cache) == 1
        assert cache.clear() == 1
        assert cache.get(BASE_KEY) is None
    finally:
        cache.close()
    # Persisted across instances.
    c1 = ResponseCache(tmp_path / "d")
    c1.set("k", _raw("persisted"))
    c1.close()
    c2 = ResponseCache(tmp_path / "d")
    got = c2.get("k")
    c2.close()
    assert got is not None and got.content == "persisted"


def test_cache_defaults_to_env_dir(tmp_path: Path) -> None:
    cache = ResponseCache()
    try:
        assert cache.directory == tmp_path / "cache"  # set by conftest
    finally:
        cache.close()


@pytest.mark.parametrize(
    "fields",
    [
        {"refusal": "I can't help with that."},
        {"finish_reason": "length"},
        {"finish_reason": "content_filter"},
        {"content": None, "refusal": "no", "finish_reason": "stop"},
    ],
)
def test_cache_refuses_uncacheable(tmp_path: Path, fields: dict[str, Any]) -> None:
    raw = _raw(**fields)
    assert raw.cacheable is False
    cache = ResponseCache(tmp_path / "c")
    try:
        cache.set("k", raw)
        assert cache.get("k") is None
        assert len(cache) == 0
    finally:
        cache.close()


def test_cache_treats_incompatible_entry_as_miss(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c")
    try:
        cache._cache.set("k", "not a RawResponse")
        assert cache.get("k") is None
    finally:
        cache.close()


N_PER_WORKER = 200


def _writer(directory: str, worker: int) -> None:
    cache = ResponseCache(directory)
    for i in range(N_PER_WORKER):
        cache.set(f"w{worker}-{i}", _raw(f"worker {worker} item {i}"))
        if i % 50 == 0:  # interleave reads with the other writer
            cache.get(f"w{1 - worker}-{i}")
    cache.close()


def test_two_processes_write_concurrently(tmp_path: Path) -> None:
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    directory = str(tmp_path / "shared")
    ResponseCache(directory).close()  # create the database before the race
    procs = [ctx.Process(target=_writer, args=(directory, w)) for w in (0, 1)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
    assert [p.exitcode for p in procs] == [0, 0]
    cache = ResponseCache(directory)
    try:
        assert len(cache) == 2 * N_PER_WORKER
        for w in (0, 1):
            for i in range(N_PER_WORKER):
                got = cache.get(f"w{w}-{i}")
                assert got is not None, f"entry w{w}-{i} missing"
                assert got.content == f"worker {w} item {i}"
    finally:
        cache.close()


def test_decoding_defaults_are_explicit_in_key() -> None:
    """A default Decoding and one spelled out with the same values share a key."""
    cfg = _config()
    msgs = [Message(role="user", content="x")]
    a = ChatRequest(messages=msgs)
    b = ChatRequest(messages=msgs, decoding=Decoding(temperature=0.0, max_tokens=1024))
    assert cache_key(cfg, a) == cache_key(cfg, b)
