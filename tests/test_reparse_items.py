"""`assay reparse` of an items run: item_judgments.jsonl is parsed again from the raw
outputs (no request), the verdict-derived fields with it (a pairwise `preference`,
unswapped in order "ba"), then the metrics and the judges' counters are rebuilt.

The records are made as an older, buggier parser would have left them: the answers
(reasoning text, then a fenced JSON object) recorded as parse errors, and the jury over
two judges voting on nothing. The current parser reads the answers, so the reparse must
give back what a fresh run records, the jury's votes included."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke

from assay.core.records import ItemJudgmentRecord
from assay.core.rundir import ITEM_JUDGMENTS_FILE, iter_jsonl, read_json
from assay.runs import RunOptions, run_spec
from assay.testing import FakeOpenAIServer, reply

KEY_ENV = "REPARSE_ITEMS_KEY"
MODEL = "openai/items-judge"
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
SPEC = """
name = "reparse-items"
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
variables = {{ response_a = "left", response_b = "right" }}
[defaults]
max_attempts = 1
[[judges]]
models = ["{model}", "{model}-2"]
prompts = ["support-check@1", "pairwise-preference@1"]
api_base = "{base}"
api_key_env = "{key}"
[[juries]]
name = "jury"
members = ["{model}::support-check@1", "{model}-2::support-check@1"]
"""


def _answer(body: dict[str, Any]) -> Any:
    """Reasoning, then the verdict in a fenced block; pairwise: always the first slot."""
    text = body["messages"][-1]["content"]
    if "Response A:" in text:
        verdict = {"label": "A", "rationale": "first"}
    else:
        evidence = text.split("EVIDENCE: ")[1].split("\n")[0]
        claim = text.split("CLAIM: ")[1].split("\n")[0]
        same = claim.split()[0] == evidence.split()[0]
        verdict = {"label": "supported" if same else "unsupported"}
    return reply(f"Let me think.\n```json\n{json.dumps(verdict)}\n```")


def _csv(path: Path, rows: list[tuple[str, ...]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows)


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    monkeypatch.setenv(KEY_ENV, "sk-reparse-items-123456")
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "support-check.v1.prompt").write_text(PROMPT, encoding="utf-8")
    words = ("Aspirin", "Water", "Coffee", "Smoking", "Vitamin", "Tea")
    single = [
        (f"q{i}", f"{w} is fine.", f"{w if i % 2 else 'No'} data.", "supported")
        for i, w in enumerate(words)
    ]
    _csv(tmp_path / "mine.csv", [("id", "response", "context", "gold"), *single])
    pairs = [(f"p{i}", f"left {i}", f"right {i}", "A" if i % 2 else "B") for i in range(6)]
    _csv(tmp_path / "duel.csv", [("id", "left", "right", "gold_preference"), *pairs])
    spec = tmp_path / "spec.toml"
    with FakeOpenAIServer(responder=_answer) as server:
        spec.write_text(SPEC.format(model=MODEL, base=server.base_url, key=KEY_ENV))
        out = tmp_path / "run"
        assert run_spec(spec, RunOptions(output_dir=str(out))).status == "complete"
        yield out, server


def _records(run: Path) -> list[dict[str, Any]]:
    return [
        r.model_dump(mode="json") for r in iter_jsonl(run / ITEM_JUDGMENTS_FILE, ItemJudgmentRecord)
    ]


def _as_an_old_parser_left_them(run: Path) -> None:
    path = run / ITEM_JUDGMENTS_FILE
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        rec.update(status="parse_error", label=None, score=None, preference=None, parsed=None)
        rec.update(error="no JSON object found", parser_version="assay-verdict/0")
        lines.append(json.dumps(rec))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _fields(records: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    keys = ("item_id", "order", "judge_id", "status", "label", "score", "preference", "parsed")
    return sorted(tuple(json.dumps(r.get(k)) for k in keys) for r in records)


def test_reparse_rebuilds_item_judgments_metrics_and_counters(run: Any) -> None:
    out, server = run
    fresh = _records(out)
    metrics = read_json(out / "metrics.json")["items"]["rows"]
    stats = {j["id"]: j["stats"] for j in read_json(out / "manifest.json")["judges"]}
    assert {r["preference"] for r in fresh if r["order"] == "ba"} == {"B"}  # A shown second
    assert {r["label"] for r in fresh if r["judge_id"] == "jury"} == {"supported", "unsupported"}
    _as_an_old_parser_left_them(out)
    invoke(["recompute", str(out)])  # the jury votes again, on nothing
    broken = (out / ITEM_JUDGMENTS_FILE).read_text(encoding="utf-8")
    assert all(r.get("accuracy") is None for r in read_json(out / "metrics.json")["items"]["rows"])
    sent = server.stats.total

    code, printed, err = invoke(["reparse", str(out)])
    assert code == 0, err
    voted = len([r for r in fresh if r["judge_id"] == "jury"])  # no raw output: kept
    assert f"parse_error->ok: {len(fresh) - voted}" in printed
    assert server.stats.total == sent  # no request
    assert _fields(_records(out)) == _fields(fresh)
    assert read_json(out / "metrics.json")["items"]["rows"] == metrics
    assert {j["id"]: j["stats"] for j in read_json(out / "manifest.json")["judges"]} == stats
    backup = out / f"{ITEM_JUDGMENTS_FILE}.before-reparse"
    assert backup.read_text(encoding="utf-8") == broken
    last = read_json(out / "manifest.json")["reparses"][-1]
    assert last["backups"] == [backup.name]
    assert last["changes"] == {"parse_error->ok": len(fresh) - voted}
