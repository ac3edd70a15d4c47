"""The contract of a user-written claim-level policy: a class registered with
`@policy("name", version=N)` in `POLICIES`, configured by a pydantic `Config` built from
the `[[policies]]` block, whose pure `decide(inputs)` maps typed read-only views of a
run to a `ClaimDecision` per claim (and optionally a response outcome).

Everything else — the fail-closed guard, the default outcome rule, canonical records,
common metrics, manifest, `after =` chaining — is the framework's (`custom/_apply`), so a
user policy cannot assert a claim whose verification failed, whatever it returns.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Generic, Self, TypeVar, get_args, get_origin

from pydantic import ValidationError

from assay.core.registry import POLICIES
from assay.errors import SpecError, first_problem
from assay.policies.claim_selective._inputs import ClaimInput, ResponseInput
from assay.policies.custom import _apply
from assay.policies.custom._types import (
    ClaimPolicyDecisions,
    ClaimPolicyInputs,
    ClaimVerdict,
    PolicyConfig,
    best_support,
    verification_ok,
)
from assay.policies.engine._apply_common import Chain, Outputs, Settings
from assay.policies.engine._canonical import canonical_sha256
from assay.policies.engine._kind import PolicyKind, kind_class
from assay.policies.engine._run_inputs import RunInputs

C = TypeVar("C", bound=PolicyConfig)


class ClaimPolicy(PolicyKind, Generic[C]):
    """Base of a user claim-level policy: subclass `ClaimPolicy[MyConfig]` (the config
    class: `PolicyConfig` plus the block's own keys) and implement `decide_claim` (one
    claim at a time, only claims whose verification ended ok) or `decide` (all inputs at
    once). Stores no results on itself."""

    kind: ClassVar[str] = ""
    version: ClassVar[int] = 0
    Config: ClassVar[type[PolicyConfig]] = PolicyConfig
    config: C

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """`ClaimPolicy[MyConfig]` sets `Config = MyConfig` (the block's model)."""
        super().__init_subclass__(**kwargs)
        for base in getattr(cls, "__orig_bases__", ()):
            args = get_args(base)
            if get_origin(base) is ClaimPolicy and args and isinstance(args[0], type):
                cls.Config = args[0]

    def __init__(
        self, config: PolicyConfig | Mapping[str, Any], *, file: str | Path | None = None
    ) -> None:
        if isinstance(config, PolicyConfig):
            config = config.model_dump()
        self.config = self._parse(config, file)

    @classmethod
    def _parse(cls, block: Mapping[str, Any], file: str | Path | None) -> C:
        fields = {k: v for k, v in block.items() if k != "kind"}
        try:
            return cls.Config.model_validate(fields)  # type: ignore[return-value]
        except ValidationError as exc:
            problem = first_problem(exc)
            raise SpecError(problem.message, file=file, field=problem.field) from None

    @property
    def name(self) -> str:
        return self.config.name

    def describe(self) -> dict[str, Any]:
        """The resolved configuration, every default written out."""
        return self.config.model_dump(mode="json")

    @property
    def sha256(self) -> str:
        return canonical_sha256(
            {"kind": self.kind, "version": self.version, "config": self.describe()}
        )

    def decide(self, inputs: ClaimPolicyInputs) -> ClaimPolicyDecisions:
        """`decide_claim` for every claim whose verification ended ok (the framework
        withholds the others whatever this returns)."""
        claims = {
            (r.dataset, r.answer_id, c.claim_id): self.decide_claim(c, r)
            for r in inputs
            for c in r.claims
            if verification_ok(c)
        }
        return ClaimPolicyDecisions(claims=claims)

    def decide_claim(self, claim: ClaimInput, response: ResponseInput) -> ClaimVerdict:
        raise NotImplementedError(
            f"{type(self).__name__} implements neither decide nor decide_claim"
        )

    @classmethod
    def from_block(cls, block: Mapping[str, Any], file: str) -> Self:
        return cls(block, file=file)

    def apply(self, run: RunInputs, settings: Settings, chain: Chain | None, file: str) -> Outputs:
        """The framework's apply: the user's `decide`, guarded, recorded and measured."""
        return _apply.apply_custom(self, run, settings, chain, file)


P = TypeVar("P", bound=type[ClaimPolicy[Any]])


def policy(name: str, *, version: int, description: str | None = None) -> Callable[[P], P]:
    """Class decorator: register a `ClaimPolicy` subclass as policy kind `name`, so a
    `[[policies]]` block with `kind = name` builds and applies it."""

    def decorate(cls: P) -> P:
        if not (isinstance(cls, type) and issubclass(cls, ClaimPolicy)):
            raise TypeError(f"@policy({name!r}) decorates a ClaimPolicy subclass")
        if not issubclass(cls.Config, PolicyConfig):
            raise TypeError(f"{cls.__name__}.Config must subclass PolicyConfig")
        if version < 1:
            raise ValueError(f"@policy({name!r}): version must be >= 1")
        if _built_in(name):
            raise ValueError(f"@policy({name!r}): a built-in kind has that name")
        cls.kind, cls.version = name, version
        POLICIES.add(name, cls, description=description or _first_line(cls.__doc__))
        return cls

    return decorate


def _built_in(name: str) -> bool:
    """`name` is a kind registered by a class that is not a user `ClaimPolicy`."""
    found = kind_class(name)
    return found is not None and not issubclass(found, ClaimPolicy)


def _first_line(doc: str | None) -> str:
    return (doc or "").strip().split("\n", 1)[0].strip()


def custom_kind(kind: str) -> type[ClaimPolicy[Any]] | None:
    """The user policy class registered as `kind` (None: no such kind, or a built-in)."""
    found = kind_class(kind)
    return found if found is not None and issubclass(found, ClaimPolicy) else None


__all__ = [
    "ClaimPolicy",
    "ClaimPolicyDecisions",
    "ClaimPolicyInputs",
    "ClaimVerdict",
    "PolicyConfig",
    "best_support",
    "custom_kind",
    "policy",
    "verification_ok",
]
