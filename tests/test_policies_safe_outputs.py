"""`assay policies` options are checked before any output is opened, and outputs are
replaced atomically: a bad range, a bad target file or a crash mid-write (here: the
file-size limit of the process, a real EFBIG) leaves an earlier output byte for byte
as it was."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from _policies_cli_helpers import assay, lines, write_text
from _policies_fixtures import CERT_POLICY, GATE_POLICY, make_gold_run, write_gates

pytest_plugins = ["_policies_fixtures"]  # run_dir, policy_file (base_run, policies_text below)

ROWS = [
    ("g1", "Take 5 mg daily.", "Take 5 mg daily.", "supported", "dev"),
    ("g2", "The canal opened in 1914.", "The canal opened in 1914.", "supported", "dev"),
    ("g3", "Zebras run the locks.", "The locks are run by staff.", "unsupported", "dev"),
    ("g4", "The moon is cheese.", "The moon is rock.", "contradicted", "test"),
    ("g5", "Water boils at 90 C.", "Water boils at 100 C.", "unsupported", "test"),
    ("g6", "Paris is in France.", "Paris is in France.", "supported", "test"),
]
POLICIES = (
    GATE_POLICY
    + CERT_POLICY
    + """
[[policies]]
name = "render"
kind = "fail_closed"
tau_entail = "0.85"
tau_contradict = "0.70"
"""
)


def _row(qid: str, answer: str, passage: str, label: str, split: str) -> dict[str, object]:
    good = label == "supported"
    status = "certified" if good else "omitted"
    return {
        "id": qid,
        "question": f"Question {qid}?",
        "answer": answer,
        "split": split,
        "gold_action": "full" if good else "abstain",
        "evidence_label": "has_evidence" if good else "no_evidence",
        "evidence": [{"id": f"{qid}-p1", "text": passage}],
        "gold_claims": [{"id": "c1", "text": answer, "label": label, "gold_status": status}],
    }


@pytest.fixture(scope="module")
def base_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = make_gold_run(tmp_path_factory.mktemp("safe_outputs"), [_row(*r) for r in ROWS])
    scores = {"g1": 0.9, "g2": 0.5, "g3": 0.25, "g4": 0.05, "g5": 0.7, "g6": 0.8}
    write_gates(run, scores, "gold")
    return run


@pytest.fixture
def policies_text() -> str:
    return POLICIES


def _sweep(run_dir: Path, policy_file: Path, name: str, *args: object) -> tuple[int, str, str]:
    return assay("policies", "sweep", run_dir, "--policy", policy_file, "--name", name, *args)


def _one_error(code: int, err: str, *needles: str) -> None:
    assert code == 2, err
    assert "Traceback" not in err and "internal error" not in err, err
    found = [ln for ln in err.splitlines() if ln.strip()]
    assert len(found) == 1 and found[0].startswith("error: "), err
    assert all(n in found[0] for n in needles), err


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


BAD_RANGES = [
    ("cert", ("--from", "0.9", "--to", "0.1"), ("--from", "0.9", "--to", "0.1")),
    ("render", ("--from", "0.95", "--to", "0.60"), ("--from", "0.95", "0.60")),
    ("gate", ("--param", "tau_min", "--from", "0.5", "--to", "0.2"), ("--from", "0.5")),
    ("cert", ("--from", "0.95"), ("--from", "0.95", "0.90")),  # above the default --to
    ("cert", ("--from", "0.1", "--to", "0.2", "--step", "0.5"), ("--step", "0.5", "0.1")),
    ("cert", ("--step", "inf"), ("--step", "inf")),
    ("render", ("--step", "nan"), ("--step",)),
    ("cert", ("--to", ""), ("--to",)),
    ("cert", ("--from", " "), ("--from",)),
    ("cert", ("--step", ""), ("--step",)),
    ("gate", ("--from", "0.00", "--to", "0.05"), ("tau_min", "0.1", "--to")),
    ("gate", ("--param", "tau_min", "--from", "0.40", "--to", "0.90"), ("tau", "0.3", "--from")),
]


@pytest.mark.parametrize(("name", "args", "needles"), BAD_RANGES)
def test_a_bad_range_is_one_line_and_keeps_the_earlier_sweep(
    run_dir: Path, policy_file: Path, name: str, args: tuple[str, ...], needles: tuple[str, ...]
) -> None:
    code, _, err = _sweep(run_dir, policy_file, name)
    assert code == 0, err
    before = _files(run_dir / "policies")
    code, out, err = _sweep(run_dir, policy_file, name, *args)
    _one_error(code, err, *needles)
    assert out == ""
    assert _files(run_dir / "policies") == before


def test_a_one_point_range_is_one_point(run_dir: Path, policy_file: Path) -> None:
    code, _, err = _sweep(run_dir, policy_file, "cert", "--from", "0.5", "--to", "0.5")
    assert code == 0, err
    points = lines(run_dir / "policies/cert/sweep.jsonl")
    assert [p["params"]["support"] for p in points] == ["0.50"]  # type: ignore[index]


# ---- a crash while writing (the process's file-size limit: write() fails with EFBIG) ----


def _limited(cwd: Path, limit: int, *args: object) -> subprocess.CompletedProcess[str]:
    """`assay ARGS` in a subprocess that may write no file beyond `limit` bytes."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    argv = [sys.executable, "-m", "assay", *map(str, args)]
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(  # noqa: S603 - our own CLI
        argv, cwd=cwd, env=env, preexec_fn=cap, capture_output=True, text=True, timeout=120
    )


def test_a_crash_while_writing_the_sweep_keeps_the_earlier_one(
    run_dir: Path, policy_file: Path
) -> None:
    code, _, err = _sweep(run_dir, policy_file, "gate", "--from", "0.5", "--to", "0.5")
    assert code == 0, err
    before = _files(run_dir / "policies")
    size = max(len(b) for b in before.values())
    done = _limited(
        run_dir.parent, size + 1, "policies", "sweep", run_dir, "--policy", policy_file,
        "--name", "gate",
    )  # fmt: skip
    assert done.returncode != 0, done.stderr
    assert "Traceback" not in done.stderr and "File too large" in done.stderr, done.stderr
    assert _files(run_dir / "policies") == before


def test_a_crash_while_exporting_keeps_the_earlier_file(run_dir: Path, policy_file: Path) -> None:
    earlier = write_text(run_dir.parent / "earlier.out", "an earlier output\n")
    code, _, err = assay("policies", "apply", run_dir, "--policy", policy_file, "--resamples", 0)
    assert code == 0, err
    args = ("policies", "export", run_dir, "--name", "cert", "-o", earlier)
    done = _limited(run_dir.parent, 40, *args)
    assert done.returncode != 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert earlier.read_text(encoding="utf-8") == "an earlier output\n"
    assert not [p for p in run_dir.parent.iterdir() if p.name.startswith(".earlier.out")]


# ---- every other option is checked before any output is opened --------------------------


def test_tune_checks_write_policy_before_tuning(run_dir: Path, policy_file: Path) -> None:
    tune = ("policies", "tune", run_dir, "--policy", policy_file, "--name", "gate")
    cases = [
        (run_dir.parent / "missing" / "tuned.toml", ("--write-policy", "missing")),
        (run_dir, ("--write-policy", "directory")),
        (policy_file, ("--write-policy", "--policy")),
    ]
    before = policy_file.read_bytes()
    for target, needles in cases:
        code, out, err = assay(*tune, "--write-policy", target)
        _one_error(code, err, *needles)
        assert out == "" and not (run_dir / "policies").exists()
    assert policy_file.read_bytes() == before


def test_export_checks_output_before_reading(run_dir: Path, policy_file: Path) -> None:
    code, _, err = assay("policies", "apply", run_dir, "--policy", policy_file, "--resamples", 0)
    assert code == 0, err
    export = ("policies", "export", run_dir, "--name", "cert", "-o")
    for target, needles in [
        (run_dir.parent / "missing" / "out.jsonl", ("--output", "missing")),
        (run_dir, ("--output", "directory")),
    ]:
        code, out, err = assay(*export, target)
        _one_error(code, err, *needles)
        assert out == ""


@pytest.mark.parametrize("metrics", ["", " ", "pau,,uccr_gold", ","])
def test_compare_refuses_an_empty_metric_list(
    run_dir: Path, policy_file: Path, metrics: str
) -> None:
    code, _, err = assay("policies", "apply", run_dir, "--policy", policy_file, "--resamples", 0)
    assert code == 0, err
    compare = ("policies", "compare", run_dir, "--a", "cert", "--b", "cert", "--resamples", 0)
    code, out, err = assay(*compare, "--metrics", metrics)
    _one_error(code, err, "--metrics")
    assert not (run_dir / "policies/cert/compare").exists()


@pytest.mark.parametrize("tie", ["condition_limited=support-inf", "condition_limited=support-5"])
def test_a_tie_offset_outside_the_unit_range_is_refused(
    run_dir: Path, policy_file: Path, tie: str
) -> None:
    code, _, err = _sweep(run_dir, policy_file, "cert")
    assert code == 0, err
    before = _files(run_dir / "policies")
    code, _, err = _sweep(run_dir, policy_file, "cert", "--tie", tie)
    _one_error(code, err, "tie", tie)
    assert _files(run_dir / "policies") == before


@pytest.mark.parametrize(
    ("grid", "needles"),
    [("{ tau = [], tau_min = ['0.1'] }", ("grid", "tau", "no value")), ("{}", ("grid", "empty"))],
)
def test_an_empty_tuning_grid_is_refused(
    run_dir: Path, policy_file: Path, grid: str, needles: tuple[str, ...]
) -> None:
    spec = write_text(
        run_dir.parent / "grid.toml", f'grid = {grid}\n[[objectives]]\nmetric = "coverage"\n'
    )
    tune = ("policies", "tune", run_dir, "--policy", policy_file, "--name", "gate", "--grid", spec)
    code, out, err = assay(*tune)
    _one_error(code, err, "grid.toml", *needles)
    assert out == "" and not (run_dir / "policies").exists()


@pytest.mark.parametrize("command", ["apply", "compare"])
def test_a_negative_random_state_is_one_line(
    run_dir: Path, policy_file: Path, command: str
) -> None:
    code, _, err = assay("policies", "apply", run_dir, "--policy", policy_file, "--resamples", 0)
    assert code == 0, err
    args = ("--policy", policy_file) if command == "apply" else ("--a", "cert", "--b", "cert")
    before = _files(run_dir / "policies")
    code, out, err = assay("policies", command, run_dir, *args, "--random-state", "-1")
    _one_error(code, err, "--random-state")
    assert _files(run_dir / "policies") == before


def test_exporting_what_a_kind_never_writes_names_the_kind(
    run_dir: Path, policy_file: Path
) -> None:
    code, _, err = assay("policies", "apply", run_dir, "--policy", policy_file, "--resamples", 0)
    assert code == 0, err
    for name, what, kind in (
        ("render", "gate-log", "fail_closed"),
        ("gate", "certificates", "evidence_gate"),
    ):
        code, out, err = assay("policies", "export", run_dir, "--name", name, "--what", what)
        _one_error(code, err, name, kind)
        assert "apply it first" not in err and out == ""
    code, _, err = assay("policies", "export", run_dir, "--name", "nope")
    _one_error(code, err, "nope", "apply it first")


def test_an_output_file_never_replaces_a_file_of_the_run(run_dir: Path, policy_file: Path) -> None:
    code, _, err = assay("policies", "apply", run_dir, "--policy", policy_file, "--resamples", 0)
    assert code == 0, err
    before = _files(run_dir)
    for target in (run_dir / "manifest.json", run_dir / "policies/cert/metrics.json"):
        export = ("policies", "export", run_dir, "--name", "cert", "-o", target)
        code, _, err = assay(*export)
        _one_error(code, err, "--output", "run directory")
        tune = ("policies", "tune", run_dir, "--policy", policy_file, "--name", "gate")
        code, _, err = assay(*tune, "--write-policy", target)
        _one_error(code, err, "--write-policy", "run directory")
    assert _files(run_dir) == before
    new = run_dir / "certificates-copy.jsonl"  # a new file inside the run is fine
    assert assay("policies", "export", run_dir, "--name", "cert", "-o", new)[0] == 0


@pytest.mark.parametrize("command", ["apply", "sweep", "tune"])
def test_a_split_with_no_answer_is_refused(run_dir: Path, policy_file: Path, command: str) -> None:
    code, _, err = assay("policies", "apply", run_dir, "--policy", policy_file, "--resamples", 0)
    assert code == 0, err
    before = _files(run_dir / "policies")
    name = () if command == "apply" else ("--name", "gate")
    args = ("policies", command, run_dir, "--policy", policy_file, *name, "--split", "train")
    code, out, err = assay(*args)
    _one_error(code, err, "--split", "'train'", "dev 3", "test 3")
    assert out == "" and _files(run_dir / "policies") == before
