"""`assay policies apply` options and neighbours over real run directories: gold fields,
an evidence gate and chaining behind it, policies in a run spec, the fail-closed audit
export, the bundled example, --split, --by and --slice source-missing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _policies_cli_helpers import POLICY, RUN_SPEC, write_text
from _policies_cli_helpers import assay as _assay
from _policies_cli_helpers import lines as _lines
from _policies_fixtures import GATE_POLICY, make_gold_run, write_gates

pytest_plugins = ["_policies_fixtures"]  # base_run, run_dir, policy_file


def _bad_policy(tmp_path: Path, text: str) -> Path:
    return write_text(tmp_path / "bad.toml", text)


GOLD_ROWS = [
    {
        "id": "q1",
        "question": "Dose?",
        "answer": "Take 5 mg daily. Drink water with it.",
        "gold_action": "full",
        "split": "test",
        "evidence": [{"id": "q1-p1", "text": "Take 5 mg daily. Drink water with it."}],
        "gold_claims": [
            {
                "id": "c1",
                "text": "Take 5 mg daily.",
                "gold_status": "certified",
                "label": "supported",
            },
            {
                "id": "c2",
                "text": "Drink water with it.",
                "gold_status": "certified",
                "label": "supported",
            },
        ],
    },
    {
        "id": "q2",
        "question": "Canal?",
        "answer": "It opened in 1914. Zebras run it.",
        "gold_action": "partial",
        "evidence": [{"id": "q2-p1", "text": "The canal opened in 1914."}],
        "gold_claims": [
            {"id": "c1", "text": "The canal opened in 1914.", "gold_status": "certified"},
            {
                "id": "c2",
                "text": "Zebras operate the locks.",
                "gold_status": "omitted",
                "critical": False,
            },
        ],
    },
    {
        "id": "q3",
        "question": "Moon?",
        "answer": "Cheese.",
        "gold_action": "abstain",
        "evidence": [{"id": "q3-p1", "text": "The moon is rock."}],
        "gold_claims": [
            {
                "id": "c1",
                "text": "Made of green cheese.",
                "gold_status": "omitted",
                "label": "unsupported",
            }
        ],
    },
]


@pytest.fixture(scope="module")
def gold_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_gold_run(tmp_path_factory.mktemp("policies_gold"), GOLD_ROWS)


def test_gold_fields_of_the_records_reach_decisions_and_metrics(
    gold_run: Path, policy_file: Path
) -> None:
    code, out, err = _assay("policies", "apply", gold_run, "--policy", policy_file)
    assert code == 0, err
    folder = gold_run / "policies" / "cert"
    responses = _lines(folder / "responses.jsonl")
    assert [r["gold_action"] for r in responses] == [r["gold_action"] for r in GOLD_ROWS]
    claims = _lines(folder / "claims.jsonl")
    given = [c.get("gold_status") for r in GOLD_ROWS for c in r["gold_claims"]]  # type: ignore[attr-defined]
    assert [c["gold_status"] for c in claims] == given
    metrics = json.loads((folder / "metrics.json").read_text())
    correct = sum(1 for r in responses if r["action_correct"])
    assert (metrics["action_accuracy"]["numerator"], metrics["action_accuracy"]["denominator"]) == (
        correct,
        len(GOLD_ROWS),
    )
    usable = [c for c in claims if c["gold_status"] == "certified"]
    expressed = [c for c in usable if c["decision"] in {"assert", "qualify"}]
    assert (metrics["pau"]["numerator"], metrics["pau"]["denominator"]) == (
        len(expressed),
        len(usable),
    )
    assert expressed, "claims equal to their passage are certified by the overlap verifier"
    fc = json.loads((gold_run / "policies" / "render" / "metrics.json").read_text())
    labelled = sum(1 for r in GOLD_ROWS for c in r["gold_claims"] if "label" in c)  # type: ignore[attr-defined]
    assert fc["n_gold"] == labelled


CHAINED = (
    GATE_POLICY
    + """
[[policies]]
name = "cert-gated"
kind = "claim_selective"
after = "gate"

[[policies]]
name = "cert"
kind = "claim_selective"
"""
)


def test_gate_policy_and_a_claim_policy_chained_behind_it(run_dir: Path, tmp_path: Path) -> None:
    write_gates(run_dir, {"fd-01": 0.9, "fd-02": 0.05}, "factuality-demo")
    path = _bad_policy(tmp_path, CHAINED)
    code, out, err = _assay("policies", "apply", run_dir, "--policy", path)
    assert code == 0, err
    folder = run_dir / "policies"
    gate = {d["question_id"]: d for d in _lines(folder / "gate" / "gate_decisions.jsonl")}
    n_answers = len((run_dir / "answers.jsonl").read_text().splitlines())
    assert len(gate) == n_answers
    assert (gate["fd-01"]["outcome"], gate["fd-02"]["outcome"]) == ("pass", "abstain")
    assert {gate[q]["outcome"] for q in gate if q not in {"fd-01", "fd-02"}} == {"refuse"}
    gated = {r["answer_id"]: r for r in _lines(folder / "cert-gated" / "responses.jsonl")}
    plain = {r["answer_id"]: r for r in _lines(folder / "cert" / "responses.jsonl")}
    assert gated["fd-02"]["outcome"] == "abstain" and gated["fd-03"]["outcome"] == "refuse"
    assert gated["fd-01"]["status_counts"] == plain["fd-01"]["status_counts"]
    claims = [
        c for c in _lines(folder / "cert-gated" / "claims.jsonl") if c["answer_id"] == "fd-02"
    ]
    assert claims and {(c["decision"], c["reason"]) for c in claims} == {
        ("withhold", "gate_abstained")
    }
    manifest = json.loads((folder / "cert-gated" / "manifest.json").read_text())
    assert manifest["inputs"]["gate_id"] == "ce-tiny"
    assert "gates.jsonl" in manifest["inputs"]["records_sha256"]
    assert (
        "gates.jsonl"
        not in json.loads((folder / "cert" / "manifest.json").read_text())["inputs"][
            "records_sha256"
        ]
    )


def test_after_must_name_a_gate_of_the_file(run_dir: Path, tmp_path: Path) -> None:
    path = _bad_policy(
        tmp_path, '[[policies]]\nname = "c"\nkind = "claim_selective"\nafter = "nope"\n'
    )
    code, _, err = _assay("policies", "apply", run_dir, "--policy", path)
    assert code == 2 and "after" in err and "bad.toml" in err
    assert not (run_dir / "policies").exists()


def test_a_gate_policy_without_gate_records_is_one_line(run_dir: Path, tmp_path: Path) -> None:
    path = _bad_policy(tmp_path, '[[policies]]\nname = "g"\nkind = "evidence_gate"\n')
    code, _, err = _assay("policies", "apply", run_dir, "--policy", path)
    assert code == 2 and "[gate]" in err and "field 'gate'" in err
    assert not (run_dir / "policies").exists()


def test_a_run_spec_carries_policies_checked_at_load(tmp_path: Path) -> None:
    bad = RUN_SPEC + '\n[[policies]]\nname = "x"\nkind = "fail_closed"\ntau_contradict = "1.5"\n'
    (tmp_path / "bad.toml").write_text(bad, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path)
        code, _, err = _assay("run", tmp_path / "bad.toml")
    assert code == 2 and "bad.toml" in err and "tau_contradict" in err
    assert len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "run").exists()
    (tmp_path / "good.toml").write_text(RUN_SPEC + POLICY, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path)
        assert _assay("run", tmp_path / "good.toml")[0] == 0
        code, out, err = _assay("policies", "apply", "run", "--policy", "good.toml")
    assert code == 0, err
    assert (tmp_path / "run" / "policies" / "render" / "certificates.jsonl").is_file()


def test_audit_export_explains_the_applied_decisions(run_dir: Path, tmp_path: Path) -> None:
    write_gates(run_dir, {"fd-01": 0.9, "fd-02": 0.05}, "factuality-demo")
    text = CHAINED + '\n[[policies]]\nname = "render"\nkind = "fail_closed"\nafter = "gate"\n'
    path = _bad_policy(tmp_path, text)
    assert _assay("policies", "apply", run_dir, "--policy", path)[0] == 0
    code, out, err = _assay("policies", "export", run_dir, "--name", "render", "--what", "audit")
    assert code == 0, err
    audits = [json.loads(line) for line in out.splitlines()]
    claims = _lines(run_dir / "policies" / "render" / "claims.jsonl")
    assert [(a["answer_id"], c["claim_id"], c["state"]) for a in audits for c in a["claims"]] == [
        (c["answer_id"], c["claim_id"], c["native"]) for c in claims
    ]
    code, _, err = _assay("policies", "export", run_dir, "--name", "cert", "--what", "audit")
    assert code == 2 and "fail_closed" in err
    with (run_dir / "claims.jsonl").open("a", encoding="utf-8") as fh:
        record = _lines(run_dir / "claims.jsonl")[0]
        fh.write(json.dumps({**record, "claim": "changed"}) + "\n")
    code, _, err = _assay("policies", "export", run_dir, "--name", "render", "--what", "audit")
    assert code == 2 and "claims.jsonl changed" in err


def test_the_bundled_policies_example_runs_and_applies(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parents[1] / "examples" / "policies.toml"
    run = tmp_path / "run"
    assert _assay("run", example, "--output-dir", run)[0] == 0
    code, out, err = _assay("policies", "apply", run, "--policy", example)
    assert code == 0, err
    assert "cert (claim_selective v1)" in out and "render (fail_closed v1)" in out
    assert sorted(p.name for p in (run / "policies").iterdir()) == ["cert", "gate", "render"]


def test_split_keeps_its_answers_and_marks_in_sample_metrics(
    gold_run: Path, tmp_path: Path
) -> None:
    tuned = '[[policies]]\nname = "t"\nkind = "claim_selective"\ntuned = { split = "test" }\n'
    path = _bad_policy(tmp_path, tuned)
    code, _, err = _assay("policies", "apply", gold_run, "--policy", path, "--split", "test")
    assert code == 0, err
    assert "in-sample" in err
    folder = gold_run / "policies" / "t"
    wanted = [r["id"] for r in GOLD_ROWS if r.get("split") == "test"]
    assert [r["answer_id"] for r in _lines(folder / "responses.jsonl")] == wanted
    assert json.loads((folder / "metrics.json").read_text())["in_sample"] is True
    assert json.loads((folder / "manifest.json").read_text())["inputs"]["split"] == "test"
    before = (folder / "metrics.json").read_bytes()
    code, _, err = _assay("policies", "apply", gold_run, "--policy", path, "--split", "dev")
    assert code == 2 and "--split" in err and "'dev'" in err, err  # no answer is in dev:
    assert (folder / "metrics.json").read_bytes() == before  # the test metrics stay
    code, _, err = _assay("policies", "apply", gold_run, "--policy", path, "--split", "val")
    assert code == 2 and "--split" in err


def test_by_adds_metrics_per_value_of_a_response_field(
    gold_run: Path, policy_file: Path, tmp_path: Path
) -> None:
    args = ("policies", "apply", gold_run, "--policy", policy_file)
    code, _, err = _assay(*args, "--name", "cert", "--by", "split")
    assert code == 0, err
    metrics = json.loads((gold_run / "policies" / "cert" / "metrics.json").read_text())
    groups = metrics["slices"]["split"]
    assert sum(g["metrics"]["n_responses"] for g in groups) == metrics["n_responses"]
    assert [g["value"] for g in groups] == ["test", None]  # missing last
    shutil.rmtree(gold_run / "policies")
    code, _, err = _assay(*args, "--name", "cert", "--by", "colour")
    assert code == 2 and "colour" in err and not (gold_run / "policies").exists()
    code, _, err = _assay(*args, "--name", "render", "--by", "split")
    assert code == 2 and "--by" in err and not (gold_run / "policies").exists()


def test_source_missing_slice_abstains_everywhere(run_dir: Path, policy_file: Path) -> None:
    """The source-missing slice: with every evidence pool emptied a selector abstains on every
    response (action accuracy 1.0), PAU and precision are null, nothing is expressed."""
    args = ("policies", "apply", run_dir, "--policy", policy_file)
    code, _, err = _assay(*args, "--name", "cert", "--slice", "source-missing")
    assert code == 0, err
    metrics = json.loads((run_dir / "policies" / "cert" / "metrics.json").read_text())
    sliced = metrics["source_missing"]
    n = metrics["n_responses"]
    accuracy = sliced["action_accuracy"]
    assert (accuracy["numerator"], accuracy["denominator"], accuracy["value"]) == (n, n, 1.0)
    assert sliced["pau"]["value"] is None and sliced["pau_precision"]["value"] is None
    assert sliced["counts"]["expressed_critical"] == 0
    assert metrics["uccr_cert"] != sliced["uccr_cert"]  # the real run expresses claims
    shutil.rmtree(run_dir / "policies")
    code, _, err = _assay(*args, "--name", "render", "--slice", "source-missing")
    assert code == 2 and "--slice" in err and not (run_dir / "policies").exists()
    code, _, err = _assay(*args, "--slice", "nowhere")
    assert code == 2 and "--slice" in err
