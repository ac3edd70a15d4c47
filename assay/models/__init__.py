"""Models: a transport (litellm, a local transformers model, a plugin's) wrapped once by
`Model` with the response cache, a concurrency bound, finite retries and accounting.

Transports are entries of `assay.core.registry.TRANSPORTS`, named by the model-id prefix
they serve: ``hf/<dir>`` is a local causal LM, ``hf-nli/<dir>`` a local NLI classifier
(a verifier, not a chat model), ``hf-ce/<dir>`` a local reranker (the gate stage's
cross-encoder), ``mock/<name>`` the scripted test transport, and every
other prefix goes to litellm. The local ones are registered lazily: torch and
transformers load only when such a model is used. A registered transport may name
`variants` that serve its models another way, by selector: litellm's are instructor
(``structured_output = "instructor"``) and the lean OpenAI-compatible client
(``transport = "openai"``, or ``"auto"``, the default, where `choose_transport` finds
every setting supported by it); `transport_for` has this one rule for every prefix.
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol

from assay.core.registry import TRANSPORTS
from assay.errors import ModelConfigError
from assay.models._cache import (
    CACHE_DIR_ENV,
    CACHE_SCHEMA_VERSION,
    ResponseCache,
    cache_key,
    cache_key_parts,
    check_cache_dir,
    default_cache_dir,
)
from assay.models._config import Decoding, ModelConfig, RetryPolicy
from assay.models._hosted import LiteLLMTransport
from assay.models._instructor import InstructorResponse, InstructorTransport
from assay.models._layers import Accounting, CachedResponses, ConcurrencyLimit, Retrier
from assay.models._mock import MockHTTPError, MockTransport
from assay.models._model import Model
from assay.models._transport import BatchTransport, Transport, TransportError
from assay.models._transport_choice import TransportChoice, choose_transport
from assay.models._types import CallResult, ChatRequest, ModelResult, RawResponse
from assay.redaction import redact_url


class ModelClient(Protocol):
    """Anything that turns a chat request into a call result (hosted or local)."""

    @property
    def config(self) -> ModelConfig: ...

    def describe(self) -> dict[str, Any]: ...

    async def complete(
        self, request: ChatRequest, *, use_cache: bool = True, refresh_cache: bool = False
    ) -> CallResult: ...


LOCAL_PROVIDERS = ("hf", "hf-nli", "hf-ce")
"""Model-id prefixes of the transports that run a model on this machine: no API cost, no
endpoint to check, torch/transformers needed. The one list; everything asks `is_local`."""
DEFAULT_TRANSPORT = "litellm"
"""The transport registered for every prefix no other transport claims (`transport_for`);
the spec's default `transport = "auto"` picks between it and the lean client."""


def is_local(model: str | None) -> bool:
    """Whether the model id names a local transformers model (`hf/`, `hf-nli/`, `hf-ce/`)."""
    provider, slash, _ = (model or "").partition("/")
    return bool(slash) and provider in LOCAL_PROVIDERS


TRANSPORTS.add(
    DEFAULT_TRANSPORT,
    LiteLLMTransport,
    description="hosted chat models through litellm (any other provider/ prefix)",
    package="assay",
)
TRANSPORTS.add(
    "mock",
    MockTransport,
    description="scripted chat replies for tests (mock/<name>), no network",
    package="assay",
)
TRANSPORTS.add_lazy(
    "hf",
    "assay.models._local_causal:LocalCausalTransport",
    description="a local transformers chat model (hf/<dir or hub id>), offline",
    package="assay",
)
TRANSPORTS.add_lazy(
    "hf-nli",
    "assay.models._local_nli:LocalNLITransport",
    description="a local transformers NLI classifier (hf-nli/<dir>): premise/hypothesis pairs",
    package="assay",
)
TRANSPORTS.add_lazy(
    "hf-ce",
    "assay.models._local_ce:LocalRerankerTransport",
    description="a local cross-encoder reranker (hf-ce/<dir>): query/passage logits",
    package="assay",
)


def _selector(config: ModelConfig) -> tuple[str, str] | None:
    """The variant of its prefix's transport a config asks for, and the setting that
    asked: instructor, or the client `choose_transport` picks when it is not litellm
    (None: the transport itself)."""
    if config.structured_output == "instructor":
        return "instructor", 'structured_output = "instructor"'
    chosen = choose_transport(config).name
    if chosen != DEFAULT_TRANSPORT:
        return chosen, f'transport = "{config.transport}"'
    return None


def _variant(factory: Any, name: str, config: ModelConfig) -> Any:
    """The transport registered as `factory`'s `variants` entry for the config's selector
    (imported on use); a transport without that variant is refused."""
    selector = _selector(config)
    if selector is None:
        return factory
    target = getattr(factory, "variants", {}).get(selector[0])
    if target is None:
        raise ModelConfigError(
            f"{selector[1]} is for hosted models reached through litellm; "
            f"{config.model!r} is served by the {name!r} transport"
        )
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


def transport_for(config: ModelConfig) -> Transport[ChatRequest, RawResponse]:
    """The chat transport registered under the model id's prefix (litellm otherwise), or
    the variant of it that the config selects (`_selector`: instructor, or the lean
    OpenAI-compatible client that `choose_transport` picks)."""
    name = config.provider if config.provider in TRANSPORTS else DEFAULT_TRANSPORT
    factory: Any = _variant(TRANSPORTS.get(name), name, config)
    if getattr(factory, "request_type", ChatRequest) is not ChatRequest:
        refusal = getattr(factory, "not_chat", "{model!r} is not a chat model")
        raise ModelConfigError(refusal.format(model=config.model))
    transport: Transport[ChatRequest, RawResponse] = factory(config)
    return transport


def make_client(
    config: ModelConfig, cache: ResponseCache | None = None
) -> Model[ChatRequest, RawResponse]:
    """A chat model for a model id: its registered transport under the `Model` layers."""
    return Model(transport_for(config), cache)


def __getattr__(name: str) -> Any:
    """The local transports load on demand (their modules are cheap; torch is not)."""
    if name == "OpenAIHTTPTransport":
        from assay.models._openai_http import OpenAIHTTPTransport

        return OpenAIHTTPTransport
    if name == "LocalCausalTransport":
        from assay.models._local_causal import LocalCausalTransport

        return LocalCausalTransport
    if name in ("LocalNLITransport", "PairRequest", "PairScores"):
        from assay.models import _local_nli

        return getattr(_local_nli, name)
    if name in ("LocalRerankerTransport", "RerankRequest", "RerankScore"):
        from assay.models import _local_ce

        return getattr(_local_ce, name)
    raise AttributeError(name)


__all__ = [
    "CACHE_DIR_ENV",
    "CACHE_SCHEMA_VERSION",
    "DEFAULT_TRANSPORT",
    "LOCAL_PROVIDERS",
    "is_local",
    "Accounting",
    "BatchTransport",
    "CachedResponses",
    "CallResult",
    "ChatRequest",
    "ConcurrencyLimit",
    "Decoding",
    "InstructorResponse",
    "InstructorTransport",
    "LiteLLMTransport",
    "LocalCausalTransport",
    "LocalNLITransport",
    "LocalRerankerTransport",
    "MockHTTPError",
    "MockTransport",
    "Model",
    "ModelClient",
    "ModelConfig",
    "ModelResult",
    "OpenAIHTTPTransport",
    "PairRequest",
    "PairScores",
    "RawResponse",
    "RerankRequest",
    "RerankScore",
    "ResponseCache",
    "Retrier",
    "RetryPolicy",
    "Transport",
    "TransportChoice",
    "TransportError",
    "cache_key",
    "cache_key_parts",
    "check_cache_dir",
    "choose_transport",
    "default_cache_dir",
    "make_client",
    "redact_url",
    "transport_for",
]
