"""No import cycle between assay's first-level units, function-local imports included.

A unit is a first-level subpackage (``assay.runs``) or top-level module
(``assay.cli``). Every ``import``/``from ... import`` anywhere in a file counts, at
module level or inside a function, because a function-local import only hides a cycle.

Inside each package the same holds between its modules (``assay.runs.spec._spec`` must not
import, at any depth, a module that imports it back). ``if TYPE_CHECKING:`` imports count
too: a type-only import is still a dependency that closes the cycle. The package's own
``__init__`` belongs to it, but the implicit import of a parent package when a submodule
is imported is not an edge (every submodule would otherwise sit on a cycle with it).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Collection
from pathlib import Path

import assay

PACKAGE = Path(assay.__file__).parent


def _unit(parts: tuple[str, ...]) -> str:
    return parts[0].removesuffix(".py") if parts else "__init__"


def _imported_modules(path: Path, module: str, is_package: bool) -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                keep = len(base) - node.level + (1 if is_package else 0)
                found.append(".".join(base[:keep] + ([node.module] if node.module else [])))
            else:
                found.append(node.module or "")
    return found


def import_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).with_suffix("").parts
        is_package = rel[-1] == "__init__"
        module = ".".join(("assay", *(rel[:-1] if is_package else rel)))
        source = _unit(path.relative_to(PACKAGE).parts)
        for target in _imported_modules(path, module, is_package):
            parts = target.split(".")
            if parts[0] == "assay" and len(parts) > 1 and parts[1] != source:
                graph[source].add(parts[1])
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a path of units, or None (depth-first search, three colours)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_no_cycle_between_first_level_units() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_core_imports_nothing_above_it() -> None:
    assert import_graph()["core"] <= {"errors", "redaction"}


def test_the_checker_finds_a_planted_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_relative_and_function_local_imports_count(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text("def f():\n    from ..runs import x\n    import assay.report\n")
    found = _imported_modules(src, "assay.metrics.m", is_package=False)
    assert found == ["assay.runs", "assay.report"]


def _modules() -> dict[str, tuple[Path, bool]]:
    found: dict[str, tuple[Path, bool]] = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE).with_suffix("").parts
        is_package = rel[-1] == "__init__"
        found[".".join(("assay", *(rel[:-1] if is_package else rel)))] = (path, is_package)
    return found


def _targets(path: Path, module: str, is_package: bool, modules: Collection[str]) -> set[str]:
    """Modules one file imports; ``from pkg import sub`` names the submodule ``pkg.sub``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _imported_modules_of(node, module, is_package)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.add(sub if sub in modules else base)
    return found


def _imported_modules_of(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    keep = len(base) - node.level + (1 if is_package else 0)
    return ".".join(base[:keep] + ([node.module] if node.module else []))


def module_graph() -> dict[str, set[str]]:
    """Edges between modules of the same package (its ``__init__`` included)."""
    modules = _modules()

    def package(name: str) -> str:
        return name if modules[name][1] else name.rsplit(".", 1)[0]

    graph: dict[str, set[str]] = {}
    for name, (path, is_package) in modules.items():
        targets = _targets(path, name, is_package, modules)
        graph[name] = {
            t for t in targets if t in modules and t != name and package(t) == package(name)
        }
    return graph


def test_no_cycle_between_modules_of_a_package() -> None:
    cycle = find_cycle(module_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_type_only_and_from_package_imports_count(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from assay.runs.spec._spec import RunSpec\n"
        "from . import _plan\n"
    )
    modules = {"assay.runs.spec._spec", "assay.runs.plan._plan"}
    found = _targets(src, "assay.runs.plan._x", False, modules)
    assert {"assay.runs.spec._spec", "assay.runs.plan._plan"} <= found


def subpackage_graph(package: str) -> dict[str, set[str]]:
    """Edges between the direct sub-packages (and modules) of `package`, every import
    of every file under each counted; `from package import x` counts as `x`."""
    modules = _modules()
    prefix = package + "."
    graph: dict[str, set[str]] = defaultdict(set)
    for name, (path, is_package) in modules.items():
        if not name.startswith(prefix):
            continue
        source = name[len(prefix) :].split(".")[0]
        graph[source]
        for target in _targets(path, name, is_package, modules):
            if target.startswith(prefix):
                dest = target[len(prefix) :].split(".")[0]
                if dest != source:
                    graph[source].add(dest)
    return graph


def test_no_cycle_between_any_two_modules() -> None:
    """The whole tree's module graph, across sub-packages too (`runs.stages._judge` and
    `runs.store._manifest` are in different packages, yet must not close a cycle)."""
    modules = _modules()
    graph = {
        name: {t for t in _targets(path, name, is_package, modules) if t in modules and t != name}
        for name, (path, is_package) in modules.items()
    }
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


# Inside policies/: the engine imports no kind; a kind imports only the engine (user kinds
# also read claim_selective's claim-level inputs); jobs and report reach kinds only through
# the POLICIES registry (docs/explanations/architecture.md).
POLICIES_ALLOWED = {
    "engine": set(),
    "claim_selective": {"engine"},
    "evidence_gate": {"engine"},
    "fail_closed": {"engine"},
    "custom": {"engine", "claim_selective"},
    "jobs": {"engine"},
    "report": {"engine", "jobs"},
}


def test_policies_subpackages_import_only_what_their_layer_allows() -> None:
    graph = subpackage_graph("assay.policies")
    assert set(graph) == set(POLICIES_ALLOWED), "a policies sub-package is not in the table"
    wrong = {
        s: sorted(t - POLICIES_ALLOWED[s]) for s, t in graph.items() if t - POLICIES_ALLOWED[s]
    }
    assert not wrong, f"policies sub-packages import across their layer: {wrong}"


# Inside runs/, the folders follow the data flow: spec -> store -> plan / execute /
# assemble -> stages -> runner -> preview, and rebuild reads the store
# (docs/explanations/architecture.md).
RUNS_ALLOWED = {
    "spec": set(),
    "store": {"spec"},
    "plan": set(),
    "execute": {"spec", "store"},
    "assemble": {"spec", "store"},
    "stages": {"assemble", "execute", "plan", "spec", "store"},
    "rebuild": {"store"},
    "runner": {"assemble", "execute", "plan", "rebuild", "spec", "stages", "store"},
    "preview": {"assemble", "plan", "runner", "spec", "stages"},
    "rerun": {"preview", "rebuild", "runner", "spec", "store"},
}


def test_runs_subpackages_import_only_what_their_layer_allows() -> None:
    graph = subpackage_graph("assay.runs")
    assert set(graph) == set(RUNS_ALLOWED), "a runs sub-package is not in the table"
    wrong = {s: sorted(t - RUNS_ALLOWED[s]) for s, t in graph.items() if t - RUNS_ALLOWED[s]}
    assert not wrong, f"runs sub-packages import across their layer: {wrong}"
    assert find_cycle(graph) is None
