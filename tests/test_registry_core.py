"""The generic registry: decorator and lazy registration, lookups, plugins via entry points."""

from __future__ import annotations

import importlib.metadata
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from assay.core import registry as reg
from assay.core.registry import PluginError, Registry, UnknownName


def _fresh(builtins: str | None = None) -> Registry[Any]:
    return Registry("widget", builtins=builtins)


def test_decorator_registers_with_docstring_description_and_package() -> None:
    widgets = _fresh()

    @widgets.register("shiny")
    def make_shiny() -> str:
        """A shiny widget.

        More text that is not the description."""
        return "shiny"

    assert widgets.get("shiny") is make_shiny
    info = widgets.info("shiny")
    assert (info.kind, info.name, info.description) == ("widget", "shiny", "A shiny widget.")
    assert info.target.endswith(".<locals>.make_shiny")
    assert "shiny" in widgets and widgets.names() == ["shiny"]


def test_unknown_name_lists_the_known_ones() -> None:
    widgets = _fresh()
    widgets.add("a", object(), description="first")
    widgets.add("b", object(), description="second")
    with pytest.raises(UnknownName, match=r"unknown widget 'c'; known: a, b"):
        widgets.get("c")


def test_lazy_entries_import_only_when_used(monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("assay_test_lazy_mod")
    module.thing = "loaded"  # type: ignore[attr-defined]
    widgets = _fresh()
    widgets.add_lazy("late", "assay_test_lazy_mod:thing", description="imported late")
    assert widgets.info  # listing works without importing the target
    assert [e.name for e in widgets.entries()] == ["late"]
    monkeypatch.setitem(sys.modules, "assay_test_lazy_mod", module)
    assert widgets.get("late") == "loaded"


def test_builtins_module_is_imported_on_first_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    widgets = _fresh(builtins="assay_test_builtins_mod")
    monkeypatch.setattr(reg, "_test_widgets", widgets, raising=False)
    (tmp_path / "assay_test_builtins_mod.py").write_text(
        "from assay.core import registry\n"
        "registry._test_widgets.add('builtin-one', object(), description='built in')\n"
        "w = registry._test_widgets\n"
        "w.import_count = getattr(w, 'import_count', 0) + 1\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "assay_test_builtins_mod", raising=False)
    assert widgets.names() == ["builtin-one"]
    assert widgets.names() == ["builtin-one"]
    assert widgets.import_count == 1  # type: ignore[attr-defined]


class _FakeDist:
    name = "assay-fake-plugin"


class _FakeEntryPoint:
    def __init__(self, name: str, target: Any) -> None:
        self.name, self.value, self.dist, self._target = name, "fake:mod", _FakeDist(), target

    def load(self) -> Any:
        if isinstance(self._target, Exception):
            raise self._target
        return self._target


def test_entry_point_functions_are_called_once(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    eps = [_FakeEntryPoint("good", lambda: seen.append("registered"))]
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: eps)
    monkeypatch.setattr(reg, "_plugins_loaded", False)
    assert reg.load_plugins() == ["good"]
    assert reg.load_plugins() == []
    assert seen == ["registered"]


def test_a_broken_plugin_is_an_error_naming_it_and_its_package(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    eps = [_FakeEntryPoint("broken", ImportError("No module named 'missing_dep'"))]
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: eps)
    monkeypatch.setattr(reg, "_plugins_loaded", False)
    with pytest.raises(PluginError, match=r"plugin 'broken' \(package assay-fake-plugin\)"):
        reg.load_plugins()


def test_every_builtin_registry_names_its_kind() -> None:
    kinds = [r.kind for r in reg.REGISTRIES]
    assert kinds == [
        "judge",
        "decomposer",
        "verifier",
        "schema",
        "importer",
        "transport",
        "report format",
        "policy",
    ]


def test_scoped_undoes_registrations_and_keeps_earlier_ones() -> None:
    widgets = _fresh()
    widgets.add("kept", object(), description="before the block")
    with widgets.scoped():
        widgets.add("temporary", object(), description="inside the block")
        assert widgets.names() == ["kept", "temporary"]
    assert widgets.names() == ["kept"]


def test_start_up_work_is_deferred_to_the_lookups_that_need_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Registering never scans the installed distributions (only `info` names a package),
    and a hit on a registered name never reads the plugins' entry points; a miss does."""
    scans: list[str] = []
    eps = [_FakeEntryPoint("late", lambda: widgets.add("from-plugin", object()))]

    def entry_points(group: str) -> list[_FakeEntryPoint]:
        scans.append("entry_points")
        return eps

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    monkeypatch.setattr(reg, "_plugins_loaded", False)
    monkeypatch.setattr(reg, "_distributions", lambda: scans.append("dists") or {})
    widgets = _fresh()

    def made() -> None: ...

    widgets.add("here", made, description="built in")
    widgets.add_lazy("lazy", "nowhere:thing", description="optional")
    assert "here" in widgets and scans == []
    assert "from-plugin" in widgets and scans == ["entry_points"]
    package = widgets.info("here").package
    assert package == made.__module__.split(".")[0] and scans == ["entry_points", "dists"]
