"""A complete demo run to pack (tests/test_pack.py, tests/test_unpack.py), with the files
a run may hold besides its records: a prompt snapshot, labels, a released lock file and a
writer's temporary file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _cli import invoke

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
KEY = "sk-" + "proj0123456789abcdefXYZ"  # key-shaped, split so no scanner flags this file
PASSWORD = "hunter2" + "hunter2"


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A complete run of examples/demo.toml, plus the files a run may also hold."""
    root = tmp_path_factory.mktemp("pack")
    spec = root / "demo.toml"
    text = (EXAMPLES / "demo.toml").read_text(encoding="utf-8")
    spec.write_text(text.replace("bootstrap = 1000", "bootstrap = 100"), encoding="utf-8")
    run = root / "src" / "demo"
    code, _, err = invoke(["run", str(spec), "--output-dir", str(run), "--no-progress"])
    assert code == 0, err
    prompts = run / "snapshot" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "0123456789abcdef-judge.prompt").write_text("Is {{ claim }} true?\n", "utf-8")
    note = {"item_id": "x", "label": "supported", "note": "see https://example.org/p?page=2"}
    (run / "labels.jsonl").write_text(json.dumps(note) + "\n", encoding="utf-8")
    (run / ".assay.lock").write_text("{}\n", encoding="utf-8")  # a writer's, released
    (run / ".metrics.json.abc123.tmp").write_text("half", encoding="utf-8")
    return run


@pytest.fixture
def run(demo_run: Path, tmp_path: Path) -> Path:
    """A private copy of the demo run (tests edit it), under the same name."""
    return Path(shutil.copytree(demo_run, tmp_path / "runs" / "demo"))


def files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def pack(run: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    return invoke(["pack", str(run), "-o", str(out), *extra])
