"""`assay.view.detail`: one item of a real run, with the messages rebuilt from the prompt
file, compared with what the judges actually sent (the loopback server records every
request); edited prompt and dataset files are marked; pairwise orders, ForceBench
members, sampled judges, claims, and a factuality answer's chain with policies."""

from __future__ import annotations

import csv
import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from _item_runs import gold_items, labelled, write_item_run
from pydantic import BaseModel, Field

from assay.adjudication import append_adjudication
from assay.core.records import ItemJudgmentRecord, JudgmentRecord
from assay.core.rundir import ITEM_JUDGMENTS_FILE, JUDGMENTS_FILE, file_sha256, iter_jsonl
from assay.prompts import load_prompt_file
from assay.runs import Runner, RunOptions, load_spec, run_spec
from assay.testing import Behavior, FakeOpenAIServer, reply
from assay.view.detail import ItemDetail, JudgmentDetail, item_detail
from assay.view.detail._sources import check_prompt

KEY_ENV = "VIEW_DETAIL_KEY"
MODEL = "openai/view-judge"
ROWS = [  # id, response, context, gold, rater
    ("q1", "Aspirin cures headaches.", "Aspirin relieves some.", "unsupported", "supported"),
    ("q2", "Water boils at 100 C.", "At sea level water boils.", "supported", "supported"),
    ("q3", "The trial enrolled 40.", "The trial enrolled 40 adults.", "supported", "unsupported"),
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
+++
=== system ===
You check claims.
=== user ===
EVIDENCE: {{ evidence }}
CLAIM: {{ claim }}
"""
SPEC = f"""
name = "view-items"
bootstrap = 0
prompt_dirs = ["prompts"]
[[datasets]]
kind = "items"
name = "mine"
path = "mine.csv"
gold_label_column = "gold"
raters = ["r1"]
variables = {{ claim = "response", evidence = "context" }}
[[datasets]]
kind = "items"
task = "pairwise"
name = "duel"
path = "duel.csv"
variables = {{ response_a = "left", response_b = "right" }}
[defaults]
max_attempts = 1
timeout_s = 5
[[judges]]
models = ["{MODEL}"]
prompts = ["support-check@1", "pairwise-preference@1"]
samples = 2
api_base = "BASE_URL"
api_key_env = "{KEY_ENV}"
"""


def _answer(body: dict[str, Any]) -> Behavior:
    """The first slot for pairwise prompts; supported when claim and evidence share
    their first word."""
    text = body["messages"][-1]["content"]
    if "Response A:" in text:
        return reply(json.dumps({"label": "A", "rationale": "first"}))
    evidence = text.split("EVIDENCE: ")[1].split("\n")[0]
    claim = text.split("CLAIM: ")[1].split("\n")[0]
    same = claim.split()[0] == evidence.split()[0]
    return reply(json.dumps({"label": "supported" if same else "unsupported"}))


def _csv(path: Path, header: list[str], rows: list[tuple[str, ...]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerows(rows)


def _items_run(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[Any]]:
    """A real items run (single and pairwise, two samples each) and the messages of
    every request the judges sent."""
    monkeypatch.setenv(KEY_ENV, "sk-view-detail-test-123456")
    (root / "prompts").mkdir()
    (root / "prompts" / "support-check.v1.prompt").write_text(PROMPT, encoding="utf-8")
    _csv(root / "mine.csv", ["id", "response", "context", "gold", "r1"], ROWS)
    duel = [(f"p{i}", f"left {i}", f"right {i}", "A") for i in range(3)]
    _csv(root / "duel.csv", ["id", "left", "right", "gold_preference"], duel)
    with FakeOpenAIServer(responder=_answer) as srv:
        spec = root / "spec.toml"
        spec.write_text(SPEC.replace("BASE_URL", srv.base_url), encoding="utf-8")
        outcome = run_spec(spec, RunOptions(output_dir=str(root / "run"), progress=False))
        sent = [body["messages"] for body in srv.requests]
    assert outcome.status == "complete", outcome.message
    return root / "run", sent


@pytest.fixture
def items_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, list[Any]]:
    return _items_run(tmp_path, monkeypatch)


def _dumped(j: JudgmentDetail) -> list[dict[str, str]]:
    assert j.messages is not None, (j.messages_status, j.messages_note)
    return [m.model_dump() for m in j.messages]


def test_every_rebuilt_request_is_one_the_judges_sent(items_run: tuple[Path, list[Any]]) -> None:
    run, sent = items_run
    rebuilt: list[Any] = []
    for dataset, ids in (("mine", [r[0] for r in ROWS]), ("duel", ["p0", "p1", "p2"])):
        for item_id in ids:
            detail = item_detail(run, dataset, item_id)
            assert all(j.messages_status == "exact" for j in detail.judgments)
            rebuilt += [json.dumps(_dumped(j)) for j in detail.judgments]
    assert Counter(rebuilt) == Counter(json.dumps(m) for m in sent)  # one for one


def test_an_item_has_its_variables_gold_raters_labels_and_records(
    items_run: tuple[Path, list[Any]],
) -> None:
    run, _ = items_run
    detail = item_detail(run, "mine", "q1")
    assert detail.unit == "item" and not detail.pairwise
    assert detail.variables is not None and detail.variables["claim"] == ROWS[0][1]
    assert detail.variables["evidence"] == ROWS[0][2] and detail.variables_note is None
    assert detail.gold == {"label": "unsupported"} and detail.ratings == {"r1": "supported"}
    assert detail.labels == ["supported", "unsupported"]
    records = {
        r.judge_id: r
        for r in iter_jsonl(run / ITEM_JUDGMENTS_FILE, ItemJudgmentRecord)
        if r.item_id == "q1"
    }
    assert {j.judge_id for j in detail.judgments} == set(records)
    for j in detail.judgments:
        record = records[j.judge_id]
        assert (j.label, j.raw_output, j.status) == (
            record.label,
            record.raw_output,
            record.status.value,
        )
        assert j.prompt_sha256 == record.prompt_sha256 and j.attempts == record.attempts
        assert j.prompt_tokens == record.usage.prompt_tokens > 0
        assert j.messages_status == "exact" and _dumped(j)[0]["role"] == "system"
    (vote,) = detail.majorities
    assert vote.judge_id == f"{MODEL}::support-check@1#majority"
    assert vote.labels == [records[f"{MODEL}::support-check@1#{k}"].label for k in (0, 1)]


def test_pairwise_items_swap_the_responses_in_order_ba(items_run: tuple[Path, list[Any]]) -> None:
    run, _ = items_run
    detail = item_detail(run, "duel", "p0")
    assert detail.pairwise and detail.variants == ["ab", "ba"]
    assert detail.labels == ["A", "B", "tie"] and detail.gold == {"preference": "A"}
    ba = detail.variables_by_variant["ba"]
    assert (ba["response_a"], ba["response_b"]) == ("right 0", "left 0")
    by_order = {(j.judge_id.endswith("#0"), j.variant): j for j in detail.judgments}
    ab_text = _dumped(by_order[(True, "ab")])[-1]["content"]
    ba_text = _dumped(by_order[(True, "ba")])[-1]["content"]
    assert ab_text.index("left 0") < ab_text.index("right 0")
    assert ba_text.index("right 0") < ba_text.index("left 0")
    assert (by_order[(True, "ab")].preference, by_order[(True, "ba")].preference) == ("A", "B")


def test_an_edited_prompt_file_is_marked_with_both_hashes(
    items_run: tuple[Path, list[Any]],
) -> None:
    run, _ = items_run
    prompt = run.parent / "prompts" / "support-check.v1.prompt"
    before = file_sha256(prompt)
    prompt.write_text(PROMPT.replace("You check claims.", "You check claims carefully."))
    after = file_sha256(prompt)
    detail = item_detail(run, "mine", "q2")
    for j in detail.judgments:
        assert j.messages_status == "prompt changed" and j.messages is None
        assert j.messages_note is not None and before in j.messages_note
        assert after in j.messages_note and str(prompt) in j.messages_note
    prompt.unlink()
    gone = item_detail(run, "mine", "q2").judgments[0]
    assert gone.messages_status == "prompt missing" and before in (gone.messages_note or "")
    pairwise = item_detail(run, "duel", "p1")  # the built-in prompt is untouched
    assert {j.messages_status for j in pairwise.judgments} == {"exact"}


def test_an_edited_dataset_is_marked_and_still_shown(items_run: tuple[Path, list[Any]]) -> None:
    run, _ = items_run
    data = run.parent / "mine.csv"
    before = file_sha256(data)
    rows = [(r[0], r[1] + " Edited.", *r[2:]) if r[0] == "q3" else r for r in ROWS]
    _csv(data, ["id", "response", "context", "gold", "r1"], rows)
    detail = item_detail(run, "mine", "q3")
    assert detail.variables_note is not None
    assert detail.variables_note.startswith("dataset file changed since the run")
    assert before in detail.variables_note and file_sha256(data) in detail.variables_note
    assert detail.variables is not None and detail.variables["claim"].endswith("Edited.")
    assert {j.messages_status for j in detail.judgments} == {"dataset changed"}
    assert all(j.label is not None for j in detail.judgments)  # the records are all there
    data.unlink()
    gone = item_detail(run, "mine", "q3")
    assert gone.variables is None and "is gone" in (gone.variables_note or "")
    assert {j.messages_status for j in gone.judgments} == {"dataset changed"}
    assert gone.gold == {"label": "supported"}  # items.jsonl keeps the gold


def test_unknown_items_are_a_key_error(items_run: tuple[Path, list[Any]]) -> None:
    run, _ = items_run
    with pytest.raises(KeyError):
        item_detail(run, "mine", "q9")
    with pytest.raises(KeyError):
        item_detail(run, "mine", "q")  # a prefix of real ids is no match


def test_the_adjudication_and_its_history_come_with_the_item(
    items_run: tuple[Path, list[Any]],
) -> None:
    run, _ = items_run
    append_adjudication(run, dataset="mine", item_id="q1", annotator="ann", label="supported")
    append_adjudication(run, dataset="mine", item_id="q1", annotator="bob", label="unsupported")
    detail: ItemDetail = item_detail(run, "mine", "q1")
    assert detail.adjudication is not None and detail.adjudication.label == "unsupported"
    assert [a.annotator for a in detail.history] == ["ann", "bob"]
    assert item_detail(run, "mine", "q2").adjudication is None


def test_a_custom_output_model_hash_is_derived_and_verified(tmp_path: Path) -> None:
    class Verdict(BaseModel):
        label: str
        confidence: float = Field(ge=0.0, le=1.0)

    path = tmp_path / "support-check.v1.prompt"
    path.write_text(PROMPT, encoding="utf-8")
    prompt = load_prompt_file(path).with_output_model(Verdict)
    identity = prompt.identity()
    assert prompt.sha256 != file_sha256(path)
    check = check_prompt(identity, prompt.sha256)
    assert check.status == "exact" and check.prompt is not None
    assert check.note is not None and file_sha256(path) in check.note
    path.write_text(PROMPT + "\n", encoding="utf-8")
    assert check_prompt(identity, prompt.sha256).status == "prompt changed"


# ---- ForceBench pairs --------------------------------------------------------------


def _force_answer(body: dict[str, Any]) -> Behavior:
    return reply(json.dumps({"label": "fully_supported", "confidence": 0.8, "rationale": "r"}))


def test_forcebench_pairs_show_both_members_and_the_baseline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-view-detail-test-123456")
    with FakeOpenAIServer(responder=_force_answer) as srv:
        spec = tmp_path / "spec.toml"
        spec.write_text(
            f"""
name = "view-force"
bootstrap = 0
[[datasets]]
name = "demo"
path = "builtin:forcebench-demo"
[defaults]
max_attempts = 1
[[judges]]
models = ["{MODEL}"]
prompts = ["generic-support@1"]
api_base = "{srv.base_url}"
api_key_env = "{KEY_ENV}"
[[baselines]]
name = "token-overlap"
""",
            encoding="utf-8",
        )
        options = RunOptions(output_dir=str(tmp_path / "run"), progress=False)
        assert Runner(load_spec(spec), options).run().status == "complete"
        sent = [body["messages"] for body in srv.requests]
    run = tmp_path / "run"
    records = list(iter_jsonl(run / JUDGMENTS_FILE, JudgmentRecord))
    pair_ids = sorted({r.pair_id for r in records})
    rebuilt: list[str] = []
    for pair_id in pair_ids:
        detail = item_detail(run, "demo", pair_id)
        assert detail.unit == "pair" and detail.variants == ["calibrated", "raised"]
        assert detail.variables is not None and detail.variables["id"] == pair_id
        for j in detail.judgments:
            if j.prompt_id is None:
                assert j.messages_status == "no prompt" and j.messages is None
                continue
            assert j.messages_status == "exact"
            claim = detail.variables_by_variant[j.variant or ""]["claim"]
            assert claim in _dumped(j)[-1]["content"]
            rebuilt.append(json.dumps(_dumped(j)))
    assert Counter(rebuilt) == Counter(json.dumps(m) for m in sent)
    one = item_detail(run, "demo", pair_ids[0])
    members = {(j.judge_id, j.variant) for j in one.judgments}
    assert len(members) == 4  # two judges x two members
    with pytest.raises(KeyError):
        item_detail(run, "demo", "no-such-pair")
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    (info,) = manifest["datasets"]
    info["path"] = str(Path("/another/install/assay/data") / Path(info["path"]).name)
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    moved = item_detail(run, "demo", pair_ids[0])  # a bundled dataset: this install's copy
    assert moved.variables == one.variables and moved.variables_note is None


def test_a_run_directory_moved_elsewhere_still_reads(items_run: tuple[Path, list[Any]]) -> None:
    run, _ = items_run
    moved = run.parent / "moved"
    shutil.copytree(run, moved)
    detail = item_detail(moved, "mine", "q1")
    assert {j.messages_status for j in detail.judgments} == {"exact"}


def test_a_run_without_spec_or_judges_in_its_manifest_shows_its_records(tmp_path: Path) -> None:
    """A run directory written directly (no spec, no judges in the manifest): the item
    and its records show; the prompt the records name cannot be found, and says so."""
    run = write_item_run(
        tmp_path / "run",
        "bare",
        gold_items(["yes", "no"]),
        [*labelled("j1", ["yes", None]), {"item_id": "item-0", "judge_id": "j2", "label": "no",
         "prompt_id": "p", "prompt_version": 1, "prompt_sha256": "ab" * 32}],
    )  # fmt: skip
    detail = item_detail(run, "d", "item-0")
    assert detail.unit == "item" and detail.gold == {"label": "yes"}
    assert detail.variables is None and "not in the run's manifest" in (detail.variables_note or "")
    by_judge = {j.judge_id: j for j in detail.judgments}
    assert by_judge["j1"].messages_status == "no prompt"
    assert by_judge["j2"].messages_status == "prompt missing"
    assert "ab" * 32 in (by_judge["j2"].messages_note or "")
    assert item_detail(run, "d", "item-1").judgments[0].status == "parse_error"


def test_an_index_hook_says_where_the_lines_are(items_run: tuple[Path, list[Any]]) -> None:
    """An index (the viewer's table) may give the byte offsets of an item's lines:
    the same item comes back, and lines it leaves out are not read."""
    run, _ = items_run
    asked: list[tuple[str, str, str]] = []

    def offsets(path: Path, dataset: str, item_id: str) -> list[int] | None:
        asked.append((path.name, dataset, item_id))
        data, out, at = path.read_bytes(), [], 0
        for line in data.splitlines(keepends=True):
            if json.loads(line)["item_id"] == item_id:
                out.append(at)
            at += len(line)
        return out

    scanned = item_detail(run, "duel", "p2")
    indexed = item_detail(run, "duel", "p2", index=offsets)
    assert asked == [(ITEM_JUDGMENTS_FILE, "duel", "p2")]
    assert indexed.model_dump() == scanned.model_dump()
    nothing = item_detail(run, "duel", "p2", index=lambda *_: [])
    assert nothing.judgments == [] and nothing.variables == scanned.variables
