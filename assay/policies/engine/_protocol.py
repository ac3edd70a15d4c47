"""What every policy is as a decision function: pure, versioned, described.

A policy object is built from its resolved configuration (every default written out),
`describe()` returns that configuration (what the policy manifest records and hashes),
and `decide(inputs)` maps recorded inputs to decisions without calling a model or
storing anything on itself. What the jobs do with a policy over a run directory (apply,
tune, sweep, compare, report) are the hooks of `PolicyKind` (`engine/_kind.py`), the base
class every registered kind derives — the built-in ones (`@POLICIES.register(kind)`) and
a user's claim-level kind (`ClaimPolicy[Config]` with `@policy(kind, version=N)`).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Policy(Protocol):
    """A deterministic decision function over recorded verdicts."""

    kind: str
    version: int

    @property
    def name(self) -> str: ...

    def describe(self) -> dict[str, Any]: ...

    def decide(self, inputs: Any) -> Any: ...


__all__ = ["Policy"]
