"""One model client interface: cache, retries, concurrency and usage accounting."""

from __future__ import annotations

from typing import Any, Protocol

from assay.errors import ModelConfigError
from assay.models._cache import (
    CACHE_DIR_ENV,
    CACHE_SCHEMA_VERSION,
    ResponseCache,
    cache_key,
    cache_key_parts,
    default_cache_dir,
)
from assay.models._config import Decoding, ModelConfig, RetryPolicy
from assay.models._local import LocalCausalClient
from assay.models._types import CallResult, ChatRequest, RawResponse
from assay.redaction import redact_url


class ModelClient(Protocol):
    """Anything that turns a chat request into a call result (hosted or local)."""

    config: ModelConfig

    def describe(self) -> dict[str, Any]: ...

    async def complete(
        self, request: ChatRequest, *, use_cache: bool = True, refresh_cache: bool = False
    ) -> CallResult: ...


LOCAL_PROVIDERS = ("hf", "hf-nli")


def make_client(config: ModelConfig, cache: ResponseCache | None = None) -> ModelClient:
    """Pick the client for a model id: a local transformers model (`hf/...`) or litellm."""
    if config.provider == "hf":
        return LocalCausalClient(config, cache)
    if config.provider == "hf-nli":
        raise ModelConfigError(
            "hf-nli models are verifiers, not chat models; use them as a verifier "
            f"(assay.verifiers.LocalNLIVerifier({config.model!r}))"
        )
    from assay.models._hosted import HostedClient

    return HostedClient(config, cache)


__all__ = [
    "CACHE_DIR_ENV",
    "CACHE_SCHEMA_VERSION",
    "CallResult",
    "ChatRequest",
    "Decoding",
    "LocalCausalClient",
    "ModelClient",
    "ModelConfig",
    "RawResponse",
    "ResponseCache",
    "RetryPolicy",
    "cache_key",
    "cache_key_parts",
    "default_cache_dir",
    "make_client",
    "redact_url",
]
