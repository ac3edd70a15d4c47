"""Canonical JSON: what makes policy outputs byte-identical for the same inputs.

UTF-8, keys sorted, separators (",", ":"), no ASCII escaping, no NaN, floats in Python's
shortest round-trip form, one record per line ending in "\n". Hashes are sha256 of it.
Every file is written to a temporary sibling and renamed over the target, so a crash or
a full disk mid-write never leaves a truncated output where an earlier one was.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from assay.core.atomic import write_bytes_atomic as write_bytes
from assay.errors import SpecError


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


def write_bytes_atomic(path: Path, data: bytes) -> str:
    """Replace `path` with `data` in one rename (`assay.core.atomic`); returns the
    sha256 of `data`, which provenance records name."""
    write_bytes(path, data)
    return hashlib.sha256(data).hexdigest()


def check_target(
    path: Path,
    field: str,
    *,
    inputs: Iterable[tuple[str, Path]] = (),
    run_dir: Path | None = None,
) -> None:
    """Refuse, before any work, an output file that could not be written or would
    replace an input: its folder must exist, it must not be a folder, one of `inputs`
    ((option, path) pairs), nor an existing file of `run_dir` (records, manifests,
    policy outputs; a new file there is fine)."""
    if path.is_dir():
        raise SpecError(f"{path} is a directory; name a file", field=field)
    if not path.parent.is_dir():
        raise SpecError(f"the folder {path.parent} is missing; create it first", field=field)
    for option, source in inputs:
        if source.exists() and path.exists() and path.samefile(source):
            raise SpecError(f"{path} is the file {option} reads; write elsewhere", field=field)
    if run_dir is not None and path.exists() and path.resolve().is_relative_to(run_dir.resolve()):
        raise SpecError(
            f"{path} is a file of the run directory {run_dir}; write elsewhere", field=field
        )


def write_canonical_jsonl(path: Path, records: Iterable[Any]) -> str:
    """Write records one canonical line each; returns the file's sha256."""
    data = "".join(canonical_json(r) + "\n" for r in records).encode("utf-8")
    return write_bytes_atomic(path, data)


def write_canonical_json(path: Path, value: Any) -> str:
    """Write one canonical JSON document (with a final newline); returns its sha256."""
    return write_bytes_atomic(path, (canonical_json(value) + "\n").encode("utf-8"))


__all__ = [
    "canonical_json",
    "canonical_sha256",
    "check_target",
    "write_bytes_atomic",
    "write_canonical_json",
    "write_canonical_jsonl",
]
