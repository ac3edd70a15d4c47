"""Run-directory file names are spelled once, in `assay.core.rundir`: a
module that writes or reads `claims.jsonl` names it by its constant, so a rename (or a
reader that drifts from the writer) cannot happen in one place only."""

from __future__ import annotations

import ast
from pathlib import Path

import assay
from assay.core import rundir

PACKAGE = Path(assay.__file__).parent
# Dataset importers read files of other tools' formats that happen to share names
# (WiCE's claims.jsonl, ExpertQA's answers.jsonl): not run directories.
NOT_RUN_DIRS = ("datasets",)
# Exceptions to the rule, each with its reason (none today).
PENDING: set[tuple[str, str]] = set()


def _names() -> set[str]:
    return {
        v
        for k, v in vars(rundir).items()
        if k.endswith("_FILE") and isinstance(v, str) and v.endswith((".json", ".jsonl"))
    }


def _docstrings(tree: ast.AST) -> set[int]:
    nodes = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, nodes)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }


def spelled_names(root: Path) -> list[tuple[str, int, str]]:
    """(module, line, name) of every string literal that is a run-dir file name."""
    names, found = _names(), []
    for path in sorted(root.rglob("*.py")):
        module = path.relative_to(root).as_posix()
        if module == "core/rundir.py" or module.startswith(NOT_RUN_DIRS):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _docstrings(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Constant) or id(node) in skip:
                continue
            if node.value in names and (module, node.value) not in PENDING:
                found.append((module, node.lineno, str(node.value)))
    return found


def test_run_dir_file_names_are_spelled_only_in_core_rundir() -> None:
    assert len(_names()) >= 15  # the scan has names to look for
    assert spelled_names(PACKAGE) == []


# Packages that read other files than run directories (datasets, provider responses,
# model output text, the fake servers) may parse JSON lines of their own.
OWN_FORMATS = ("datasets/", "models/", "parsing/", "testing/", "core/rundir.py")
# A dataset file read by the policies (not a run directory); and the batch stage reading
# back the request file it uploaded, which must be read whole (a torn line is an error
# there, not a line to skip: every id in it was sent).
OTHER_FILES = {
    ("policies/engine/_run_inputs.py", "read_dataset_rows"),
    ("runs/stages/_batch.py", "_ids_of"),
}
_LINES = {"splitlines", "readlines", "open"}


def _calls(node: ast.AST) -> set[str]:
    out = set()
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            func = call.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            owner = getattr(getattr(func, "value", None), "id", "")
            out.add(f"{owner}.{name}" if owner == "json" else name)
    return out


def hand_jsonl_readers(root: Path) -> list[tuple[str, str]]:
    """(module, function) of every function that splits a file into lines and parses
    each with `json.loads`, the reading `core.rundir.iter_jsonl`/`iter_rows` owns."""
    found = []
    for path in sorted(root.rglob("*.py")):
        module = path.relative_to(root).as_posix()
        if module.startswith(OWN_FORMATS):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                calls = _calls(node)
                hand = "json.loads" in calls and calls & _LINES
                if hand and (module, node.name) not in OTHER_FILES:
                    found.append((module, node.name))
    return found


def test_run_dir_jsonl_is_read_only_through_core_rundir() -> None:
    assert hand_jsonl_readers(PACKAGE) == []
