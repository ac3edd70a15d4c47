"""Persistent response cache (diskcache, SQLite-backed, safe across processes).

Keys are SHA-256 over canonical JSON of everything that can change the output; they
never contain credentials. Only raw successful responses are stored.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from assay.models._config import ModelConfig
from assay.models._types import ChatRequest, RawResponse

CACHE_SCHEMA_VERSION = 1
CACHE_DIR_ENV = "ASSAY_CACHE_DIR"


def default_cache_dir() -> Path:
    env = os.environ.get(CACHE_DIR_ENV)
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "assay"


def redact_url(url: str | None) -> str | None:
    """Drop userinfo and query strings, where keys sometimes hide."""
    if url is None:
        return None
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"  # IPv6 literal
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path.rstrip("/"), "", ""))


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def cache_key_parts(
    config: ModelConfig, request: ChatRequest, *, structured_mode: str | None = None
) -> dict[str, Any]:
    """Everything that can change a response. `structured_mode` is the resolved mode
    ('auto' becomes what was actually sent), so a litellm upgrade that changes the
    resolution cannot serve stale entries."""
    schema_hash = (
        hashlib.sha256(canonical_json(request.response_schema).encode()).hexdigest()
        if request.response_schema is not None
        else None
    )
    return {
        "cache_schema": CACHE_SCHEMA_VERSION,
        "provider": config.provider,
        "api_base": redact_url(config.api_base),
        "model": config.model,
        "messages": [m.model_dump() for m in request.messages],
        "decoding": request.decoding.model_dump(),
        "structured_output": structured_mode or config.structured_output,
        "response_schema": schema_hash,
        "schema_name": request.schema_name,
        "extra_body": config.extra_body,
        "sample_index": request.sample_index,
    }


def cache_key(
    config: ModelConfig, request: ChatRequest, *, structured_mode: str | None = None
) -> str:
    parts = cache_key_parts(config, request, structured_mode=structured_mode)
    return hashlib.sha256(canonical_json(parts).encode()).hexdigest()


class ResponseCache:
    """A thin typed wrapper over `diskcache.Cache`."""

    def __init__(self, directory: str | Path | None = None) -> None:
        import diskcache

        self.directory = Path(directory) if directory is not None else default_cache_dir()
        self.directory.mkdir(parents=True, exist_ok=True)
        self._cache = diskcache.Cache(str(self.directory), size_limit=2**34)

    def get(self, key: str) -> RawResponse | None:
        value = self._cache.get(key)
        if value is None:
            return None
        try:
            return RawResponse.model_validate_json(value)
        except ValueError:
            return None  # an entry from an incompatible schema: treat as a miss

    def set(self, key: str, response: RawResponse) -> None:
        if response.cacheable:
            self._cache.set(key, response.model_dump_json())

    def __len__(self) -> int:
        return len(self._cache)

    def volume(self) -> int:
        return int(self._cache.volume())

    def clear(self) -> int:
        return int(self._cache.clear())

    def close(self) -> None:
        self._cache.close()
