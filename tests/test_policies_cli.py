"""`assay policies apply | list | export` over a real run directory: the bundled
factuality answers decomposed by sentence and checked by the overlap verifier (no key,
no model), then a claim_selective and a fail_closed policy applied to its records."""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import pytest
from _policies_cli_helpers import DETERMINISTIC, write_text
from _policies_cli_helpers import assay as _assay
from _policies_cli_helpers import lines as _lines

pytest_plugins = ["_policies_fixtures"]  # base_run, run_dir, policy_file


def _bad_policy(tmp_path: Path, text: str) -> Path:
    return write_text(tmp_path / "bad.toml", text)


def _outputs(folder: Path) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in DETERMINISTIC}


def test_apply_writes_records_metrics_and_a_manifest(run_dir: Path, policy_file: Path) -> None:
    code, out, err = _assay("policies", "apply", run_dir, "--policy", policy_file)
    assert code == 0, err
    n_claims = len((run_dir / "claims.jsonl").read_text().splitlines())
    n_answers = len((run_dir / "answers.jsonl").read_text().splitlines())
    for name in ("cert", "render"):
        folder = run_dir / "policies" / name
        assert len(_lines(folder / "claims.jsonl")) == n_claims
        assert len(_lines(folder / "responses.jsonl")) == n_answers
        manifest = json.loads((folder / "manifest.json").read_text())
        for file, digest in manifest["outputs"].items():
            assert hashlib.sha256((folder / file).read_bytes()).hexdigest() == digest
        assert manifest["inputs"]["verifier_ids"] == ["baseline:overlap"]
        run_manifest = json.loads((run_dir / "manifest.json").read_text())
        verifier = run_manifest["factuality"]["verifiers"][0]
        assert manifest["lexicons"] == verifier["pairs"]["lexicons"]
        dataset = run_manifest["factuality"]["datasets"][0]
        assert manifest["inputs"]["datasets"] == [
            {"name": dataset["name"], "sha256": dataset["sha256"]}
        ]
        assert manifest["policy"]["name"] == name
        text = (folder / "manifest.json").read_text()
        assert str(run_dir) not in text and "applied_at" not in text
        assert "applied_at" in json.loads((folder / "run_info.json").read_text())
    assert "uccr_cert" in out and "empty_strict_rate" in out
    # lexical pairs are label_confidence: VERIFIED exactly where a pair's p_entail
    # reaches tau_entail and no pair's p_contradict reaches tau_contradict
    assert "no entailment probability" not in err
    pairs = {v["claim_id"]: v["pairs"] for v in _lines(run_dir / "verifications.jsonl")}
    render = _lines(run_dir / "policies" / "render" / "claims.jsonl")
    verified = {c["claim_id"] for c in render if c["native"] == "VERIFIED"}
    assert verified == {
        k
        for k, ps in pairs.items()
        if any(p["p_entail"] >= 0.85 for p in ps) and all(p["p_contradict"] < 0.70 for p in ps)
    }
    assert verified and len(verified) < len(render)


def test_claim_statuses_follow_the_recorded_support(run_dir: Path, policy_file: Path) -> None:
    """A claim is asserted only if one of its recorded pairs reaches support 0.35 with
    conflict and limitation below their thresholds; the UCCR of the certificate standard
    in metrics.json counts exactly the expressed claims below that standard."""
    assert _assay("policies", "apply", run_dir, "--policy", policy_file, "--name", "cert")[0] == 0
    pairs = {v["claim_id"]: v["pairs"] for v in _lines(run_dir / "verifications.jsonl")}
    claims = _lines(run_dir / "policies" / "cert" / "claims.jsonl")
    asserted = {c["claim_id"] for c in claims if c["decision"] == "assert"}
    for claim in claims:
        best = max(p["s_support"] for p in pairs[str(claim["claim_id"])])
        if best < 0.35:
            assert claim["claim_id"] not in asserted
    assert asserted, "the demo has claims with high lexical support"
    metrics = json.loads((run_dir / "policies" / "cert" / "metrics.json").read_text())
    assert metrics["uccr_cert"]["denominator"] == sum(
        1 for c in claims if c["decision"] in {"assert", "qualify"}
    )
    assert not (run_dir / "policies" / "render").exists()


def test_outputs_are_byte_identical_on_rerun_and_shuffled_lines(
    run_dir: Path, policy_file: Path
) -> None:
    assert _assay("policies", "apply", run_dir, "--policy", policy_file)[0] == 0
    first = {n: _outputs(run_dir / "policies" / n) for n in ("cert", "render")}
    assert _assay("policies", "apply", run_dir, "--policy", policy_file)[0] == 0
    assert {n: _outputs(run_dir / "policies" / n) for n in ("cert", "render")} == first
    rng = random.Random(7)
    for name in ("answers.jsonl", "claims.jsonl", "verifications.jsonl"):
        lines = (run_dir / name).read_text(encoding="utf-8").splitlines(keepends=True)
        rng.shuffle(lines)
        (run_dir / name).write_text("".join(lines), encoding="utf-8")
    assert _assay("policies", "apply", run_dir, "--policy", policy_file)[0] == 0
    assert {n: _outputs(run_dir / "policies" / n) for n in ("cert", "render")} == first


def test_last_line_wins_and_changes_the_input_hash(run_dir: Path, policy_file: Path) -> None:
    assert _assay("policies", "apply", run_dir, "--policy", policy_file, "--name", "cert")[0] == 0
    before = json.loads((run_dir / "policies" / "cert" / "manifest.json").read_text())
    records = _lines(run_dir / "verifications.jsonl")
    target = next(r for r in records if max(p["s_support"] for p in r["pairs"]) >= 0.35)
    failed = {**target, "status": "api_error", "label": None, "score": None, "pairs": []}
    with (run_dir / "verifications.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(failed) + "\n")
    assert _assay("policies", "apply", run_dir, "--policy", policy_file, "--name", "cert")[0] == 0
    after = json.loads((run_dir / "policies" / "cert" / "manifest.json").read_text())
    claims = _lines(run_dir / "policies" / "cert" / "claims.jsonl")
    changed = next(c for c in claims if c["claim_id"] == target["claim_id"])
    assert changed["decision"] == "withhold"
    assert changed["verification_status"] == "api_error"
    sha = "verifications.jsonl"
    assert after["inputs"]["records_sha256"][sha] != before["inputs"]["records_sha256"][sha]


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('[[policies]]\nname = "x"\nkind = "nope"\n', "policies[0].kind"),
        (
            '[[policies]]\nname = "x"\nkind = "claim_selective"\n'
            'thresholds = { support = "1.5" }\n',
            "1.5",
        ),
        ('[[policies]]\nname = "x"\nkind = "fail_closed"\ntau_entail = "1.5"\n', "tau_entail"),
        ('[[policies]]\nkind = "fail_closed"\n', "policies[0].name"),
    ],
)
def test_bad_policy_is_one_line_and_writes_nothing(
    run_dir: Path, tmp_path: Path, text: str, needle: str
) -> None:
    path = _bad_policy(tmp_path, text)
    code, out, err = _assay("policies", "apply", run_dir, "--policy", path)
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert needle in err and "bad.toml" in err
    assert not (run_dir / "policies").exists()


def test_malformed_record_line_is_one_line_naming_file_and_line(
    run_dir: Path, policy_file: Path
) -> None:
    path = run_dir / "verifications.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(2, '{"dataset": "factuality-demo", "answer_id": \n')
    path.write_text("".join(lines), encoding="utf-8")
    code, _, err = _assay("policies", "apply", run_dir, "--policy", policy_file)
    assert code == 2
    assert len(err.strip().splitlines()) == 1, err
    assert "verifications.jsonl:3" in err
    assert not (run_dir / "policies").exists()


def test_bad_gold_action_in_the_dataset_names_file_line_and_field(
    run_dir: Path, policy_file: Path
) -> None:
    manifest_path = run_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    source = Path(manifest["factuality"]["datasets"][0]["path"])
    rows = [json.loads(line) for line in source.read_text().splitlines()]
    rows[1]["gold_action"] = "maybe"
    copy = run_dir.parent / "answers_gold.jsonl"
    copy.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    manifest["factuality"]["datasets"][0]["path"] = str(copy)
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    code, _, err = _assay("policies", "apply", run_dir, "--policy", policy_file)
    assert code == 2
    assert "answers_gold.jsonl:2" in err and "gold_action" in err
    assert not (run_dir / "policies").exists()


def test_empty_evaluation_set_warns_and_nulls_every_metric_but_uccr(
    run_dir: Path, policy_file: Path
) -> None:
    for name in ("answers.jsonl", "claims.jsonl", "verifications.jsonl"):
        (run_dir / name).write_text("", encoding="utf-8")
    code, out, err = _assay("policies", "apply", run_dir, "--policy", policy_file, "--name", "cert")
    assert code == 0, err
    assert "warning" in err and "no responses" in err
    metrics = json.loads((run_dir / "policies" / "cert" / "metrics.json").read_text())
    for name in ("uccr_gold", "uccr_cert"):
        assert metrics[name]["value"] == 0.0
    others = ("pau", "pau_precision", "f1", "critical_coverage", "critical_risk")
    assert all(metrics[n]["value"] is None for n in (*others, "action_accuracy"))


def test_unknown_name_and_missing_run_are_one_line(run_dir: Path, policy_file: Path) -> None:
    code, _, err = _assay("policies", "apply", run_dir, "--policy", policy_file, "--name", "zz")
    assert code == 2 and "'zz'" in err and "cert" in err
    code, _, err = _assay("policies", "apply", run_dir / "nope", "--policy", policy_file)
    assert code == 2 and "no manifest.json" in err


def test_export_prints_the_certificates_byte_for_byte(
    run_dir: Path, policy_file: Path, tmp_path: Path
) -> None:
    assert _assay("policies", "apply", run_dir, "--policy", policy_file)[0] == 0
    target = tmp_path / "certs.jsonl"
    code, _, err = _assay("policies", "export", run_dir, "--name", "render", "-o", target)
    assert code == 0, err
    assert target.read_bytes() == (run_dir / "policies/render/certificates.jsonl").read_bytes()
    code, _, err = _assay("policies", "export", run_dir, "--name", "cert", "--what", "gate-log")
    assert code == 2 and "gate_decisions.jsonl" in err
    code, _, err = _assay("policies", "export", run_dir, "--name", "cert", "--what", "x")
    assert code == 2 and "--what" in err


def test_list_shows_every_kind_with_its_version() -> None:
    from assay.core.registry import POLICIES

    code, out, _ = _assay("policies", "list")
    assert code == 0
    for name in POLICIES.names():
        row = next(line for line in out.splitlines() if line.startswith(name))
        assert str(POLICIES.get(name).version) in row.split()  # type: ignore[attr-defined]
