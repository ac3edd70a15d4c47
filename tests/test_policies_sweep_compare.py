"""`assay policies sweep | compare` for every kind, and `apply --workers`, over a real run
with gold labels and gate records: sweep points equal what `apply` measures at the same
thresholds, compare deltas equal the difference of the applied metrics, bad options are
one line, and outputs are byte-identical across reruns, worker counts and line orders."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest
from _policies_cli_helpers import assay, lines
from _policies_fixtures import CERT_POLICY, GATE_POLICY, make_gold_run, write_gates

ROWS = [
    ("g1", "Take 5 mg daily.", "Take 5 mg daily.", "supported", "has_evidence"),
    ("g2", "The canal opened in 1914.", "The canal opened in 1914.", "supported", "has_evidence"),
    ("g3", "Zebras run the locks.", "The locks are run by staff.", "unsupported", "no_evidence"),
    ("g4", "The moon is cheese.", "The moon is rock.", "contradicted", "no_evidence"),
    ("g5", "Water boils at 90 C.", "Water boils at 100 C.", "unsupported", "no_evidence"),
    ("g6", "Paris is in France.", "Paris is in France.", "supported", "has_evidence"),
]
pytest_plugins = ["_policies_fixtures"]  # run_dir, policy_file (base_run, policies_text below)

GATE_SCORES = {"g1": 0.9, "g2": 0.5, "g3": 0.25, "g4": 0.05, "g5": 0.7}  # g6: no record

POLICIES = (
    GATE_POLICY
    + """
[[policies]]
name = "gate-strict"
kind = "evidence_gate"
gate = "ce-tiny"
tau = "0.60"
tau_min = "0.10"

[[policies]]
name = "render"
kind = "fail_closed"
tau_entail = "0.85"
tau_contradict = "0.70"

[[policies]]
name = "render-loose"
kind = "fail_closed"
tau_entail = "0.50"
tau_contradict = "0.70"

[[policies]]
name = "render-gated"
kind = "fail_closed"
after = "gate"
tau_entail = "0.85"
tau_contradict = "0.70"
"""
    + CERT_POLICY
)


def _row(qid: str, answer: str, passage: str, label: str, evidence: str) -> dict[str, object]:
    return {
        "id": qid,
        "question": f"Question {qid}?",
        "answer": answer,
        "evidence_label": evidence,
        "evidence": [{"id": f"{qid}-p1", "text": passage}],
        "gold_claims": [{"id": "c1", "text": answer, "label": label}],
    }


def _with_entailment(run_dir: Path) -> None:
    """Pairs without an entailment probability get one from their support score, so the
    fail_closed policies verify claims whichever version of the lexical verifier ran."""
    records = lines(run_dir / "verifications.jsonl")
    for record in records:
        for pair in record["pairs"]:  # type: ignore[attr-defined]
            if pair["p_entail"] is None:
                support = pair["s_support"]
                pair.update(p_entail=support, p_contradict=0.0, p_neutral=1.0 - support)
    text = "".join(json.dumps(r) + "\n" for r in records)
    (run_dir / "verifications.jsonl").write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def base_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = make_gold_run(tmp_path_factory.mktemp("sweep_compare"), [_row(*r) for r in ROWS])
    _with_entailment(run)
    write_gates(run, GATE_SCORES, "gold")
    return run


@pytest.fixture
def policies_text() -> str:
    return POLICIES


def _apply(run_dir: Path, policy_file: Path, *extra: object) -> None:
    code, _, err = assay("policies", "apply", run_dir, "--policy", policy_file, *extra)
    assert code == 0, err


def _metrics(run_dir: Path, name: str) -> dict[str, dict[str, object]]:
    data = json.loads((run_dir / "policies" / name / "metrics.json").read_text())
    return data.get("metrics", data)  # type: ignore[no-any-return]


def _sweep(run_dir: Path, policy_file: Path, name: str, *args: object) -> tuple[int, str, str]:
    return assay("policies", "sweep", run_dir, "--policy", policy_file, "--name", name, *args)


def _counts(ratio: dict[str, object]) -> tuple[object, object, object]:
    return ratio["numerator"], ratio["denominator"], ratio["value"]


def _point(points: list[dict[str, object]], param: str, value: str) -> dict[str, object]:
    return next(p for p in points if p["params"][param] == value)  # type: ignore[index]


def test_fail_closed_sweep_defaults_to_tau_entail_and_matches_apply(
    run_dir: Path, policy_file: Path
) -> None:
    _apply(run_dir, policy_file, "--resamples", 0)
    code, out, err = _sweep(run_dir, policy_file, "render")
    assert code == 0, err
    points = lines(run_dir / "policies/render/sweep.jsonl")
    values = [p["params"]["tau_entail"] for p in points]  # type: ignore[index]
    assert values[0] == "0.5" and values[-1] == "0.99" and len(values) == 50
    assert {p["params"]["tau_contradict"] for p in points} == {"0.7"}  # type: ignore[index]
    assert not (run_dir / "policies/render/sweep_summary.json").exists()
    for name, value in (("render", "0.85"), ("render-loose", "0.5")):
        applied = _metrics(run_dir, name)
        point = _point(points, "tau_entail", value)
        for metric, ratio in point["metrics"].items():  # type: ignore[attr-defined]
            assert _counts(ratio) == _counts(applied[metric]), (name, metric)
    assert "render sweep of tau_entail" in out


def test_fail_closed_sweep_of_tau_contradict(run_dir: Path, policy_file: Path) -> None:
    args = ("--param", "tau_contradict", "--from", "0.60", "--to", "0.80", "--step", "0.10")
    code, _, err = _sweep(run_dir, policy_file, "render", *args)
    assert code == 0, err
    points = lines(run_dir / "policies/render/sweep.jsonl")
    assert [p["params"] for p in points] == [
        {"tau_entail": "0.85", "tau_contradict": v} for v in ("0.6", "0.7", "0.8")
    ]


def test_gate_sweep_is_the_risk_coverage_curve_with_its_areas(
    run_dir: Path, policy_file: Path
) -> None:
    _apply(run_dir, policy_file, "--resamples", 0)
    code, out, err = _sweep(run_dir, policy_file, "gate")
    assert code == 0, err
    points = lines(run_dir / "policies/gate/sweep.jsonl")
    taus = [p["params"]["tau"] for p in points]  # type: ignore[index]
    assert taus[0] == "0.11" and taus[-1] == "1" and len(taus) == 90  # only tau > tau_min
    for name, value in (("gate", "0.3"), ("gate-strict", "0.6")):
        applied = _metrics(run_dir, name)
        point = _point(points, "tau", value)
        assert set(point["metrics"]) == {  # type: ignore[arg-type]
            "coverage",
            "selective_risk_label",
            "selective_risk_support",
        }
        for metric, ratio in point["metrics"].items():  # type: ignore[attr-defined]
            assert _counts(ratio) == _counts(applied[metric]), (name, metric)
    coverages = [p["metrics"]["coverage"]["value"] for p in points]  # type: ignore[index]
    assert coverages == sorted(coverages, reverse=True) and coverages[0] > coverages[-1]
    summary = json.loads((run_dir / "policies/gate/sweep_summary.json").read_text())
    applied = _metrics(run_dir, "gate")
    for key in ("aurc", "aurc_opt", "e_aurc"):
        assert _counts(summary[key]) == _counts(applied[key])
        assert f"{key} = " in out
    assert summary["aurc"]["value"] is not None


def test_gate_sweep_of_tau_min_keeps_tau_above_it(run_dir: Path, policy_file: Path) -> None:
    args = ("--param", "tau_min", "--from", "0.10", "--to", "0.50", "--step", "0.10")
    assert _sweep(run_dir, policy_file, "gate", *args)[0] == 0
    points = lines(run_dir / "policies/gate/sweep.jsonl")
    assert [p["params"] for p in points] == [{"tau": "0.3", "tau_min": v} for v in ("0.1", "0.2")]


def test_a_chained_sweep_reads_its_gate(run_dir: Path, policy_file: Path) -> None:
    _apply(run_dir, policy_file, "--resamples", 0)
    gated, plain = _metrics(run_dir, "render-gated"), _metrics(run_dir, "render")
    assert _counts(gated["vc"]) != _counts(plain["vc"])  # the gate refuses g6 (no record)
    args = ("--from", "0.85", "--to", "0.85")
    assert _sweep(run_dir, policy_file, "render-gated", *args)[0] == 0
    (point,) = lines(run_dir / "policies/render-gated/sweep.jsonl")
    for metric, ratio in point["metrics"].items():  # type: ignore[attr-defined]
        assert _counts(ratio) == _counts(gated[metric]), metric


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("render", ("--param", "support"), ("--param", "tau_entail, tau_contradict")),
        ("gate", ("--param", "tau_entail"), ("--param", "tau, tau_min")),
        ("cert", ("--param", "tau"), ("--param", "support, conflict")),
        ("render", ("--tie", "tau_contradict=tau_entail-0.10"), ("--tie", "claim_selective")),
        ("cert", ("--param", "conflict", "--tie", "limitation=support-0.1"), ("--tie",)),
        ("cert", ("--param", "x.support"), ("x.support", "families")),
        ("gate", ("--step", "0"), ("--step",)),
        ("gate", ("--from", "1.5"), ("--from",)),
    ],
)
def test_a_bad_sweep_option_is_one_line_and_writes_nothing(
    run_dir: Path, policy_file: Path, name: str, args: tuple[str, ...], expected: tuple[str, ...]
) -> None:
    code, _, err = _sweep(run_dir, policy_file, name, *args)
    assert code == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert all(text in err for text in expected), err
    assert not (run_dir / "policies" / name / "sweep.jsonl").exists()


def test_a_claim_selective_sweep_of_conflict_moves_nothing_else(
    run_dir: Path, policy_file: Path
) -> None:
    args = ("--param", "conflict", "--from", "0.40", "--to", "0.60", "--step", "0.10")
    code, _, err = _sweep(run_dir, policy_file, "cert", *args)
    assert code == 0, err
    points = lines(run_dir / "policies/cert/sweep.jsonl")
    assert [p["params"] for p in points] == [{"conflict": v} for v in ("0.40", "0.50", "0.60")]


def test_sweeps_are_byte_identical_on_rerun(run_dir: Path, policy_file: Path) -> None:
    files = ("render/sweep.jsonl", "gate/sweep.jsonl", "gate/sweep_summary.json")
    first = {}
    for _ in range(2):
        for name in ("render", "gate"):
            assert _sweep(run_dir, policy_file, name)[0] == 0
        again = {f: (run_dir / "policies" / f).read_bytes() for f in files}
        assert not first or again == first
        first = again


def _compare(run_dir: Path, a: str, b: str, *extra: object) -> tuple[int, str, str]:
    return assay("policies", "compare", run_dir, "--a", a, "--b", b, *extra)


@pytest.mark.parametrize(
    ("a", "b", "kind"),
    [("render-loose", "render", "fail_closed"), ("gate", "gate-strict", "evidence_gate")],
)
def test_compare_gives_paired_deltas_of_the_applied_metrics(
    run_dir: Path, policy_file: Path, a: str, b: str, kind: str
) -> None:
    _apply(run_dir, policy_file, "--resamples", 0)
    code, out, err = _compare(run_dir, a, b, "--resamples", 200)
    assert code == 0, err
    target = run_dir / f"policies/{a}/compare/{b}.json"
    result = json.loads(target.read_text())
    assert result["kind"] == kind and result["bootstrap"] == {"resamples": 200, "random_state": 0}
    assert (result["a"]["name"], result["b"]["name"]) == (a, b)
    metrics_a, metrics_b = _metrics(run_dir, a), _metrics(run_dir, b)
    assert result["deltas"]
    for d in result["deltas"]:
        assert _counts(d["a"]) == _counts(metrics_a[d["metric"]])
        assert _counts(d["b"]) == _counts(metrics_b[d["metric"]])
        if d["a"]["value"] is None or d["b"]["value"] is None:
            assert d["delta"] is None and d["ci"] is None
        else:
            assert d["delta"] == pytest.approx(d["a"]["value"] - d["b"]["value"])
            low, high = d["ci"]
            assert low <= high and d["n_resamples_valid"] > 0
        assert d["metric"] in out
    before = target.read_bytes()
    assert _compare(run_dir, a, b, "--resamples", 200)[0] == 0
    assert target.read_bytes() == before


def test_gate_compare_sees_the_stricter_threshold(run_dir: Path, policy_file: Path) -> None:
    _apply(run_dir, policy_file, "--resamples", 0)
    code, _, err = _compare(run_dir, "gate", "gate-strict", "--metrics", "coverage,abstention_rate")
    assert code == 0, err
    result = json.loads((run_dir / "policies/gate/compare/gate-strict.json").read_text())
    deltas = {d["metric"]: d["delta"] for d in result["deltas"]}
    assert set(deltas) == {"coverage", "abstention_rate"}
    assert deltas["coverage"] > 0 and deltas["abstention_rate"] == -deltas["coverage"]


@pytest.mark.parametrize(
    ("a", "b", "extra", "expected"),
    [
        ("render", "gate", (), "one kind"),
        ("gate", "gate-strict", ("--metrics", "vcp"), "--metrics"),
    ],
)
def test_compare_refusals_are_one_line(
    run_dir: Path, policy_file: Path, a: str, b: str, extra: tuple[str, ...], expected: str
) -> None:
    _apply(run_dir, policy_file, "--resamples", 0)
    code, _, err = _compare(run_dir, a, b, *extra)
    assert code == 2 and expected in err, err
    assert len(err.strip().splitlines()) == 1
    assert not (run_dir / f"policies/{a}/compare").exists()


def test_compare_refuses_gate_outputs_of_different_inputs(run_dir: Path, policy_file: Path) -> None:
    _apply(run_dir, policy_file, "--resamples", 0, "--name", "gate")
    with (run_dir / "gates.jsonl").open("a", encoding="utf-8") as fh:
        fh.write((run_dir / "gates.jsonl").read_text().splitlines()[0].replace("0.9", "0.2") + "\n")
    _apply(run_dir, policy_file, "--resamples", 0, "--name", "gate-strict")
    code, _, err = _compare(run_dir, "gate", "gate-strict")
    assert code == 2 and "gates.jsonl" in err and len(err.strip().splitlines()) == 1


def _shuffled_copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target)
    rng = random.Random(7)
    for name in ("answers.jsonl", "claims.jsonl", "verifications.jsonl", "gates.jsonl"):
        text = (target / name).read_text(encoding="utf-8").splitlines(keepends=True)
        keys = [json.dumps({k: v for k, v in json.loads(t).items()}, sort_keys=True) for t in text]
        assert len(set(keys)) == len(keys)
        rng.shuffle(text)
        (target / name).write_text("".join(text), encoding="utf-8")
    return target


def _outputs(run_dir: Path) -> dict[str, bytes]:
    folder = run_dir / "policies"
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "run_info.json"
    }


def test_apply_outputs_do_not_depend_on_workers_or_line_order(
    base_run: Path, policy_file: Path, tmp_path: Path
) -> None:
    runs = {
        "one": shutil.copytree(base_run, tmp_path / "one"),
        "four": shutil.copytree(base_run, tmp_path / "four"),
        "shuffled": _shuffled_copy(base_run, tmp_path / "shuffled"),
    }
    assert (runs["shuffled"] / "claims.jsonl").read_bytes() != (
        base_run / "claims.jsonl"
    ).read_bytes()
    for label, run in runs.items():
        _apply(run, policy_file, "--resamples", 50, "--workers", 1 if label == "one" else 4)
    outputs = {label: _outputs(run) for label, run in runs.items()}
    assert len(outputs["one"]) >= 6 * 4  # six policies, records + metrics + manifest each
    assert outputs["four"] == outputs["one"]
    assert outputs["shuffled"] == outputs["one"]


def test_workers_must_be_positive(run_dir: Path, policy_file: Path) -> None:
    code, _, err = assay("policies", "apply", run_dir, "--policy", policy_file, "--workers", 0)
    assert code == 2 and "--workers" in err
    assert not (run_dir / "policies").exists()
