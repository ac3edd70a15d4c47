"""A third-party plugin, installed with pip, adds a judge and a verifier that `assay list`
shows with the plugin's package name and that a spec runs end to end.

The fixture package (tests/fixtures/plugin_pkg) is built offline with the venv's
setuptools and installed into a temporary target directory; `assay` then runs in a
subprocess with that directory on PYTHONPATH, so importlib.metadata finds its
dist-info and the `assay.plugins` entry point exactly as for a normal install.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PLUGIN = Path(__file__).parent / "fixtures" / "plugin_pkg"
DIST = "assay-demo-plugin"

SPEC = """\
name = "plugin"
bootstrap = 0

[[datasets]]
path = "builtin:forcebench-demo"

[[judges]]
kind = "demo-causal"
penalty = 0.75

[factuality]
datasets = [{ path = "builtin:factuality-demo" }]
verifiers = [{ kind = "demo-shared-words", min_share = 0.6 }]
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plugin installed into a fresh target directory (from a copy: the build
    writes into its source tree)."""
    root = tmp_path_factory.mktemp("plugin")
    source = shutil.copytree(PLUGIN, root / "src")
    target = root / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
         "--no-build-isolation", "--target", str(target), str(source)],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    assert list(target.glob("assay_demo_plugin-*.dist-info")), sorted(target.iterdir())
    return target


def _assay(site: Path | None, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`assay ARGS` in a subprocess that sees the plugin when `site` is given."""
    path = os.pathsep.join(filter(None, [str(site or ""), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "assay", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_assay_list_shows_the_plugin_kinds_and_package(site: Path, tmp_path: Path) -> None:
    judges = _assay(site, tmp_path, "list", "judges")
    assert judges.returncode == 0, judges.stderr
    line = r"^demo-causal +assay-demo-plugin +a causal verb the evidence never uses \(demo\)$"
    assert re.search(line, judges.stdout, re.MULTILINE), judges.stdout
    verifiers = _assay(site, tmp_path, "list", "verifiers").stdout
    line = r"^demo-shared-words +assay-demo-plugin +share of claim words in the evidence$"
    assert re.search(line, verifiers, re.MULTILINE), verifiers
    assert re.search(r"^overlap +assay ", verifiers, re.MULTILINE)  # built-ins stay


def test_without_the_plugin_the_kinds_are_unknown(tmp_path: Path) -> None:
    (tmp_path / "spec.toml").write_text(SPEC, encoding="utf-8")
    proc = _assay(None, tmp_path, "run", "spec.toml", "--no-progress")
    assert proc.returncode == 2
    assert "unknown judge 'demo-causal'" in proc.stderr and "judges[0]" in proc.stderr


def test_a_spec_runs_the_plugin_judge_and_verifier(site: Path, tmp_path: Path) -> None:
    (tmp_path / "spec.toml").write_text(SPEC, encoding="utf-8")
    proc = _assay(site, tmp_path, "run", "spec.toml", "--output-dir", "out", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out"
    judgments = [json.loads(x) for x in (out / "judgments.jsonl").read_text().splitlines()]
    verdicts = [json.loads(x) for x in (out / "verifications.jsonl").read_text().splitlines()]
    assert len(judgments) == 120 and {j["judge_id"] for j in judgments} == {"demo-causal"}
    assert {j["score"] for j in judgments} == {0.25, 1.0}  # penalty 0.75 came from the spec
    claims = (out / "claims.jsonl").read_text().splitlines()
    assert len(verdicts) == len(claims) > 0
    assert {v["verifier_id"] for v in verdicts} == {"demo-shared-words"}
    for v in verdicts:
        assert v["label"] == ("supported" if v["score"] >= 0.6 else "unsupported")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert manifest["judges"][0]["penalty"] == 0.75
    report = _assay(site, tmp_path, "report", "out", "-f", "csv")
    assert report.returncode == 0 and "demo-causal" in report.stdout
    assert "demo-shared-words" in report.stdout
