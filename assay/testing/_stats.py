"""What the fake server has seen: counters and (bounded) request/header logs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ServerStats:
    """A snapshot of what the server has seen since start or the last reset.

    ``requests``/``headers`` keep at most ``max_recorded`` entries (the oldest are dropped)
    so a long benchmark cannot grow memory without bound; the counters are exact.
    Header names are lower-cased.
    """

    total: int = 0
    by_path: dict[str, int] = field(default_factory=dict)
    by_status: dict[int, int] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    scripted_remaining: int = 0

    def to_json(self) -> dict[str, Any]:
        """JSON form for ``GET /_control/stats`` (status codes become string keys)."""
        return {
            "total": self.total,
            "by_path": dict(self.by_path),
            "by_status": {str(k): v for k, v in self.by_status.items()},
            "requests": list(self.requests),
            "headers": list(self.headers),
            "scripted_remaining": self.scripted_remaining,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ServerStats:
        """Inverse of :meth:`to_json`, for clients of a spawned server."""
        return cls(
            total=int(data.get("total", 0)),
            by_path={str(k): int(v) for k, v in data.get("by_path", {}).items()},
            by_status={int(k): int(v) for k, v in data.get("by_status", {}).items()},
            requests=list(data.get("requests", [])),
            headers=list(data.get("headers", [])),
            scripted_remaining=int(data.get("scripted_remaining", 0)),
        )
