"""What every policy kind is: a pure, versioned decision function with a description.

A policy object is built from its resolved configuration (every default written out),
`describe()` returns that configuration (what the policy manifest records and hashes),
and `decide(inputs)` maps recorded inputs to decisions without calling a model or
storing anything on itself. Kinds are registered in `assay.core.registry.POLICIES`
(`@POLICIES.register("claim_selective")` on the class or factory; plugins through the
`assay.plugins` entry-point group). A user's claim-level kind subclasses
`ClaimPolicy[Config]` and registers with `@policy(kind, version=N)` (`_custom`): the
framework then guards, records and measures its decisions (`_custom_apply`).
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
