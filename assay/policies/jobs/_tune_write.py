"""`--write-policy`: a policy file holding the tuned thresholds and a `tuned` provenance
block, in TOML so `assay policies apply --policy` reads it back.

A small writer of our own: no TOML writer is a dependency, and a policy block holds only
strings, numbers, booleans, lists of those and tables.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from assay.policies.engine._canonical import write_bytes_atomic
from assay.policies.engine._spec import PolicySpec
from assay.policies.engine._tuned import Tuned


def _drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_none(v) for v in value if v is not None]
    return value


def _key(key: str) -> str:
    """A bare key where TOML allows one, a quoted key otherwise."""
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_scalar(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_scalar(v)}" for k, v in value.items()) + " }"
    return json.dumps(str(value), ensure_ascii=False)


def _table(header: str, block: dict[str, Any], lines: list[str]) -> None:
    """Scalars of `block` under `header`, then each sub-table under its own header."""
    lines.append(header)
    tables = {k: v for k, v in block.items() if isinstance(v, dict)}
    for key, value in block.items():
        if key not in tables:
            lines.append(f"{_key(key)} = {_scalar(value)}")
    prefix = header.strip("[]")
    for key, value in tables.items():
        _table(f"[{prefix}.{_key(key)}]", value, lines)


def _tuned_keys(spec: PolicySpec) -> tuple[str, ...]:
    """The config keys the kind's tuning sets (its `tuned_keys`)."""
    found = spec.kind_class()
    return found.tuned_keys if found is not None else ()


def tuned_block(spec: PolicySpec, selected_config: dict[str, Any]) -> dict[str, Any]:
    """The policy's block as written, with the selected thresholds and provenance."""
    block = dict(spec.block)
    for key in _tuned_keys(spec):
        if selected_config.get(key) is not None:
            block[key] = selected_config[key]
    cleaned: dict[str, Any] = _drop_none(block)
    return cleaned


def write_tuned_policy(path: Path, spec: PolicySpec, selected_config: dict[str, Any]) -> None:
    """One `[[policies]]` block for the tuned policy, replacing `path` atomically."""
    lines: list[str] = []
    block = tuned_block(spec, selected_config)
    _table("[[policies]]", block, lines)
    write_bytes_atomic(path, ("\n".join(lines) + "\n").encode("utf-8"))


__all__ = ["Tuned", "tuned_block", "write_tuned_policy"]
