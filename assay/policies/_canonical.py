"""Canonical JSON (§5.8): what makes policy outputs byte-identical for the same inputs.

UTF-8, keys sorted, separators (",", ":"), no ASCII escaping, no NaN, floats in Python's
shortest round-trip form, one record per line ending in "\n". Hashes are sha256 of it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return value


def canonical_json(value: Any) -> str:
    """One value as canonical JSON text (no trailing newline)."""
    return json.dumps(
        _plain(value),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
        default=_plain,
    )


def canonical_sha256(value: Any) -> str:
    """sha256 hex of the canonical JSON of `value`."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def write_canonical_jsonl(path: Path, records: Iterable[Any]) -> str:
    """Write records one canonical line each; returns the file's sha256."""
    data = "".join(canonical_json(r) + "\n" for r in records).encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def write_canonical_json(path: Path, value: Any) -> str:
    """Write one canonical JSON document (with a final newline); returns its sha256."""
    data = (canonical_json(value) + "\n").encode("utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


__all__ = ["canonical_json", "canonical_sha256", "write_canonical_json", "write_canonical_jsonl"]
