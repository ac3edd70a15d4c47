"""Persistent response cache (diskcache, SQLite-backed, safe across processes).

Keys are SHA-256 over canonical JSON of everything that can change the output; they
never depend on credentials (`api_base` and `extra_body` are redacted first; a header whose
name is not a credential enters by a digest of its value). Only raw
successful responses are stored.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar, overload

from pydantic import BaseModel

from assay.errors import PathError
from assay.models._cache_reads import ReadSnapshot, stored_values
from assay.models._config import ModelConfig
from assay.models._types import ChatRequest, RawResponse
from assay.prompts._prompt import Message
from assay.redaction import redact_for_cache_key, redact_url

CACHE_SCHEMA_VERSION = 1
CACHE_DIR_ENV = "ASSAY_CACHE_DIR"

StoredT = TypeVar("StoredT", bound=BaseModel)


def default_cache_dir() -> Path:
    """$ASSAY_CACHE_DIR (empty means unset, as for XDG variables), else the XDG cache."""
    env = os.environ.get(CACHE_DIR_ENV)
    if env and not env.strip():
        raise PathError(f"{CACHE_DIR_ENV}={env!r} is only whitespace; unset it or name a folder")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "assay"


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


_SCHEMA_HASHES: dict[int, tuple[dict[str, Any], str]] = {}


def _schema_hash(schema: dict[str, Any] | None) -> str | None:
    """Hash a response schema once per schema object (judges reuse the same dict)."""
    if schema is None:
        return None
    hit = _SCHEMA_HASHES.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    digest = hashlib.sha256(canonical_json(schema).encode()).hexdigest()
    if len(_SCHEMA_HASHES) > 1024:
        _SCHEMA_HASHES.clear()
    _SCHEMA_HASHES[id(schema)] = (schema, digest)  # keeps the dict alive: ids stay unique
    return digest


def cache_key_parts(
    config: ModelConfig, request: ChatRequest, *, structured_mode: str | None = None
) -> dict[str, Any]:
    """Everything that can change a response. `structured_mode` is the resolved mode
    ('auto' becomes what was actually sent), so a litellm upgrade that changes the
    resolution cannot serve stale entries."""
    schema_hash = _schema_hash(request.response_schema)
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
        "extra_body": redact_for_cache_key(config.extra_body) if config.extra_body else {},
        "sample_index": request.sample_index,
    }


def cache_key(
    config: ModelConfig, request: ChatRequest, *, structured_mode: str | None = None
) -> str:
    return hash_parts(cache_key_parts(config, request, structured_mode=structured_mode))


def hash_parts(parts: dict[str, Any]) -> str:
    """The key of a set of key parts (a transport may add its own to `cache_key_parts`)."""
    return hashlib.sha256(canonical_json(parts).encode()).hexdigest()


_MESSAGES_SLOT = "\x00assay-messages\x00"
_SAMPLE_SLOT = "\x00assay-sample\x00"


def messages_json(messages: list[Message]) -> str:
    """`canonical_json` of the dumped messages, without pydantic's `model_dump` (a
    `Message` is exactly a role and a content; a test checks the two agree)."""
    return json.dumps(
        [{"content": m.content, "role": m.role} for m in messages],
        separators=(",", ":"),
        ensure_ascii=False,
    )


class ChatKeys:
    """`cache_key` for one config and structured mode, fast: everything but the messages
    and the sample index is serialised once per decoding/schema, and the key is the same
    SHA-256 of the same canonical JSON (a cache hit costs little more than its key)."""

    def __init__(self, config: ModelConfig, structured_mode: str | None) -> None:
        self.config = config
        self.structured_mode = structured_mode
        self._frames: dict[tuple[int, int, str], tuple[Any, Any, tuple[str, str, str]]] = {}

    def _frame(self, request: ChatRequest) -> tuple[str, str, str] | None:
        """The canonical JSON around the messages and the sample index, or None when a
        slot marker is not unique in it (a config that contains the marker text)."""
        ident = (id(request.decoding), id(request.response_schema), request.schema_name)
        hit = self._frames.get(ident)
        if hit is not None and hit[0] is request.decoding and hit[1] is request.response_schema:
            return hit[2]
        parts = cache_key_parts(self.config, request, structured_mode=self.structured_mode)
        parts.update(messages=_MESSAGES_SLOT, sample_index=_SAMPLE_SLOT)
        text = canonical_json(parts)
        messages = json.dumps(_MESSAGES_SLOT)
        sample = json.dumps(_SAMPLE_SLOT)
        if text.count(messages) != 1 or text.count(sample) != 1:
            return None
        head, rest = text.split(messages)
        middle, tail = rest.split(sample)
        if len(self._frames) > 256:
            self._frames.clear()
        self._frames[ident] = (request.decoding, request.response_schema, (head, middle, tail))
        return head, middle, tail

    def key(self, request: ChatRequest) -> str:
        frame = self._frame(request)
        if frame is None or type(request.sample_index) is not int:
            return cache_key(self.config, request, structured_mode=self.structured_mode)
        head, middle, tail = frame
        text = f"{head}{messages_json(request.messages)}{middle}{request.sample_index}{tail}"
        return hashlib.sha256(text.encode()).hexdigest()


_CACHE_FIX = f"pass --cache-dir (or set {CACHE_DIR_ENV} to) a writable directory"


def check_cache_dir(directory: str | Path | None) -> Path:
    """The cache directory `directory` (None: the default) names, refused when it is an
    existing file: also for a run that calls no model, whose manifest records it."""
    chosen = Path(directory) if directory is not None else default_cache_dir()
    if chosen.exists() and not chosen.is_dir():
        source = "" if directory is not None else f" (from {CACHE_DIR_ENV})"
        raise PathError(f"cache directory{source} is an existing file; {_CACHE_FIX}", file=chosen)
    return chosen


def _open_cache(directory: Path, diskcache: Any) -> Any:
    """The diskcache store; a path that is a file or cannot be written is one user error."""
    import sqlite3

    fix = _CACHE_FIX
    try:
        directory.mkdir(parents=True, exist_ok=True)
        # no memory map and a 4 MiB page cache: diskcache's defaults (64 MiB mapped,
        # 32 MiB of pages) grew a long run's memory with the cache file's size. No
        # culling (`cull_limit=0`): entries never expire and the cache is never trimmed
        # to a size, so the expiry and size queries diskcache makes after every write
        # (a third of a write's cost) have nothing to find.
        return diskcache.Cache(
            str(directory),
            size_limit=2**34,
            cull_limit=0,
            sqlite_mmap_size=0,
            sqlite_cache_size=2**10,
        )
    except (OSError, sqlite3.Error) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        msg = f"cannot open the cache directory ({reason}); {fix}"
        raise PathError(msg, file=directory) from None


def _stored_as(value: str | None, kind: type[BaseModel]) -> BaseModel | None:
    """A stored entry as `kind`; one written under an incompatible schema is a miss."""
    if value is None:
        return None
    try:
        return kind.model_validate_json(value)
    except ValueError:
        return None


class ResponseCache:
    """A thin typed wrapper over `diskcache.Cache` that batches writes.

    Writes are buffered and committed in one transaction per `batch_size` entries (or
    after `max_delay_s`): one SQLite transaction per response was a third of assay's
    per-call overhead. A process killed before a flush loses only those cache entries;
    the run's records already hold the raw outputs.
    """

    def __init__(
        self,
        directory: str | Path | None = None,
        *,
        batch_size: int = 64,
        max_delay_s: float = 1.0,
    ) -> None:
        import diskcache

        self.directory = check_cache_dir(directory)
        self._cache = _open_cache(self.directory, diskcache)
        self._reads = ReadSnapshot(self._cache)
        self._pending: dict[str, str] = {}
        self._first_pending = 0.0
        self.batch_size = batch_size
        self.max_delay_s = max_delay_s

    @overload
    def get(self, key: str) -> RawResponse | None: ...

    @overload
    def get(self, key: str, kind: type[StoredT]) -> StoredT | None: ...

    def get(self, key: str, kind: type[BaseModel] = RawResponse) -> BaseModel | None:
        """The stored response as `kind` (a chat `RawResponse` unless told otherwise)."""
        value = self._pending.get(key)
        if value is None:
            with self._reads:
                value = self._cache.get(key)
        return _stored_as(value, kind)

    @overload
    def get_many(self, keys: Sequence[str]) -> list[RawResponse | None]: ...

    @overload
    def get_many(self, keys: Sequence[str], kind: type[StoredT]) -> list[StoredT | None]: ...

    def get_many(self, keys: Sequence[str], kind: type[BaseModel] = RawResponse) -> list[Any]:
        """`get` for each key, in order: unwritten entries first, the rest read in one
        query (`stored_values`), one read of the snapshot."""
        values = {key: value for key in keys if (value := self._pending.get(key)) is not None}
        unread = [key for key in dict.fromkeys(keys) if key not in values]
        if unread:
            with self._reads:
                values.update(stored_values(self._cache, unread))
        return [_stored_as(values.get(key), kind) for key in keys]

    def set(self, key: str, response: BaseModel) -> None:
        """Store a response, unless it says it is not `cacheable` (refusal, truncation)."""
        if not getattr(response, "cacheable", True):
            return
        if not self._pending:
            self._first_pending = time.monotonic()
        self._pending[key] = response.model_dump_json()
        if (
            len(self._pending) >= self.batch_size
            or time.monotonic() - self._first_pending >= self.max_delay_s
        ):
            self.flush()

    def flush(self) -> None:
        """Commit buffered writes in one transaction."""
        if not self._pending:
            return
        pending, self._pending = self._pending, {}
        self._reads.end()  # a write sees, and is seen by, every read after it
        with self._cache.transact():
            for key, value in pending.items():
                self._cache.set(key, value)

    def __len__(self) -> int:
        self.flush()
        return len(self._cache)

    def volume(self) -> int:
        self.flush()
        return int(self._cache.volume())

    def clear(self) -> int:
        self._pending.clear()
        self._reads.end()
        return int(self._cache.clear())

    def close(self) -> None:
        self.flush()
        self._reads.end()
        self._cache.close()
