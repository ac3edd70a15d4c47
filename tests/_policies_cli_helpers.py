"""Shared pieces of the `assay policies` CLI tests: the run spec and policies they use,
an in-process CLI call, and small readers."""

from __future__ import annotations

import json
import sys
from io import StringIO
from pathlib import Path

import pytest

from assay.cli import app
from assay.cli._errors import run_guarded

RUN_SPEC = """
name = "policies-cli"
output_dir = "run"
[factuality]
datasets = [{ name = "factuality-demo", path = "builtin:factuality-demo" }]
decomposer = { kind = "sentence" }
verifiers = [{ kind = "overlap", threshold = 0.7 }]
"""

CERT_POLICY = """
[[policies]]
name = "cert"
kind = "claim_selective"
selector = "threshold"
verifier = "baseline:overlap"
[policies.thresholds]
support = "0.35"
conflict = "0.55"
condition_limited = "0.30"
limitation = "0.50"

"""
"""The claim_selective policy alone (what a writer lock test applies)."""

POLICY = (
    CERT_POLICY
    + """[[policies]]
name = "render"
kind = "fail_closed"
tau_entail = "0.85"
tau_contradict = "0.70"
"""
)

DETERMINISTIC = (
    "claims.jsonl",
    "responses.jsonl",
    "certificates.jsonl",
    "metrics.json",
    "manifest.json",
)


def assay(*args: object) -> tuple[int, str, str]:
    """Run the CLI in-process as `main()` would; (exit code, stdout, stderr)."""
    out, err = StringIO(), StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys, "argv", ["assay", *map(str, args)])
        mp.setattr(sys, "stdout", out)
        mp.setattr(sys, "stderr", err)
        code = run_guarded(app)
    return code, out.getvalue(), err.getvalue()


def make_run(root: Path, spec_text: str) -> Path:
    """`assay run` of `spec_text` (output_dir "run") inside `root`; the run directory."""
    (root / "spec.toml").write_text(spec_text, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        code, _, err = assay("run", root / "spec.toml")
    assert code == 0, err
    return root / "run"


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_text(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
