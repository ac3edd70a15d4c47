"""A real items run for the viewer's browser tests, and `assay view` as a subprocess.

The run is made by `assay.runs.Runner` with two LLM judges answered by the loopback
OpenAI-compatible server, so every record, prompt hash and item line is what a real run
writes, and the requests the judges sent are kept to compare with the messages the
viewer rebuilds. One item's id and claim and one raw answer are markup (`HOSTILE_*`).
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.runs import Runner, RunOptions, load_spec
from assay.testing import Behavior, FakeOpenAIServer, reply

HOSTILE_ID = 'x<img src=x onerror="window.__pwned=1">'
HOSTILE_CLAIM = "<script>window.__pwned=2</script> Aspirin cures everything."
HOSTILE_RATIONALE = '<img src=y onerror="window.__pwned=3"><b>bold</b>'
CLAIMS = [  # id, claim, evidence, gold
    ("c1", "Aspirin lowered the risk.", "Aspirin lowered the risk by 20%.", "supported"),
    ("c2", "Aspirin prevents all heart attacks.", "Aspirin lowered the risk.", "unsupported"),
    ("c3", "The vaccine was 95% effective.", "Efficacy in adults was 95%.", "supported"),
    ("c4", "The vaccine works in children.", "Children were not enrolled.", "unsupported"),
    ("c5", "Coffee drinkers lived longer.", "Coffee drinkers had lower mortality.", "supported"),
    ("c6", "Exercise always cures insomnia.", "Exercise improved sleep.", "unsupported"),
    ("c7", "Vitamin D did not prevent falls.", "No effect of vitamin D on falls.", "supported"),
    (HOSTILE_ID, HOSTILE_CLAIM, "Aspirin lowered the risk.", "unsupported"),
]
PROMPT = """+++
id = "check"
version = 1
task = "judge"
variables = ["evidence", "claim"]
output_schema = "LabelVerdict"
labels = ["supported", "unsupported"]
[scores]
supported = 1.0
unsupported = 0.0
+++
=== system ===
Check the claim against the passage. Answer JSON with "label" and "rationale".
=== user ===
Passage: \"\"\"{{ evidence }}\"\"\"
Claim: \"\"\"{{ claim }}\"\"\"
"""
SPEC = """
name = "{name}"
bootstrap = 0
prompt_dirs = ["prompts"]
[[datasets]]
kind = "items"
name = "claims"
path = "claims.csv"
gold_label_column = "label"
variables = {{ claim = "response", evidence = "context" }}
[[judges]]
models = ["openai/hasty", "openai/careful"]
prompts = ["check@1"]
api_base = "{base}"
"""
STRONG = re.compile(r"\b(all|always|cures?|prevents?|everyone)\b", re.IGNORECASE)
HASTY = "openai/hasty::check@1"
CAREFUL = "openai/careful::check@1"


def stand_in(body: dict[str, Any]) -> Behavior:
    """`hasty` says supported to everything; `careful` refuses strong words (and so is
    wrong on c7's negated "prevent"). The hostile claim gets a hostile rationale."""
    claim = re.findall(r'"""(.*?)"""', str(body["messages"][-1]["content"]), re.DOTALL)[1]
    label = "supported"
    if body["model"].endswith("careful") and STRONG.search(claim):
        label = "unsupported"
    why = HOSTILE_RATIONALE if "<script>" in claim else f"read: {claim}"
    return reply(json.dumps({"label": label, "rationale": why}))


@dataclass
class BuiltRun:
    run_dir: Path
    requests: list[dict[str, Any]] = field(default_factory=list)  # the judges' bodies


def build_run(root: Path, name: str = "checks") -> BuiltRun:
    """The run `root/runs/<name>` (16 judgments), its inputs beside `root/runs`."""
    work = root / "inputs"
    (work / "prompts").mkdir(parents=True, exist_ok=True)
    (work / "prompts" / "check.prompt").write_text(PROMPT, encoding="utf-8")
    with (work / "claims.csv").open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "response", "context", "label"])
        writer.writerows(CLAIMS)
    run_dir = root / "runs" / name
    with FakeOpenAIServer(responder=stand_in) as server:
        spec = work / f"{name}.toml"
        spec.write_text(SPEC.format(name=name, base=server.base_url), encoding="utf-8")
        options = RunOptions(output_dir=str(run_dir), progress=False, use_cache=False)
        outcome = Runner(load_spec(spec), options).run()
        assert outcome.status == "complete", outcome
        return BuiltRun(run_dir, [json.loads(json.dumps(b)) for b in server.requests])


@dataclass
class ViewServer:
    """`python -m assay view ROOT --port 0 ...` and the URL (with token) it printed."""

    proc: subprocess.Popen[str]
    url: str

    @property
    def base(self) -> str:
        return self.url.split("/?token=")[0]

    @property
    def token(self) -> str:
        return self.url.split("?token=")[1]

    def stop(self) -> str:
        """Ctrl-C, then what it wrote to stderr (must hold no traceback)."""
        if self.proc.poll() is None:
            self.proc.send_signal(2)
        try:
            _, err = self.proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return err


URL = re.compile(r"(http://127\.0\.0\.1:\d+/\?token=[\w-]+)")


def start_view(root: Path, *flags: str, timeout: float = 90) -> ViewServer:
    """Start the server and wait for its URL line (killed if none comes in `timeout`)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "assay", "view", str(root), "--port", "0", *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    watchdog = threading.Timer(timeout, proc.kill)
    watchdog.start()
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
    finally:
        watchdog.cancel()
    found = URL.search(line)
    if found is None:
        proc.kill()
        _, err = proc.communicate()
        raise AssertionError(f"assay view printed no URL: {line!r}\n{err}")
    return ViewServer(proc, found.group(1))
