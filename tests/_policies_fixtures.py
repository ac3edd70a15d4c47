"""The run directories the `assay policies` tests read, built one way.

Fixtures: `base_run` (the bundled factuality answers, sentence-decomposed and checked by
the overlap verifier: no key, no model) is made once per module; `run_dir` is a fresh
copy per test, since applying a policy writes `policies/` into it; `policy_file` writes
`policies_text` (the shared POLICY). A module takes them with
`pytest_plugins = ["_policies_fixtures"]` and overrides `base_run` or `policies_text`
where its run or its policies differ.

Builders: `make_gold_run` runs a gold-labelled dataset through the `given` decomposer;
`write_gates` records what the gate stage would have scored for each question.

PYTEST_DONT_REWRITE: modules import the builders before pytest loads this file as a
plugin, which it would otherwise warn about; nothing here asserts.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest
from _gate_fixtures import candidate, gate_record
from _policies_cli_helpers import POLICY, RUN_SPEC, make_run, write_text

# The gate and the threshold claim_selective policy several policies files start from.
GATE_POLICY = """
[[policies]]
name = "gate"
kind = "evidence_gate"
gate = "ce-tiny"
tau = "0.30"
tau_min = "0.10"
"""
CERT_POLICY = """
[[policies]]
name = "cert"
kind = "claim_selective"
selector = "threshold"
[policies.thresholds]
support = "0.35"
conflict = "0.55"
condition_limited = "0.30"
limitation = "0.50"
"""


def make_gold_run(root: Path, rows: Iterable[Mapping[str, object]], *, name: str = "gold") -> Path:
    """`assay run` over `rows` (dataset "gold", claims given, overlap verifier) in `root`."""
    write_text(root / "gold.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    spec = (
        f'name = "{name}"\noutput_dir = "run"\n[factuality]\n'
        'datasets = [{ name = "gold", path = "gold.jsonl" }]\n'
        'decomposer = { kind = "given" }\nverifiers = [{ kind = "overlap", threshold = 0.7 }]\n'
    )
    return make_run(root, spec)


def write_gates(run: Path, scores: Mapping[str, float], dataset: str) -> None:
    """gates.jsonl: per question id its one passage `<id>-p1` at rank 1 with its score."""
    records = [
        gate_record(qid, [candidate(f"{qid}-p1", 1, score)], dataset=dataset)
        for qid, score in scores.items()
    ]
    (run / "gates.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records))


@pytest.fixture(scope="module")
def base_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("policies_run"), RUN_SPEC)


@pytest.fixture
def run_dir(base_run: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(base_run, tmp_path / "run"))


@pytest.fixture
def policies_text() -> str:
    return POLICY


@pytest.fixture
def policy_file(tmp_path: Path, policies_text: str) -> Path:
    return write_text(tmp_path / "policies.toml", policies_text)
