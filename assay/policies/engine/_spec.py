"""`[[policies]]` blocks: read from a policy TOML file or a run spec,
each validated by its kind's own parser at load, so a bad block stops before anything is
read from a run directory or written under it.

Only the keys every kind shares (`name`, `kind`) are checked here; the rest of a block
(`verifier`, `gate`, `after`, thresholds...) goes whole to the kind's parser, which owns
its defaults and its one-line errors.
"""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from assay.errors import SpecError
from assay.inputs import read_text
from assay.policies.engine._kind import PolicyKind, kind_class, known_kinds


class PolicySpec(BaseModel):
    """One validated `[[policies]]` block: its kind, the block as written, and the file
    it came from (for error lines)."""

    model_config = ConfigDict(frozen=True)

    name: str
    kind: str
    block: dict[str, Any]
    file: str

    def build(self) -> Any:
        """The policy the block describes, built by the class registered as its kind in
        `POLICIES` (built-in or a user's `@policy`); the kind's parser validates it."""
        found = kind_class(self.kind)
        if found is None:
            raise SpecError(
                f"policy kind {self.kind!r} is not registered here: import the module that "
                "defines it, or install its plugin",
                file=self.file,
            )
        return found.from_block(self.block, self.file)

    def kind_class(self) -> type[PolicyKind] | None:
        """The class registered as this block's kind (None: not registered here)."""
        return kind_class(self.kind)


def _spec_of(block: object, index: int, file: str) -> PolicySpec:
    where = f"policies[{index}]"
    if not isinstance(block, dict):
        raise SpecError("expected a table", file=file, field=where)
    name = block.get("name")
    if not isinstance(name, str) or not name.strip():
        raise SpecError("every policy needs a non-empty name", file=file, field=f"{where}.name")
    if "/" in name or "\\" in name or name in {".", ".."}:
        raise SpecError(f"{name!r} cannot name a directory", file=file, field=f"{where}.name")
    kind = block.get("kind")
    kinds = known_kinds()
    if kind not in kinds:
        known = ", ".join(kinds)
        raise SpecError(
            f"unknown policy kind {kind!r}; use one of {known}", file=file, field=f"{where}.kind"
        )
    spec = PolicySpec(name=name, kind=str(kind), block=dict(block), file=file)
    spec.build()  # validated at load: the kind's parser raises the one-line error
    return spec


def parse_policies(blocks: object, *, file: str | Path) -> list[PolicySpec]:
    """The `policies` array of a TOML document as validated specs (names unique)."""
    where = str(file)
    if blocks is None:
        return []
    if not isinstance(blocks, list):
        raise SpecError("use [[policies]] blocks", file=where, field="policies")
    specs = [_spec_of(block, i, where) for i, block in enumerate(blocks)]
    seen: set[str] = set()
    for i, spec in enumerate(specs):
        if spec.name in seen:
            raise SpecError(
                f"policy name {spec.name!r} appears twice", file=where, field=f"policies[{i}].name"
            )
        seen.add(spec.name)
    return specs


def load_policy_file(path: Path) -> list[PolicySpec]:
    """Every `[[policies]]` block of a policy file or a run spec."""
    try:
        data = tomllib.loads(read_text(path))  # a UTF-8 byte-order mark is dropped
    except FileNotFoundError:
        raise SpecError("file not found", file=path) from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"not valid TOML: {exc}", file=path) from None
    specs = parse_policies(data.get("policies"), file=path)
    if not specs:
        raise SpecError("no [[policies]] block", file=path, field="policies")
    return specs


def select(specs: Sequence[PolicySpec], name: str | None) -> list[PolicySpec]:
    """The spec called `name` (every spec when None); an unknown name is one line."""
    if name is None:
        return list(specs)
    chosen = [s for s in specs if s.name == name]
    if not chosen:
        known = ", ".join(s.name for s in specs)
        raise SpecError(f"no policy named {name!r} (the file has {known})", field="--name")
    return chosen


def by_name(specs: Sequence[PolicySpec]) -> dict[str, PolicySpec]:
    return {s.name: s for s in specs}


__all__ = [
    "PolicySpec",
    "by_name",
    "known_kinds",
    "load_policy_file",
    "parse_policies",
    "select",
]
