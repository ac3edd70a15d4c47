"""Which client carries a hosted model's requests: `transport = "auto"` (the default).

The lean client (`_openai_http`) is ~5x the litellm path for OpenAI-compatible endpoints,
but it only speaks the plain chat-completions wire format. Auto takes it wherever the
request it sends is the request litellm would send (so records and cache entries are the
same either way), and litellm wherever litellm does something the lean client does not:
other providers, instructor, parameters litellm rewrites or reads itself, environment
variables its OpenAI client reads (OPENAI_BASE_URL, proxies). The
choice is a pure function of the config and the environment, made without importing
litellm or aiohttp, and recorded with its reason in the manifest's client description.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from assay.models._config import ModelConfig
from assay.models._cost_map import openai_model_info

__all__ = [
    "LEAN_EXTRA_BODY_KEYS",
    "LEAN_REASON",
    "ChosenTransport",
    "TransportChoice",
    "choose_transport",
]

ChosenTransport = Literal["litellm", "openai"]
LEAN_REASON = "openai/ id, every setting supported by the lean client"
OPENAI_API_BASE = "https://api.openai.com/v1"  # the lean client's default (a test checks)

LEAN_EXTRA_BODY_KEYS = frozenset(
    {
        # what the lean client treats as litellm does: headers, a merged body, callbacks' data
        *("headers", "extra_headers", "extra_body", "metadata"),
        # OpenAI chat parameters litellm sends unchanged for a non-reasoning model
        # (not `user`: litellm drops it for a model its map does not know)
        *("frequency_penalty", "presence_penalty", "logit_bias", "service_tier", "store"),
        *("prompt_cache_key", "safety_identifier"),
        # OpenAI-compatible servers' own sampling keys, which litellm passes into the body
        *("top_k", "min_p", "repetition_penalty", "min_tokens", "chat_template_kwargs"),
        *("guided_json", "guided_choice", "guided_regex", "guided_grammar"),
        *("structured_outputs", "skip_special_tokens", "include_stop_str_in_output"),
    }
)
"""`extra_body` keys both clients put in the same place (tests send each through both and
compare what the server received). Any other key may be one litellm reads itself
(`api_version`, `drop_params`, `num_retries`, ...): auto leaves such a config to litellm."""

_BASE_VARIABLES = ("OPENAI_BASE_URL", "OPENAI_API_BASE")  # litellm's api_base fallbacks
_ACCOUNT_VARIABLES = ("OPENAI_ORGANIZATION", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID")

# litellm's GPT reasoning series (`is_gpt_reasoning_series_name`): markers anywhere in the
# model name, except the chat variants
_REASONING_MARKERS = ("gpt-5", "gpt-6")


@dataclass(frozen=True)
class TransportChoice:
    """The client a model's requests travel by, and why (for the manifest)."""

    name: ChosenTransport
    reason: str

    def describe(self) -> dict[str, str]:
        return {"transport": self.name, "transport_reason": self.reason}


def choose_transport(config: ModelConfig) -> TransportChoice:
    """An explicit `transport` as given; `"auto"`: the lean client unless a setting needs
    litellm (`_needs_litellm` names the first such setting)."""
    if config.transport != "auto":
        return TransportChoice(config.transport, f'transport = "{config.transport}" in the spec')
    reason = _needs_litellm(config)
    if reason is not None:
        return TransportChoice("litellm", reason)
    return TransportChoice("openai", LEAN_REASON)


def _needs_litellm(config: ModelConfig) -> str | None:
    if config.provider != "openai":
        return f"provider {config.provider}: litellm"
    if config.structured_output == "instructor":
        return "structured_output = instructor needs litellm"
    name = config.model.split("/", 1)[1]
    if litellm_rewrites_parameters(name):
        return f"{name}: litellm rewrites a reasoning model's parameters (max_completion_tokens)"
    unknown = sorted(set(config.extra_body) - LEAN_EXTRA_BODY_KEYS)
    if unknown:
        return f"extra_body key {unknown[0]!r} may be one litellm reads itself: litellm"
    read = _openai_variable(config)
    if read is not None:
        return f"{read} is set: litellm reads it"
    proxy = _proxy_for(config.api_base or OPENAI_API_BASE)
    if proxy is not None:
        return f"{proxy} is set: litellm honours proxies"
    return None


def litellm_rewrites_parameters(name: str) -> bool:
    """Whether litellm maps this OpenAI model's parameters before sending them (o-series
    and GPT-5 reasoning models: `max_tokens` becomes `max_completion_tokens`, temperature
    is checked), as litellm's `OpenAIConfig.map_openai_params` decides (a test compares)."""
    last = name.split("/")[-1]
    o_series = len(last) > 1 and last[0] == "o" and last[1].isdigit()
    if o_series and openai_model_info(last) is not None:
        return True
    return any(m in name for m in _REASONING_MARKERS) and "gpt-5-chat" not in last


def _openai_variable(config: ModelConfig) -> str | None:
    """An environment variable the litellm path's OpenAI client reads and the lean client
    does not: where requests go without an api_base, the organisation or project billed."""
    names = [*(() if config.api_base else _BASE_VARIABLES), *_ACCOUNT_VARIABLES]
    return next((name for name in names if os.environ.get(name)), None)


def _proxy_for(url: str) -> str | None:
    """The proxy variable (HTTPS_PROXY, ...) that applies to `url`, None when none does.
    litellm's HTTP client honours them; the lean client's session does not."""
    from urllib.request import getproxies_environment, proxy_bypass  # http.client: ~30 ms

    parts = urlsplit(url)
    proxies = getproxies_environment()
    scheme = parts.scheme or "https"
    if not (proxies.get(scheme) or proxies.get("all")):
        return None
    if proxy_bypass(parts.hostname or ""):  # NO_PROXY (on Linux: the environment only)
        return None
    names = (f"{scheme}_proxy", "all_proxy")
    found = [n for n in names for v in (n, n.upper()) if os.environ.get(v)]
    return (found[0] if found else names[0]).upper()
