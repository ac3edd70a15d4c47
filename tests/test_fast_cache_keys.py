"""The fast cache key (`ChatKeys`, which every hosted transport uses) is byte-for-byte the
key `cache_key` computes, whatever the config and request: entries written before it
still hit, and both transports keep sharing them."""

from __future__ import annotations

import pytest
from test_cache_keys import CONFIG_CHANGES, REQUEST_CHANGES, _config, _request

from assay.models import ChatRequest, Decoding, ModelConfig, cache_key, cache_key_parts
from assay.models._cache import ChatKeys, canonical_json, messages_json
from assay.models._hosted import LiteLLMTransport
from assay.prompts import Message

CASES = [("base", {}, {})]
CASES += [(f"config:{k}", v, {}) for k, v in sorted(CONFIG_CHANGES.items())]
CASES += [(f"request:{k}", {}, v) for k, v in sorted(REQUEST_CHANGES.items())]


@pytest.mark.parametrize(("name", "config_change", "request_change"), CASES)
def test_fast_key_equals_cache_key(
    name: str, config_change: dict[str, object], request_change: dict[str, object]
) -> None:
    config, request = _config(**config_change), _request(**request_change)
    keys = ChatKeys(config, config.structured_output)
    expected = cache_key(config, request, structured_mode=config.structured_output)
    assert keys.key(request) == expected, name
    assert keys.key(request) == expected, f"{name}: second call (memoised frame)"


def test_fast_key_follows_each_request_through_one_keys_object() -> None:
    """One `ChatKeys` serves many requests (a judge's): each gets its own key, including
    requests with another decoding, schema or sample index than the memoised frame."""
    config = _config()
    keys = ChatKeys(config, "json_schema")
    requests = [_request(**change) for change in REQUEST_CHANGES.values()] + [_request()]
    got = [keys.key(r) for r in requests]
    assert got == [cache_key(config, r, structured_mode="json_schema") for r in requests]
    assert len(set(got)) == len(requests)


@pytest.mark.parametrize(
    "content",
    ['quote " and backslash \\ and newline\n', "unicode: é 漢字 \u2028 emoji 🙂", "\x00\x1f", ""],
)
def test_messages_json_equals_canonical_json(content: str) -> None:
    messages = [Message(role="system", content=content), Message(role="user", content="x")]
    assert messages_json(messages) == canonical_json([m.model_dump() for m in messages])
    assert set(Message.model_fields) == {"role", "content"}  # what messages_json writes


def test_marker_text_in_config_falls_back_to_the_slow_key() -> None:
    """A config that happens to contain the slot marker still gets the right key."""
    config = ModelConfig(model="openai/x", extra_body={"note": "\x00assay-messages\x00"})
    request = ChatRequest(messages=[Message(role="user", content="hi")], decoding=Decoding())
    keys = ChatKeys(config, "off")
    assert keys.key(request) == cache_key(config, request, structured_mode="off")


def test_hosted_transport_uses_the_same_key() -> None:
    config = _config()
    transport = LiteLLMTransport(config)
    request = _request()
    mode = transport.structured_mode()
    assert transport.cache_key(request) == cache_key(config, request, structured_mode=mode)


def test_every_key_part_is_framed_or_slotted() -> None:
    """`ChatKeys` serialises the parts once per (decoding, schema, schema name) and slots
    in the messages and sample index: a new request-dependent part must join one of them."""
    framed_by_config = {"cache_schema", "provider", "api_base", "model", "extra_body"}
    framed_by_request = {"decoding", "structured_output", "response_schema", "schema_name"}
    slotted = {"messages", "sample_index"}
    parts = cache_key_parts(_config(), _request(), structured_mode="json_schema")
    assert set(parts) == framed_by_config | framed_by_request | slotted
