"""A package's public names imported on first use (PEP 562), so importing the package
costs only what its caller uses: `import assay` stays cheap, and `assay run` loads the
stages, metrics and report formats its spec needs, not every one."""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from typing import Any


class LazyNames:
    """Where each lazily imported name of `package` lives; `get` imports it once and
    keeps it in the package's namespace (later lookups never come back here)."""

    def __init__(
        self, package: str, sources: Mapping[str, Iterable[str]], namespace: dict[str, Any]
    ) -> None:
        self.package = package
        self.namespace = namespace
        self.modules = {
            name: module if module.startswith("assay") else f"{package}.{module}"
            for module, names in sources.items()
            for name in names
        }

    def get(self, name: str) -> Any:
        """The package's `__getattr__`: the name's value, or AttributeError as Python
        gives it for a name the package does not have."""
        module = self.modules.get(name)
        if module is None:
            raise AttributeError(f"module {self.package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        self.namespace[name] = value
        return value

    def names(self, public: Iterable[str]) -> list[str]:
        """The package's `__dir__`: what it holds now and every public name."""
        return sorted({*self.namespace, *public})


__all__ = ["LazyNames"]
