"""Small real runs for the viewer's server tests: an items run judged on the loopback
server (two judges that disagree, a hostile raw output and item id, and two pairwise
judges that always pick the first slot), and the policies run of the report tests
(factuality answers, claims, evidence, certificates, a hostile claim)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from _report_policies_run import applied_run

from assay.runs import RunOptions, run_spec
from assay.testing import FakeOpenAIServer, reply

KEY_ENV = "VIEW_RUN_KEY"
HOSTILE_OUTPUT = '<script>window.__pwned=1</script>"><img src=x onerror=alert(1)>'
HOSTILE_ID = "x<script>alert(1)</script>/../y"
ROWS = [  # id, claim, evidence, gold
    ("q1", "Aspirin cures all headaches.", "Aspirin relieves some headaches.", "unsupported"),
    ("q2", "Water boils at 100 C.", "Water boils at 100 C at sea level.", "supported"),
    ("q3", "The trial enrolled 40 people.", "The trial enrolled 40 adults.", "supported"),
    ("q4", "Coffee causes cancer.", "No link between coffee and cancer.", "unsupported"),
    (HOSTILE_ID, "Smoking is harmless.", "Smoking causes lung cancer.", "unsupported"),
]
PAIRS = [("p1", "left one", "right one", "A"), ("p2", "left 2", "right 2", "B")]
PROMPT = """\
+++
id = "support-check"
version = 1
task = "judge"
variables = ["claim", "evidence"]
labels = ["supported", "unsupported"]
[scores]
supported = 1.0
unsupported = 0.0
[output.label]
type = "enum"
values = ["supported", "unsupported"]
+++
=== user ===
EVIDENCE: {{ evidence }}
CLAIM: {{ claim }}
"""


def _responder(body: dict[str, Any]) -> Any:
    """Model "first-word": supported when claim and evidence start alike. Model "always":
    supported, except on the smoking claim, where it answers hostile HTML. Pairwise:
    both pick the first slot, whatever the order (position-inconsistent)."""
    text = body["messages"][-1]["content"]
    if "Response A:" in text:
        return reply(json.dumps({"label": "A", "rationale": "first"}))
    claim = text.split("CLAIM: ")[1].split("\n")[0]
    if body["model"].endswith("always"):
        if claim.startswith("Smoking"):
            return reply(HOSTILE_OUTPUT)
        return reply(json.dumps({"label": "supported"}))
    evidence = text.split("EVIDENCE: ")[1].split("\n")[0]
    same = claim.split()[0] == evidence.split()[0]
    return reply(json.dumps({"label": "supported" if same else "unsupported"}))


def _csv(path: Path, header: list[str], rows: list[tuple[str, ...]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)


def items_run(root: Path) -> Path:
    """`root/items`: two judges over ROWS (dataset "mine") and two pairwise judges over
    PAIRS in both orders (dataset "duel"), complete, with metrics."""
    work = root.parent / "items-work"
    (work / "prompts").mkdir(parents=True)
    (work / "prompts" / "support-check.v1.prompt").write_text(PROMPT, encoding="utf-8")
    _csv(work / "mine.csv", ["id", "response", "context", "gold"], ROWS)
    _csv(work / "duel.csv", ["id", "left", "right", "gold"], PAIRS)
    with pytest.MonkeyPatch.context() as mp, FakeOpenAIServer(responder=_responder) as srv:
        mp.setenv(KEY_ENV, "sk-view-test-key-123456")
        spec = work / "spec.toml"
        spec.write_text(_spec(srv.base_url), encoding="utf-8")
        out = root / "items"
        outcome = run_spec(spec, RunOptions(output_dir=str(out), use_cache=False, progress=False))
    assert outcome.status == "complete", outcome.message
    return out


def _spec(base_url: str) -> str:
    return f"""
name = "view-items"
bootstrap = 100
prompt_dirs = ["prompts"]
[[datasets]]
kind = "items"
name = "mine"
path = "mine.csv"
gold_label_column = "gold"
variables = {{ claim = "response", evidence = "context" }}
[[datasets]]
kind = "items"
task = "pairwise"
name = "duel"
path = "duel.csv"
gold_preference_column = "gold"
variables = {{ response_a = "left", response_b = "right" }}
[defaults]
max_attempts = 1
timeout_s = 5
[[judges]]
models = ["openai/first-word", "openai/always"]
prompts = ["support-check@1", "pairwise-preference@1"]
api_base = "{base_url}"
api_key_env = "{KEY_ENV}"
"""


FORCEBENCH = """
name = "view-forcebench"
bootstrap = 100
[[datasets]]
name = "forcebench-demo"
path = "builtin:forcebench-demo"
[[baselines]]
name = "citation-presence"
[[baselines]]
name = "forcecheck-rule"
"""


def forcebench_run(root: Path) -> Path:
    """`root/forcebench`: two deterministic baselines on the bundled ForceBench pairs."""
    spec = root.parent / "forcebench.toml"
    spec.write_text(FORCEBENCH, encoding="utf-8")
    out = root / "forcebench"
    outcome = run_spec(spec, RunOptions(output_dir=str(out), use_cache=False, progress=False))
    assert outcome.status == "complete", outcome.message
    return out


def view_paths(root: Path) -> list[Path]:
    """What `assay view` is given: `root/runs` (the items and ForceBench runs) and the
    policies run."""
    runs = root / "runs"
    runs.mkdir(parents=True)
    items_run(runs)
    forcebench_run(runs)
    (root / "policies-work").mkdir()
    return [runs, applied_run(root / "policies-work")]
