"""One hash for a retriever's settings, the same wherever they are read: the gate stage
stamps it on every `gates.jsonl` record and the policies read it back from a run
manifest's retriever block, so both name a retrieval configuration alike."""

from __future__ import annotations

import hashlib
from typing import Any

from assay.models._cache import canonical_json

#: keys that name where a file sits on this machine, not what the retriever does
MACHINE_KEYS = frozenset({"path", "model_dir", "resolved_path"})


def config_sha256(described: dict[str, Any]) -> str:
    """SHA-256 of a retriever's settings as canonical JSON, machine paths left out (the
    corpus and model hashes stay in), so the same retriever hashes alike anywhere."""

    def portable(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: portable(v) for k, v in value.items() if k not in MACHINE_KEYS}
        if isinstance(value, list):
            return [portable(v) for v in value]
        return value

    return hashlib.sha256(canonical_json(portable(described)).encode()).hexdigest()


__all__ = ["MACHINE_KEYS", "config_sha256"]
