"""One registry type for everything a user can add to assay.

Judges, decomposers, verifiers, output schemas, dataset importers, model transports and
report formats are each a `Registry`: a name -> object map filled three ways:

- built-ins register themselves (decorator) in the module named by `builtins`, which is
  imported the first time the registry is read, so `import assay` stays cheap;
- optional dependencies register lazily as ``"module:attribute"`` strings, imported
  only when that name is used;
- third-party packages declare an entry point in the group ``assay.plugins`` whose
  target is a module (registering on import) or a zero-argument function. They are
  loaded when a lookup misses the built-ins or a registry is listed, so a run that
  names only built-ins never reads them (a plugin adds names; a built-in's name is found
  without it).

Lookups of an unknown name raise `UnknownName`, which lists the names that exist.
"""

from __future__ import annotations

import functools
import importlib
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict

from assay.errors import AssayError

__all__ = [
    "DECOMPOSERS",
    "ENTRY_POINT_GROUP",
    "IMPORTERS",
    "JUDGES",
    "REGISTRIES",
    "REPORT_FORMATS",
    "SCHEMAS",
    "TRANSPORTS",
    "VERIFIERS",
    "PluginError",
    "Registered",
    "Registry",
    "UnknownName",
    "load_plugins",
    "scoped_registries",
]

ENTRY_POINT_GROUP = "assay.plugins"

T = TypeVar("T")


class UnknownName(AssayError):
    """A spec or call named something no registry entry has."""


class PluginError(AssayError):
    """An installed plugin failed to load; names the entry point and its package."""


class Registered(BaseModel):
    """What `assay list` shows for one entry."""

    model_config = ConfigDict(frozen=True)

    kind: str
    name: str
    description: str
    package: str
    target: str


@functools.cache
def _distributions() -> Mapping[str, list[str]]:
    """Top-level module -> distributions, read once and only for `Registered.package`:
    scanning every installed package takes 0.4-0.8 s."""
    import importlib.metadata  # here: ~30 ms that a lookup never needs

    return importlib.metadata.packages_distributions()


def _package_of(module: str) -> str:
    """The distribution that ships `module` (``assay`` for built-ins)."""
    top = module.split(".", 1)[0]
    dists = _distributions().get(top)
    return dists[0] if dists else top


def _first_line(doc: str | None) -> str:
    return (doc or "").strip().split("\n", 1)[0].strip()


class _Entry(Generic[T]):
    """One registration. Its package is looked up only when `info` is read (`assay list`,
    an error message): mapping modules to distributions scans every installed package
    (0.4-0.8 s), which a run that only looks names up never needs."""

    def __init__(
        self, kind: str, name: str, description: str, target: str, package: str, obj: T | None
    ) -> None:
        self._fields = (kind, name, description, target, package)
        self.target = target
        self.obj = obj
        self._info: Registered | None = None

    @property
    def info(self) -> Registered:
        if self._info is None:
            kind, name, description, target, package = self._fields
            self._info = Registered(
                kind=kind,
                name=name,
                description=description,
                package=package or _package_of(target.partition(":")[0]),
                target=target,
            )
        return self._info

    def load(self) -> T:
        if self.obj is None:
            module, _, attr = self.target.partition(":")
            self.obj = getattr(importlib.import_module(module), attr)
        return self.obj


class Registry(Generic[T]):
    """Named objects of one kind (e.g. judge factories), built-in and from plugins."""

    def __init__(
        self, kind: str, *, builtins: str | None = None, plural: str | None = None
    ) -> None:
        self.kind = kind
        self.plural = plural or f"{kind}s"
        self._builtins = builtins
        self._entries: dict[str, _Entry[T]] = {}
        self._lock = threading.RLock()
        self._loaded = False

    def register(self, name: str, *, description: str | None = None) -> Callable[[T], T]:
        """Decorator: ``@JUDGES.register("my-judge")`` on a factory or class."""

        def decorate(obj: T) -> T:
            self.add(name, obj, description=description or _first_line(obj.__doc__))
            return obj

        return decorate

    def add(self, name: str, obj: T, *, description: str = "", package: str = "") -> None:
        """Register an already-imported object under `name` (last registration wins)."""
        module = getattr(obj, "__module__", None) or "unknown"
        qualname = getattr(obj, "__qualname__", type(obj).__qualname__)
        entry = _Entry(self.kind, name, description, f"{module}:{qualname}", package, obj)
        with self._lock:
            self._entries[name] = entry

    def add_lazy(self, name: str, target: str, *, description: str, package: str = "") -> None:
        """Register ``"module:attribute"`` without importing it (optional dependencies)."""
        entry: _Entry[T] = _Entry(self.kind, name, description, target, package, None)
        with self._lock:
            self._entries[name] = entry

    def _ensure_loaded(self, *, plugins: bool = True) -> None:
        """Import the built-ins once; with `plugins`, the installed plugins too. A lookup
        of a built-in name skips the plugins' entry points (read only on a miss)."""
        if not self._loaded:
            with self._lock:
                if not self._loaded:
                    self._loaded = True
                    if self._builtins:
                        importlib.import_module(self._builtins)
        if plugins:
            load_plugins()

    def _find(self, name: str) -> _Entry[T] | None:
        self._ensure_loaded(plugins=False)
        entry = self._entries.get(name)
        if entry is None and not _plugins_loaded:
            load_plugins()
            entry = self._entries.get(name)
        return entry

    def get(self, name: str) -> T:
        """The object registered as `name`; `UnknownName` lists the known ones."""
        entry = self._find(name)
        if entry is None:
            known = ", ".join(sorted(self._entries)) or "none"
            raise UnknownName(f"unknown {self.kind} {name!r}; known: {known}")
        return entry.load()

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._find(name) is not None

    def __iter__(self) -> Iterator[str]:
        self._ensure_loaded()
        return iter(sorted(self._entries))

    def names(self) -> list[str]:
        return list(self)

    def info(self, name: str) -> Registered:
        self.get(name)
        return self._entries[name].info

    @contextmanager
    def scoped(self) -> Iterator[None]:
        """Undo every registration made inside the block (tests, notebooks)."""
        self._ensure_loaded()
        with self._lock:
            saved = dict(self._entries)
        try:
            yield
        finally:
            with self._lock:
                self._entries.clear()
                self._entries.update(saved)

    def entries(self) -> list[Registered]:
        self._ensure_loaded()
        return [self._entries[n].info for n in sorted(self._entries)]


_plugins_lock = threading.Lock()
_plugins_loaded = False


def load_plugins(*, reload: bool = False) -> list[str]:
    """Import every ``assay.plugins`` entry point once; returns their names.

    A plugin that fails to import is an error naming it, not a silent omission: a spec
    that relies on it would otherwise fail later with a less useful message.
    """
    global _plugins_loaded
    with _plugins_lock:
        if _plugins_loaded and not reload:
            return []
        _plugins_loaded = True
        loaded: list[str] = []
        import importlib.metadata

        for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
            package = ep.dist.name if ep.dist is not None else ep.value
            try:
                target: Any = ep.load()
                if callable(target) and not isinstance(target, type):
                    target()
            except Exception as exc:
                raise PluginError(
                    f"plugin {ep.name!r} (package {package}) failed to load: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
            loaded.append(ep.name)
        return loaded


JUDGES: Registry[Callable[..., Any]] = Registry("judge", builtins="assay.judges")
DECOMPOSERS: Registry[Callable[..., Any]] = Registry("decomposer", builtins="assay.decomposers")
VERIFIERS: Registry[Callable[..., Any]] = Registry("verifier", builtins="assay.verifiers")
SCHEMAS: Registry[type[BaseModel]] = Registry("schema", builtins="assay.prompts")
IMPORTERS: Registry[Callable[..., Any]] = Registry(
    "importer", builtins="assay.datasets._builtin_importers"
)
TRANSPORTS: Registry[Callable[..., Any]] = Registry("transport", builtins="assay.models")
REPORT_FORMATS: Registry[Callable[..., Any]] = Registry(
    "report format", builtins="assay.report._formats"
)
POLICIES: Registry[Callable[..., Any]] = Registry(
    "policy", builtins="assay.policies", plural="policies"
)

REGISTRIES: tuple[Registry[Any], ...] = (
    JUDGES,
    DECOMPOSERS,
    VERIFIERS,
    SCHEMAS,
    IMPORTERS,
    TRANSPORTS,
    REPORT_FORMATS,
    POLICIES,
)


@contextmanager
def scoped_registries() -> Iterator[None]:
    """`Registry.scoped` for every registry at once."""
    with ExitStack() as stack:
        for registry in REGISTRIES:
            stack.enter_context(registry.scoped())
        yield
