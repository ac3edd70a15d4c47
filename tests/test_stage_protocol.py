"""The runner's stages keep one declared contract (`runs.stages._protocol.Stage`) and
the runner adds them up in one loop: it names no stage outside the list it declares,
and no stage reaches into another's privates (batches make records through the judge
stage's public `record`)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

import assay.runs.runner._runner as runner_module
import assay.runs.stages._batch as batch_module
from assay.runs import Runner, RunOptions, load_spec
from assay.runs.stages._factuality import FactualityStage
from assay.runs.stages._gate import GateStage
from assay.runs.stages._items import ItemsStage
from assay.runs.stages._judge import JudgeStage
from assay.runs.stages._protocol import Stage

STAGES = (JudgeStage, ItemsStage, FactualityStage, GateStage)
STAGE_WORDS = {"items", "gate", "factuality", "fact", "judge_stage", "verify", "decompose"}
ITEMS_CSV = Path(__file__).resolve().parents[1] / "examples" / "items" / "claims.csv"


def _protocol_methods() -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(member)
        for name, member in vars(Stage).items()
        if not name.startswith("_") and inspect.isfunction(member)
    }


def test_every_stage_class_has_the_protocol_methods_with_its_signature() -> None:
    methods = _protocol_methods()
    assert {"load", "execute", "tallies", "add_to_manifest", "metrics_options"} <= set(methods)
    for cls in STAGES:
        assert isinstance(vars(cls).get("name"), str), cls
        for name, signature in methods.items():
            own = inspect.signature(getattr(cls, name))
            assert list(own.parameters) == list(signature.parameters), (cls, name)
            wanted = inspect.iscoroutinefunction(getattr(Stage, name))
            assert inspect.iscoroutinefunction(getattr(cls, name)) == wanted, (cls, name)


def test_a_gate_stage_is_a_stage() -> None:
    assert isinstance(GateStage(scorer=None, datasets=[]), Stage)  # type: ignore[arg-type]


def test_the_runner_declares_its_stages_in_order(tmp_path: Path) -> None:
    spec = tmp_path / "run.toml"
    spec.write_text(
        'name = "stages"\nbootstrap = 0\n'
        '[[datasets]]\nname = "pairs"\npath = "builtin:forcebench-demo"\n'
        f'[[datasets]]\nkind = "items"\nname = "claims"\npath = "{ITEMS_CSV.as_posix()}"\n'
        'gold_label_column = "label"\nvariables = { claim = "response", evidence = "context" }\n'
        '[[baselines]]\nname = "token-overlap"\n'
        '[factuality]\ndatasets = [{ name = "answers", path = "builtin:factuality-demo" }]\n'
        'verifiers = [{ kind = "overlap" }]\n',
        encoding="utf-8",
    )
    runner = Runner(load_spec(spec), RunOptions(output_dir=str(tmp_path / "out"), progress=False))
    assert [s.name for s in runner.stages] == ["judge", "items", "factuality"]
    assert all(isinstance(s, Stage) for s in runner.stages)
    assert runner.stages[0] is runner.judge_stage


def _names(node: ast.AST) -> set[str]:
    """Every identifier and attribute name under `node`."""
    out: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            out.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            out.add(sub.attr)
    return out


def _runner_class() -> ast.ClassDef:
    tree = ast.parse(inspect.getsource(runner_module))
    return next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Runner")


def test_no_condition_in_the_runner_names_a_stage() -> None:
    tree = ast.parse(inspect.getsource(runner_module))
    tests: list[Any] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.If | ast.IfExp | ast.While):
            tests.append(node.test)
        elif isinstance(node, ast.BoolOp):
            tests.append(node)
        elif isinstance(node, ast.comprehension):
            tests += node.ifs
    naming = [ast.unparse(t) for t in tests if _names(t) & STAGE_WORDS]
    assert naming == []


def test_only_the_runners_constructor_names_a_stage() -> None:
    """Every other method goes through `self.stages` (the judge stage by name only for
    its plan and its judges' clients, which `--dry-run` and the preflight share)."""
    allowed = {"__init__": STAGE_WORDS, "plan": {"judge_stage"}, "_preflight": {"judge_stage"}}
    for method in _runner_class().body:
        if isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef):
            named = _names(method) & STAGE_WORDS - allowed.get(method.name, set())
            assert named == set(), method.name


def test_batches_use_no_private_member_of_the_judge_stage() -> None:
    tree = ast.parse(inspect.getsource(batch_module))
    private = [
        ast.unparse(n)
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute)
        and n.attr.startswith("_")
        and not n.attr.startswith("__")
        and isinstance(n.value, ast.Attribute)
        and n.value.attr == "stage"
    ]
    assert private == []
    protocol = inspect.getsource(batch_module.BatchedStage)
    assert "def _" not in protocol


def test_batches_rewrite_the_manifest_only_through_the_typed_writer() -> None:
    source = inspect.getsource(batch_module)
    assert "read_run_manifest" not in source
    assert "write_manifest" not in source
    assert "except Exception" not in source
