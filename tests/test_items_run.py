"""Items datasets in a run: a user's own labelled CSV judged by LLM judges on the loopback
server (single and pairwise), records, gold agreement, raters, samples and resume."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke
from sklearn.metrics import accuracy_score, cohen_kappa_score

from assay.core.records import ItemJudgmentRecord, ItemRecord
from assay.core.rundir import ITEM_JUDGMENTS_FILE, ITEMS_FILE, iter_jsonl, read_json
from assay.errors import AssayError
from assay.runs import RunOptions, run_spec
from assay.testing import FakeOpenAIServer, reply

KEY_ENV = "ITEMS_RUN_KEY"
MODEL = "openai/items-judge"

ROWS = [  # id, response, context, gold, rater r1, rater r2
    ("q1", "Aspirin cures all headaches.", "Aspirin relieves some headaches.",
     "Unsupported", "unsupported", "unsupported"),
    ("q2", "Water boils at 100 C at sea level.", "At sea level water boils at 100 C.",
     "supported", "supported", "supported"),
    ("q3", "The trial enrolled 40 people.", "The trial enrolled 40 adults.",
     "supported", "supported", "unsupported"),
    ("q4", "Coffee causes cancer.", "No link between coffee and cancer was found.",
     "unsupported", "unsupported", "unsupported"),
    ("q5", "Vitamin D helps bones.", "Vitamin D supports bone health.",
     "supported", "unsupported", "supported"),
    ("q6", "Smoking is harmless.", "Smoking causes lung cancer.",
     "unsupported", "unsupported", "unsupported"),
]  # fmt: skip
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


def _csv(path: Path, header: list[str], rows: list[tuple[str, ...]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def _says_supported(body: dict[str, Any]) -> Any:
    """A judge that calls a claim supported when it shares its first word with the evidence."""
    text = body["messages"][-1]["content"]
    if "Response A:" in text:
        return reply(json.dumps({"label": "A", "rationale": "first"}))  # always the first slot
    evidence = text.split("EVIDENCE: ")[1].split("\n")[0]
    claim = text.split("CLAIM: ")[1].split("\n")[0]
    same = claim.split()[0] == evidence.split()[0]
    return reply(json.dumps({"label": "supported" if same else "unsupported"}))


@pytest.fixture
def srv(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv(KEY_ENV, "sk-items-test-key-123456")
    with FakeOpenAIServer(responder=_says_supported) as server:
        yield server


def _spec(tmp: Path, base_url: str, datasets: str, *, samples: int = 1) -> Path:
    (tmp / "prompts").mkdir(exist_ok=True)
    (tmp / "prompts" / "support-check.v1.prompt").write_text(PROMPT, encoding="utf-8")
    spec = tmp / "spec.toml"
    spec.write_text(
        f"""
name = "items"
bootstrap = 200
prompt_dirs = ["prompts"]
{datasets}
[defaults]
max_attempts = 1
timeout_s = 5
[[judges]]
models = ["{MODEL}"]
prompts = ["support-check@1", "pairwise-preference@1"]
samples = {samples}
api_base = "{base_url}"
api_key_env = "{KEY_ENV}"
""",
        encoding="utf-8",
    )
    return spec


SINGLE = """
[[datasets]]
kind = "items"
name = "mine"
path = "mine.csv"
gold_label_column = "gold"
raters = ["r1", "r2"]
variables = { claim = "response", evidence = "context" }
"""


def _single_csv(tmp: Path) -> None:
    _csv(tmp / "mine.csv", ["id", "response", "context", "gold", "r1", "r2"], ROWS)


def test_single_items_judged_with_mapped_columns_and_agreement_with_gold(
    srv: FakeOpenAIServer, tmp_path: Path
) -> None:
    _single_csv(tmp_path)
    out = tmp_path / "run"
    outcome = run_spec(_spec(tmp_path, srv.base_url, SINGLE), RunOptions(output_dir=str(out)))
    assert outcome.status == "complete", outcome.message
    by_id = {r.item_id: r for r in iter_jsonl(out / ITEM_JUDGMENTS_FILE, ItemJudgmentRecord)}
    records = [by_id[row[0]] for row in ROWS]
    assert len(by_id) == len(ROWS)  # the pairwise judge does not judge single items
    assert {r.judge_id for r in records} == {f"{MODEL}::support-check@1"}
    assert len(srv.requests) == len(ROWS)
    items = {r.item_id: r for r in iter_jsonl(out / ITEMS_FILE, ItemRecord)}
    assert items["q1"].gold_label == "Unsupported" and items["q3"].ratings == {
        "r1": "supported",
        "r2": "unsupported",
    }
    pred = [r.label for r in records]
    gold = [row[3].lower() for row in ROWS]
    row = read_json(out / "metrics.json")["items"]["rows"][0]
    assert row["accuracy"] == pytest.approx(accuracy_score(gold, pred))
    assert row["cohen_kappa"] == pytest.approx(cohen_kappa_score(gold, pred))
    assert row["coverage"] == 1.0 and row["n_items"] == len(ROWS)
    assert row["accuracy_lo"] <= row["accuracy"] <= row["accuracy_hi"]
    raters = read_json(out / "metrics.json")["items"]["raters"][0]
    assert raters["raters"] == ["r1", "r2"]
    assert raters["kappa_names"] == [f"{MODEL}::support-check@1", "r1", "r2"]
    r1 = [row[4] for row in ROWS]
    r2 = [row[5] for row in ROWS]
    assert raters["kappa"][1][2] == pytest.approx(cohen_kappa_score(r1, r2))
    assert raters["kappa"][0][1] == pytest.approx(cohen_kappa_score(pred, r1))


PAIRWISE = """
[[datasets]]
kind = "items"
task = "pairwise"
name = "duel"
path = "duel.csv"
variables = { response_a = "left", response_b = "right" }
"""


def test_pairwise_items_are_judged_in_both_orders_and_a_first_slot_judge_is_caught(
    srv: FakeOpenAIServer, tmp_path: Path
) -> None:
    rows = [(f"p{i}", f"left {i}", f"right {i}", "A" if i % 2 else "B") for i in range(8)]
    _csv(tmp_path / "duel.csv", ["id", "left", "right", "gold_preference"], rows)
    out = tmp_path / "run"
    outcome = run_spec(_spec(tmp_path, srv.base_url, PAIRWISE), RunOptions(output_dir=str(out)))
    assert outcome.status == "complete", outcome.message
    records = list(iter_jsonl(out / ITEM_JUDGMENTS_FILE, ItemJudgmentRecord))
    assert len(records) == 2 * len(rows) and {r.order for r in records} == {"ab", "ba"}
    shown_first = [b["messages"][-1]["content"] for b in srv.requests]
    assert sum('Response A:\n"""\nright 0' in t for t in shown_first) == 1  # swapped once
    assert {(r.order, r.preference) for r in records} == {("ab", "A"), ("ba", "B")}
    row = read_json(out / "metrics.json")["items"]["rows"][0]
    assert row["position_consistency"] == 0.0 and row["position_bias"] == 1.0
    assert row["win_rate_a"] == 0.5 and row["win_rate_b"] == 0.5 and row["tie_rate"] == 0.0
    assert row["accuracy"] == 0.5  # half the verdicts match the gold preference


def test_samples_add_a_majority_vote_row(srv: FakeOpenAIServer, tmp_path: Path) -> None:
    _single_csv(tmp_path)
    out = tmp_path / "run"
    spec = _spec(tmp_path, srv.base_url, SINGLE, samples=3)
    assert run_spec(spec, RunOptions(output_dir=str(out))).status == "complete"
    rows = {r["judge_id"]: r for r in read_json(out / "metrics.json")["items"]["rows"]}
    majority = rows[f"{MODEL}::support-check@1#majority"]
    assert majority["samples"] == 3
    assert majority["modal_agreement"] == 1.0 and majority["label_entropy"] == 0.0
    assert majority["accuracy"] == rows[f"{MODEL}::support-check@1#0"]["accuracy"]


def test_resume_judges_only_what_is_missing(srv: FakeOpenAIServer, tmp_path: Path) -> None:
    _single_csv(tmp_path)
    out = tmp_path / "run"
    spec = _spec(tmp_path, srv.base_url, SINGLE)
    assert run_spec(spec, RunOptions(output_dir=str(out), use_cache=False)).status == "complete"
    path = out / ITEM_JUDGMENTS_FILE
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:2]) + lines[2][:10], encoding="utf-8")  # torn third line
    before = len(srv.requests)
    again = run_spec(spec, RunOptions(output_dir=str(out), use_cache=False))
    assert again.status == "complete" and again.recorded == again.planned == len(ROWS)
    assert len(srv.requests) - before == len(ROWS) - 2
    keys = [r.key for r in iter_jsonl(path, ItemJudgmentRecord)]
    assert len(keys) == len(set(keys)) == len(ROWS)


def test_a_bad_row_is_one_line_naming_file_line_and_column(
    srv: FakeOpenAIServer, tmp_path: Path
) -> None:
    _csv(tmp_path / "duel.csv", ["id", "left", "right"], [("p1", "a", "b"), ("p2", "a", "")])
    code, _, err = invoke(["run", str(_spec(tmp_path, srv.base_url, PAIRWISE))])
    assert code != 0
    assert "duel.csv:3: field 'right'" in err and "both responses" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_pairwise_dataset_without_a_pairwise_prompt_is_refused(
    srv: FakeOpenAIServer, tmp_path: Path
) -> None:
    _csv(tmp_path / "duel.csv", ["id", "left", "right"], [("p1", "a", "b")])
    spec = _spec(tmp_path, srv.base_url, PAIRWISE)
    spec.write_text(spec.read_text().replace(', "pairwise-preference@1"', ""), encoding="utf-8")
    with pytest.raises(AssayError, match="no judge with a pairwise prompt"):
        run_spec(spec, RunOptions(output_dir=str(tmp_path / "run")))


def test_dry_run_plans_item_requests_and_sends_nothing(
    srv: FakeOpenAIServer, tmp_path: Path
) -> None:
    from assay.runs import load_spec
    from assay.runs.preview._dryrun import plan_run

    rows = [(f"p{i}", f"left {i}", f"right {i}") for i in range(5)]
    _csv(tmp_path / "duel.csv", ["id", "left", "right"], rows)
    spec = _spec(tmp_path, srv.base_url, PAIRWISE)
    plan = plan_run(load_spec(spec), RunOptions(output_dir=str(tmp_path / "run")))
    by_id = {row.id: row for row in plan.rows}
    pairwise = by_id[f"{MODEL}::pairwise-preference@1"]
    assert pairwise.items == pairwise.to_send == 2 * len(rows) and pairwise.input_tokens > 0
    assert by_id[f"{MODEL}::support-check@1"].items == 0
    assert srv.requests == [] and not (tmp_path / "run").exists()


def test_a_cached_rerun_answers_every_item_before_the_workers(
    srv: FakeOpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The items stage reads the cache first, as the judge stage does (`_cache_first`):
    a re-run into a new directory sends nothing, hands no judgment to a worker, and
    writes the same records (order aside; latency and time are the re-run's own)."""
    from assay.runs.stages import _items

    _single_csv(tmp_path)
    rows = [(f"p{i}", f"left {i}", f"right {i}", "A" if i % 2 else "B") for i in range(8)]
    _csv(tmp_path / "duel.csv", ["id", "left", "right", "gold_preference"], rows)
    spec = _spec(tmp_path, srv.base_url, SINGLE + PAIRWISE)
    cache = str(tmp_path / "cache")
    first = run_spec(spec, RunOptions(output_dir=str(tmp_path / "a"), cache_dir=cache))
    assert first.status == "complete" and len(srv.requests) == len(ROWS) + 2 * len(rows)
    handled: list[Any] = []
    real_judge = _items.ItemsStage.judge

    async def counted(self: Any, work: Any, prepared: Any = None) -> Any:
        handled.append(work)
        return await real_judge(self, work, prepared)

    monkeypatch.setattr(_items.ItemsStage, "judge", counted)
    again = run_spec(spec, RunOptions(output_dir=str(tmp_path / "b"), cache_dir=cache))
    assert again.status == "complete" and handled == []
    assert len(srv.requests) == len(ROWS) + 2 * len(rows)  # nothing sent

    def records(run: str) -> dict[Any, dict[str, Any]]:
        path = tmp_path / run / ITEM_JUDGMENTS_FILE
        drop = {"latency_s", "recorded_at", "cache_hit", "attempts"}
        return {r.key: r.model_dump(exclude=drop) for r in iter_jsonl(path, ItemJudgmentRecord)}

    assert records("b") == records("a")
    reread = list(iter_jsonl(tmp_path / "b" / ITEM_JUDGMENTS_FILE, ItemJudgmentRecord))
    assert all(r.cache_hit and r.attempts == 0 for r in reread)
