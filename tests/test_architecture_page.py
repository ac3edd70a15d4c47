"""docs/explanations/architecture.md is the rule for imports between assay's first-level units.

Its unit table names every package (`runs/`) and module (`errors.py`) of `assay/`, its one
job and the units it may import, bottom layer first. The page and the tree cannot drift
apart: a unit missing from the table, a row for a unit that does not exist, an import its
row does not name, or an allowed import of a row further down (which would let a cycle be
written down) each fail here. The sub-package tables must list exactly the sub-packages.
Imports are counted as tests/test_import_layers.py counts them: function-local and
`if TYPE_CHECKING:` ones included.
"""

from __future__ import annotations

import re
from pathlib import Path

from test_import_layers import PACKAGE, import_graph

PAGE = Path(__file__).resolve().parents[1] / "docs" / "explanations" / "architecture.md"
UNIT = re.compile(r"^[A-Za-z_]\w*(/|\.py)$")  # `runs/`, `errors.py`
SUBPACKAGE = re.compile(r"^[A-Za-z_]\w*(/[A-Za-z_]\w*)+/$")  # `runs/spec/`
TICKED = re.compile(r"`([^`]+)`")


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _first_ticked(cell: str) -> str | None:
    found = TICKED.fullmatch(cell)
    return found.group(1) if found else None


def unit_rows(text: str) -> list[tuple[str, list[str]]]:
    """(unit, the units it may import) for each row of the unit table, in page order."""
    rows: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        cells = _cells(line) if line.startswith("| `") else []
        name = _first_ticked(cells[0]) if len(cells) == 3 else None
        if name and UNIT.match(name):
            rows.append((name, TICKED.findall(cells[2])))
    return rows


def subpackage_rows(text: str) -> list[str]:
    rows = []
    for line in text.splitlines():
        name = _first_ticked(_cells(line)[0]) if line.startswith("| `") else None
        if name and SUBPACKAGE.match(name):
            rows.append(name)
    return rows


def units_on_disk() -> set[str]:
    """Every module and folder directly under assay/, named as the page names them."""
    found = set()
    for entry in PACKAGE.iterdir():
        if entry.is_file() and entry.suffix == ".py":
            found.add(entry.name)
        elif entry.is_dir() and not entry.name.startswith((".", "__pycache__")):
            found.add(entry.name + "/")
    return found


def subpackages_on_disk() -> set[str]:
    return {
        path.parent.relative_to(PACKAGE).as_posix() + "/"
        for path in PACKAGE.glob("*/**/__init__.py")
        if path.parent.parent != PACKAGE
    }


def _stem(name: str) -> str:
    return name.removesuffix("/").removesuffix(".py")


def problems(text: str, on_disk: set[str], graph: dict[str, set[str]]) -> list[str]:
    """Every way the unit table and the tree disagree, one line each (empty: they agree)."""
    rows = unit_rows(text)
    names = [name for name, _ in rows]
    found = [f"listed twice: {n}" for n in sorted({n for n in names if names.count(n) > 1})]
    found += [f"not on the page: {n}" for n in sorted(on_disk - set(names))]
    found += [f"on the page, not in assay/: {n}" for n in sorted(set(names) - on_disk)]
    above: set[str] = set()
    for name, allowed in rows:
        found += [f"{name} may import {a}, listed below it" for a in allowed if a not in above]
        above.add(name)
    allowed_stems = {_stem(name): {_stem(a) for a in allowed} for name, allowed in rows}
    for source, targets in sorted(graph.items()):
        extra = targets - allowed_stems.get(source, set())
        found += [f"{source} imports {t}, which its row does not allow" for t in sorted(extra)]
    return found


def test_the_page_and_the_tree_agree() -> None:
    found = problems(PAGE.read_text(encoding="utf-8"), units_on_disk(), import_graph())
    assert not found, "docs/explanations/architecture.md is out of date:\n" + "\n".join(found)


def test_the_page_lists_every_subpackage() -> None:
    rows = subpackage_rows(PAGE.read_text(encoding="utf-8"))
    assert len(rows) == len(set(rows)), rows
    assert set(rows) == subpackages_on_disk()


def test_the_page_lists_runs_and_policies_by_job() -> None:
    rows = set(subpackage_rows(PAGE.read_text(encoding="utf-8")))
    assert {"runs/spec/", "runs/stages/", "policies/engine/", "policies/jobs/"} <= rows


def test_core_may_import_only_errors_and_redaction() -> None:
    allowed = dict(unit_rows(PAGE.read_text(encoding="utf-8")))
    assert set(allowed["core/"]) <= {"errors.py", "redaction.py"}


TABLE = """\
| unit | its one job | may import |
| --- | --- | --- |
| `errors.py` | errors | — |
| `core/` | contracts | `errors.py` |
| `runs/` | runs | `core/`, `errors.py` |
"""


def test_a_table_that_matches_has_no_problem() -> None:
    graph = {"core": {"errors"}, "runs": {"core"}}
    assert problems(TABLE, {"errors.py", "core/", "runs/"}, graph) == []


def test_each_disagreement_is_found() -> None:
    on_disk = {"errors.py", "core/", "runs/", "new/"}
    graph = {"core": {"errors", "runs"}, "runs": {"core", "new"}}
    planted = TABLE.replace("| `errors.py` |\n", "| `errors.py`, `runs/` |\n")
    planted += "| `gone.py` | was removed | — |\n| `gone.py` | twice | — |\n"
    assert problems(planted, on_disk, graph) == [
        "listed twice: gone.py",
        "not on the page: new/",
        "on the page, not in assay/: gone.py",
        "core/ may import runs/, listed below it",
        "runs imports new, which its row does not allow",
    ]


def test_only_unit_rows_are_read() -> None:
    text = TABLE + "| `runs/spec/` | the spec |\n| concept | `assay/core/` |\n"
    assert [name for name, _ in unit_rows(text)] == ["errors.py", "core/", "runs/"]
    assert subpackage_rows(text) == ["runs/spec/"]
