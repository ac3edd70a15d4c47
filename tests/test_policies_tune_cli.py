"""`assay policies tune` over a real run directory: the bundled factuality answers
decomposed by sentence and checked by the overlap verifier (no key, no model)."""

from __future__ import annotations

import hashlib
import json
import shutil
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from _policies_cli_helpers import assay, lines, write_text
from _policies_fixtures import make_gold_run, write_gates

from assay.policies.claim_selective._tuning import default_tuning_spec

pytest_plugins = ["_policies_fixtures"]  # base_run, run_dir, policy_file


def _tune(run_dir: Path, policy: Path, *extra: object) -> tuple[int, str, str]:
    return assay("policies", "tune", run_dir, "--policy", policy, "--name", "cert", *extra)


def test_tune_writes_the_candidate_table_and_the_result(run_dir: Path, policy_file: Path) -> None:
    code, out, err = _tune(run_dir, policy_file)
    folder = run_dir / "policies" / "cert" / "tune"
    result = json.loads((folder / "result.json").read_text())
    candidates = lines(folder / "candidates.jsonl")
    assert len(candidates) == result["n_candidates"] == 420
    assert result["grid_sha256"] == default_tuning_spec().grid_sha256()
    digest = hashlib.sha256((folder / "candidates.jsonl").read_bytes()).hexdigest()
    assert result["candidates_sha256"] == digest
    assert result["inputs"]["verifications.jsonl"]
    feasible = [c for c in candidates if c["feasible"]]
    assert result["n_feasible"] == len(feasible)
    if result["selected"] is None:  # the overlap verifier may certify nothing safely
        assert code == 3 and "uccr_cert" in err and len(err.strip().splitlines()) == 2
        return
    assert code == 0, err
    ranked = [c for c in candidates if c["rank"] == 1]
    assert len(ranked) == 1 and ranked[0]["params"] == result["selected"]
    printed = dict(line.split(" = ") for line in out.strip().splitlines())
    assert printed == result["selected"]


def test_tune_is_deterministic(run_dir: Path, policy_file: Path) -> None:
    _tune(run_dir, policy_file)
    folder = run_dir / "policies" / "cert" / "tune"
    first = {n: (folder / n).read_bytes() for n in ("candidates.jsonl", "result.json")}
    _tune(run_dir, policy_file)
    assert first == {n: (folder / n).read_bytes() for n in first}


GRID = """
grid = { support = ["0.30", "0.40"], conflict = ["0.55"], condition_limited = ["0.30"] }
constraints = [{ metric = "pau", op = ">=", value = "1.01" }]
objectives = [{ metric = "pau", direction = "max" }]
tie_break = [{ param = "support", order = "desc" }]
"""


def test_infeasible_tuning_exits_3_with_one_line(
    run_dir: Path, policy_file: Path, tmp_path: Path
) -> None:
    grid = write_text(tmp_path / "grid.toml", GRID)
    code, out, err = _tune(run_dir, policy_file, "--grid", grid)
    result = json.loads((run_dir / "policies/cert/tune/result.json").read_text())
    assert code == 3 and out == ""
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "pau >= 1.01" in errors[0], err
    assert result["selected"] is None and result["n_candidates"] == 2
    assert result["n_feasible"] == 0


def test_a_small_grid_selects_by_its_tie_break(
    run_dir: Path, policy_file: Path, tmp_path: Path
) -> None:
    """PAU is null on this run (the demo answers carry no gold), so both candidates tie
    on the objective and `support desc` picks the higher support."""
    text = GRID.replace(
        'metric = "pau", op = ">=", value = "1.01"', 'metric = "uccr_cert", op = "==", value = "0"'
    )
    code, out, err = _tune(run_dir, policy_file, "--grid", write_text(tmp_path / "g.toml", text))
    assert code == 0, err
    candidates = lines(run_dir / "policies/cert/tune/candidates.jsonl")
    assert [c["params"]["support"] for c in candidates] == ["0.30", "0.40"]
    assert out.strip().splitlines() == [
        "condition_limited = 0.30",
        "conflict = 0.55",
        "support = 0.40",
    ]


def test_a_bad_grid_file_is_one_line(run_dir: Path, policy_file: Path, tmp_path: Path) -> None:
    grid = write_text(tmp_path / "grid.toml", "grid = {}\n")
    code, _, err = _tune(run_dir, policy_file, "--grid", grid)
    assert code == 2 and "grid.toml" in err and "objectives" in err
    assert len(err.strip().splitlines()) == 1


def test_write_policy_round_trips_through_apply(
    run_dir: Path, policy_file: Path, tmp_path: Path
) -> None:
    out_file = tmp_path / "tuned.toml"
    code, out, err = _tune(run_dir, policy_file, "--write-policy", out_file)
    assert code == 0, err  # the demo run is deterministic: tuning finds a feasible candidate
    selected = dict(line.split(" = ") for line in out.strip().splitlines())
    code, _, err = assay("policies", "apply", run_dir, "--policy", out_file)
    assert code == 0, err
    manifest = json.loads((run_dir / "policies/cert/manifest.json").read_text())
    config = manifest["policy"]["config"] if "policy" in manifest else manifest["config"]
    assert {k: Decimal(config["thresholds"][k]) for k in selected} == {
        k: Decimal(v) for k, v in selected.items()
    }
    assert config["tuned"]["selected"] == selected


def test_tune_of_an_unknown_name_is_one_line(run_dir: Path, policy_file: Path) -> None:
    code, _, err = assay("policies", "tune", run_dir, "--policy", policy_file, "--name", "nope")
    assert code == 2 and "nope" in err and "Traceback" not in err


def test_fail_closed_tuning_without_entailment_scores_is_infeasible(
    run_dir: Path, policy_file: Path, tmp_path: Path
) -> None:
    """The bundled answers carry no gold labels, so VC is null for all 50 candidates
    of the default grid and `vc >= 0.50` fails."""
    args = ("--policy", policy_file, "--name", "render")
    code, out, err = assay("policies", "tune", run_dir, *args)
    result = json.loads((run_dir / "policies/render/tune/result.json").read_text())
    assert code == 3 and out == ""
    assert (result["n_candidates"], result["n_feasible"], result["selected"]) == (50, 0, None)
    assert "error: tuning infeasible: vc >= 0.50" in err
    code, _, err = assay("policies", "tune", run_dir, *args, "--write-policy", tmp_path / "x")
    assert code == 3 and not (tmp_path / "x").exists()  # nothing selected, nothing written


def test_gate_tuning_without_gold_labels_falls_to_the_tie_break(
    run_dir: Path, tmp_path: Path
) -> None:
    """No evidence labels: both objectives are null everywhere, so the default tie-break (tau
    desc, tau_min desc) picks the top of the grid."""
    write_gates(run_dir, {"fd-01": 0.9, "fd-02": 0.05}, "factuality-demo")
    gate = '[[policies]]\nname = "gate"\nkind = "evidence_gate"\ngate = "ce-tiny"\n'
    path = write_text(tmp_path / "gate.toml", gate)
    code, out, err = assay("policies", "tune", run_dir, "--policy", path, "--name", "gate")
    assert code == 0, err
    assert out.strip().splitlines() == ["tau = 0.40", "tau_min = 0.20"]
    result = json.loads((run_dir / "policies/gate/tune/result.json").read_text())
    assert result["gate_id"] == "ce-tiny" and set(result["inputs"]) == {
        "answers.jsonl",
        "gates.jsonl",
    }


STRICT = """
[[policies]]
name = "strict"
kind = "claim_selective"
selector = "threshold"
verifier = "baseline:overlap"
[policies.thresholds]
support = "0.60"
conflict = "0.40"
condition_limited = "0.50"
limitation = "0.50"
"""


def _apply_both(run_dir: Path, tmp_path: Path, policy_file: Path) -> None:
    for file in (policy_file, write_text(tmp_path / "strict.toml", STRICT)):
        code, _, err = assay("policies", "apply", run_dir, "--policy", file, "--resamples", 0)
        assert code == 0, err


def _compare(run_dir: Path, *extra: object) -> tuple[int, str, str]:
    return assay("policies", "compare", run_dir, "--a", "cert", "--b", "strict", *extra)


def test_compare_writes_paired_deltas_of_the_applied_metrics(
    run_dir: Path, policy_file: Path, tmp_path: Path
) -> None:
    _apply_both(run_dir, tmp_path, policy_file)
    code, out, err = _compare(run_dir, "--resamples", 200)
    assert code == 0, err
    result = json.loads((run_dir / "policies/cert/compare/strict.json").read_text())
    metrics = {
        n: json.loads((run_dir / f"policies/{n}/metrics.json").read_text())
        for n in ("cert", "strict")
    }
    assert result["bootstrap"] == {"resamples": 200, "random_state": 0}
    assert (
        result["inputs"]
        == json.loads((run_dir / "policies/strict/manifest.json").read_text())["inputs"][
            "records_sha256"
        ]
    )
    for d in result["deltas"]:
        a, b = metrics["cert"][d["metric"]], metrics["strict"][d["metric"]]
        assert (d["a"]["numerator"], d["a"]["denominator"]) == (a["numerator"], a["denominator"])
        assert (d["b"]["numerator"], d["b"]["denominator"]) == (b["numerator"], b["denominator"])
        if a["value"] is None or b["value"] is None:
            assert d["delta"] is None
        else:
            assert d["delta"] == pytest.approx(a["value"] - b["value"])
        assert d["metric"] in out
    again = (run_dir / "policies/cert/compare/strict.json").read_bytes()
    assert _compare(run_dir, "--resamples", 200)[0] == 0
    assert (run_dir / "policies/cert/compare/strict.json").read_bytes() == again


def test_compare_refuses_outputs_of_different_inputs(
    run_dir: Path, policy_file: Path, tmp_path: Path
) -> None:
    _apply_both(run_dir, tmp_path, policy_file)
    manifest_file = run_dir / "policies/strict/manifest.json"
    manifest = json.loads(manifest_file.read_text())
    manifest["inputs"]["records_sha256"]["verifications.jsonl"] = "0" * 64
    manifest_file.write_text(json.dumps(manifest))
    code, _, err = _compare(run_dir)
    assert code == 2 and "verifications.jsonl" in err
    assert len(err.strip().splitlines()) == 1


def test_compare_of_an_unapplied_policy_is_one_line(run_dir: Path) -> None:
    code, _, err = _compare(run_dir)
    assert code != 0 and "apply it first" in err and "Traceback" not in err


def _row(qid: str, answer: str, passage: str, action: str, status: str) -> dict[str, object]:
    claims = [
        {"id": f"c{i}", "text": t.strip() + ".", "gold_status": status, "critical": True}
        for i, t in enumerate(answer.rstrip(".").split(". "), start=1)
    ]
    return {
        "id": qid,
        "question": "?",
        "answer": answer,
        "gold_action": action,
        "split": "dev",
        "evidence": [{"id": f"{qid}-p1", "text": passage}],
        "gold_claims": claims,
    }


GOLD_ROWS = [
    _row(
        "q1",
        "Take 5 mg daily. Drink water with it.",
        "Take 5 mg daily. Drink water with it.",
        "full",
        "certified",
    ),
    _row(
        "q2",
        "The canal opened with many zebras.",
        "The canal opened in 1914 after years of work.",
        "full",
        "certified",
    ),
    _row("q3", "Made of green cheese.", "The moon is rock.", "abstain", "omitted"),
]


@pytest.fixture(scope="module")
def gold_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_gold_run(tmp_path_factory.mktemp("tune_gold"), GOLD_ROWS)


def test_tune_on_gold_selects_the_best_feasible_pau(gold_run: Path, policy_file: Path) -> None:
    code, out, err = _tune(gold_run, policy_file, "--split", "dev")
    assert code == 0, err
    folder = gold_run / "policies" / "cert" / "tune"
    candidates = lines(folder / "candidates.jsonl")
    feasible = [c for c in candidates if c["feasible"]]
    best = max(
        Fraction(c["metrics"]["pau"]["numerator"], c["metrics"]["pau"]["denominator"])
        for c in feasible
    )
    chosen = [c for c in candidates if c["rank"] == 1][0]
    pau = chosen["metrics"]["pau"]
    assert Fraction(pau["numerator"], pau["denominator"]) == best > 0
    assert json.loads((folder / "result.json").read_text())["split"] == "dev"
    # q2's claim scores s_support 0.5: the most conservative support that still
    # expresses it (tie-break support desc) is 0.50
    assert chosen["params"]["support"] == "0.50"
    assert out.strip().splitlines() == [f"{k} = {v}" for k, v in sorted(chosen["params"].items())]


def test_compare_on_gold_has_real_deltas(gold_run: Path, policy_file: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "gold"
    shutil.copytree(gold_run, run_dir)
    _apply_both(run_dir, tmp_path, policy_file)
    code, _, err = _compare(run_dir, "--resamples", 200, "--metrics", "pau,action_accuracy")
    assert code == 0, err
    result = json.loads((run_dir / "policies/cert/compare/strict.json").read_text())
    assert [d["metric"] for d in result["deltas"]] == ["pau", "action_accuracy"]
    for d in result["deltas"]:
        a = json.loads((run_dir / "policies/cert/metrics.json").read_text())[d["metric"]]
        b = json.loads((run_dir / "policies/strict/metrics.json").read_text())[d["metric"]]
        assert d["delta"] == pytest.approx(a["value"] - b["value"])
        low, high = d["ci"]
        assert low <= d["delta"] <= high
    # strict (support 0.60) does not express q2's claim scored 0.5: one action fewer right
    assert result["deltas"][1]["delta"] == pytest.approx(1 / 3)


def test_sweep_points_agree_with_applying_the_same_thresholds(
    gold_run: Path, policy_file: Path, tmp_path: Path
) -> None:
    run_dir = tmp_path / "gold"
    shutil.copytree(gold_run, run_dir)
    args = (
        "--from",
        "0.35",
        "--to",
        "0.60",
        "--step",
        "0.25",
        "--tie",
        "condition_limited=support-0.05",
    )
    code, out, err = assay(
        "policies", "sweep", run_dir, "--policy", policy_file, "--name", "cert", *args
    )
    assert code == 0, err
    points = lines(run_dir / "policies/cert/sweep.jsonl")
    assert [p["params"] for p in points] == [
        {"support": "0.35", "condition_limited": "0.30"},
        {"support": "0.60", "condition_limited": "0.55"},
    ]
    assert "pau" in out and "critical_risk" in out
    code, _, err = assay("policies", "apply", run_dir, "--policy", policy_file, "--name", "cert")
    assert code == 0, err
    applied = json.loads((run_dir / "policies/cert/metrics.json").read_text())
    for metric, ratio in points[0]["metrics"].items():
        got = (ratio["numerator"], ratio["denominator"], ratio["value"])
        assert got == (
            applied[metric]["numerator"],
            applied[metric]["denominator"],
            applied[metric]["value"],
        )


def test_sweep_with_an_unreadable_tie_is_one_line(run_dir: Path, policy_file: Path) -> None:
    args = ("--name", "cert", "--tie", "condition_limited")
    code, _, err = assay("policies", "sweep", run_dir, "--policy", policy_file, *args)
    assert code == 2 and "condition_limited" in err and len(err.strip().splitlines()) == 1
    assert not (run_dir / "policies/cert/sweep.jsonl").exists()
