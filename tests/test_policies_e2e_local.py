"""End to end on local models: the bundled factuality answers verified by an
`nli-local` verifier (a tiny `hf-nli` model built here) with a `[gate]` scored by a tiny
`hf-ce` cross-encoder, then `assay policies apply` of all three kinds. Every file is
written, the records and certificates name the models' sha256, and the fail-closed
invariants hold on the real records. Without the `local` extra (torch / transformers
blocked in a subprocess) `assay run` stops with one line naming the extra, for the NLI
verifier and for the gate, and marks nothing complete; the lexical baseline gate and
verifier still run."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _policies_cli_helpers import assay, lines

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
#: every pair of the NLI model scores softmax(BIAS): entailment on top, contradiction low
BIAS = [2.5, 0.0, -1.0]
TAU_ENTAIL, TAU_CONTRADICT = "0.85", "0.70"
FILES = {
    "cert": {"claims.jsonl", "responses.jsonl", "certificates.jsonl", "metrics.json"},
    "gate": {"gate_decisions.jsonl", "metrics.json"},
    "render": {"claims.jsonl", "responses.jsonl", "certificates.jsonl", "metrics.json"},
}


def spec_text(verifier: str, gate: str) -> str:
    return (
        'name = "e2e-local"\nbootstrap = 0\noutput_dir = "run"\n[factuality]\n'
        'datasets = [{ name = "factuality-demo", path = "builtin:factuality-demo" }]\n'
        'decomposer = { kind = "sentence" }\n'
        f"verifiers = [{verifier}]\n"
        f'[gate]\nname = "ce"\nmodel = "{gate}"\ncorpus = "passages.jsonl"\n'
    )


def policies_text(tau: str, tau_min: str) -> str:
    return (
        '[[policies]]\nname = "cert"\nkind = "claim_selective"\nverifier = "nli"\n'
        f'[[policies]]\nname = "gate"\nkind = "evidence_gate"\ngate = "ce"\ntau = "{tau}"\n'
        f'tau_min = "{tau_min}"\n'
        '[[policies]]\nname = "render"\nkind = "fail_closed"\nafter = "gate"\nverifier = "nli"\n'
        f'tau_entail = "{TAU_ENTAIL}"\ntau_contradict = "{TAU_CONTRADICT}"\n'
    )


@pytest.fixture(scope="module")
def applied(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The run and its applied policies. The gate's thresholds split the recorded scores
    at their median (a random reranker has no meaningful scale), so it passes some
    questions and abstains on the others."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("sentence_transformers")
    from _tiny_models import (
        save_nli_model,
        save_reranker,
        sentences,
        word_tokenizer,
        wordpiece_tokenizer,
    )

    root = tmp_path_factory.mktemp("e2e")
    save_nli_model(root / "nli", wordpiece_tokenizer(sentences()), classifier_bias=BIAS)
    save_reranker(root / "ce", word_tokenizer())
    shutil.copy(EXAMPLES / "policies-passages.jsonl", root / "passages.jsonl")
    model = f"hf-nli/{root / 'nli'}"
    verifier = f'{{ kind = "nli-local", name = "nli", premise = "sentence", model = "{model}" }}'
    (root / "e2e.toml").write_text(spec_text(verifier, f"hf-ce/{root / 'ce'}"), "utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        code, _, err = assay("run", "e2e.toml", "--no-progress")
        assert code == 0, err
        scores = sorted({r["s_initial"] for r in lines(root / "run" / "gates.jsonl")})
        assert len(scores) >= 2, "the reranker gave every question the same score"
        tau, tau_min = scores[len(scores) // 2], scores[0] / 2
        (root / "policies.toml").write_text(policies_text(repr(tau), repr(tau_min)), "utf-8")
        code, out, err = assay("policies", "apply", "run", "--policy", "policies.toml")
    assert code == 0, err
    return root / "run", out


def test_every_policy_writes_its_files(applied: tuple[Path, str]) -> None:
    run_dir, out = applied
    for name, files in FILES.items():
        folder = run_dir / "policies" / name
        manifest = json.loads((folder / "manifest.json").read_text())
        assert set(manifest["outputs"]) == files
        for file, digest in manifest["outputs"].items():
            assert hashlib.sha256((folder / file).read_bytes()).hexdigest() == digest
        assert f"{name} ({manifest['policy']['kind']} v1) · 8 responses" in out


def test_records_and_certificates_name_the_models_sha256(applied: tuple[Path, str]) -> None:
    from scipy.special import softmax

    run_dir, _ = applied
    manifest = json.loads((run_dir / "manifest.json").read_text())
    nli = manifest["factuality"]["verifiers"][0]["fingerprint"]
    ce = manifest["gate"]["reranker"]["fingerprint"]
    assert len(nli) == len(ce) == 64 and nli != ce
    assert {r["reranker"]["model_sha256"] for r in lines(run_dir / "gates.jsonl")} == {ce}
    decisions = lines(run_dir / "policies/gate/gate_decisions.jsonl")
    assert {d["reranker"]["fingerprint"] for d in decisions} == {ce}
    expected = softmax(BIAS)  # the records hold the model's own numbers
    for v in lines(run_dir / "verifications.jsonl"):
        for p in v["pairs"]:
            got = (p["p_entail"], p["p_neutral"], p["p_contradict"])
            assert got == pytest.approx(tuple(expected), abs=1e-6)


def test_fail_closed_certificates_name_the_verifiers_model_sha256(
    applied: tuple[Path, str],
) -> None:
    run_dir, _ = applied
    manifest = json.loads((run_dir / "manifest.json").read_text())
    nli = manifest["factuality"]["verifiers"][0]["fingerprint"]
    certificates = lines(run_dir / "policies/render/certificates.jsonl")
    assert {c["verifier"]["model_sha256"] for c in certificates} == {nli}


def test_certificates_and_manifests_name_what_produced_the_scores(
    applied: tuple[Path, str],
) -> None:
    """On real records: each certificate (both claim kinds) names the NLI
    model's sha256; a chained fail_closed certificate names its question's gate retriever
    hash, as does its audit record; each policy manifest names the verifier's and the
    reranker's sha256, and no absolute path."""
    from assay.policies.fail_closed._certificate import certificate_verifies

    run_dir, _ = applied
    manifest = json.loads((run_dir / "manifest.json").read_text())
    nli = manifest["factuality"]["verifiers"][0]["fingerprint"]
    ce = manifest["gate"]["reranker"]["fingerprint"]
    gates = {r["question_id"]: r for r in lines(run_dir / "gates.jsonl")}
    retrievers = {g["retriever"]["config_sha256"] for g in gates.values()}
    rendered = lines(run_dir / "policies/render/certificates.jsonl")
    for cert in rendered:
        assert certificate_verifies(cert)
        assert (cert["verifier"]["verifier_id"], cert["verifier"]["model"]) == ("nli", "hf-nli/nli")
        expected = gates[cert["answer_id"]]["retriever"]["config_sha256"]
        assert cert["retrieval_config_sha256"] == expected and len(expected) == 64
    for cert in lines(run_dir / "policies/cert/certificates.jsonl"):
        assert cert["verifier"]["model_sha256"] == nli
    audit = run_dir.parent / "audit.jsonl"
    code, _, err = assay(
        "policies", "export", run_dir, "--name", "render", "--what", "audit", "-o", audit
    )
    assert code == 0, err
    assert [a["retrieval_config_sha256"] for a in lines(audit)] == [
        c["retrieval_config_sha256"] for c in rendered
    ]
    for name in ("cert", "render", "gate"):
        text = (run_dir / "policies" / name / "manifest.json").read_text()
        assert str(run_dir.parent) not in text
        inputs = json.loads(text)["inputs"]
        if name != "gate":
            assert inputs["verifiers"]["nli"]["model_sha256"] == nli
        if name != "cert":
            assert inputs["gate"]["reranker_sha256"] == [ce]
            assert inputs["retrieval"]["source"] == "gate"
            assert inputs["retrieval"]["config_sha256"] == sorted(retrievers)


def test_the_nli_verifier_describes_the_formulas_its_pairs_follow(
    applied: tuple[Path, str],
) -> None:
    """The manifest says s_support = p_entail, s_conflict = p_contradict and a lexicon
    limitation on the premise (not the overlap baseline's formulas), and every recorded
    pair follows them."""
    from assay.verifiers._relations import claim_tokens, lexicon_limitation

    run_dir, _ = applied
    (verifier,) = json.loads((run_dir / "manifest.json").read_text())["factuality"]["verifiers"]
    formulas = verifier["pairs"]["formulas"]
    assert formulas["s_support"].startswith("p_entail")
    assert formulas["s_conflict"].startswith("p_contradict")
    assert "cue(limitation) on the premise" in formulas["s_limitation"]
    texts = {
        p["id"]: p["text"]
        for row in lines(Path(verifier_data_path(run_dir)))
        for p in row["evidence"]  # type: ignore[attr-defined]
    }
    n_pairs = 0
    for record in lines(run_dir / "verifications.jsonl"):
        tokens = claim_tokens(str(record["claim"]))
        for p in record["pairs"]:  # type: ignore[attr-defined]
            assert (p["s_support"], p["s_conflict"]) == (p["p_entail"], p["p_contradict"])
            premise = texts[p["passage_id"]][p["start"] : p["end"]]
            assert p["s_limitation"] == lexicon_limitation(tokens, premise)
            n_pairs += 1
    assert n_pairs >= 29  # every claim scored at least one premise


def verifier_data_path(run_dir: Path) -> str:
    """The answers dataset the run read (its evidence passages are the premises)."""
    manifest = json.loads((run_dir / "manifest.json").read_text())
    return str(manifest["factuality"]["datasets"][0]["path"])


def _by_answer(path: Path, key: str = "answer_id") -> dict[Any, Any]:
    return {r[key]: r for r in lines(path)}


def test_fail_closed_invariants_hold_on_the_real_records(applied: tuple[Path, str]) -> None:
    """No VERIFIED claim without a cited span >= tau_entail, none with a pair on the
    gate's evidence contradicting at >= tau_contradict, none behind a gate abstention."""
    run_dir, _ = applied
    gate = _by_answer(run_dir / "policies/gate/gate_decisions.jsonl", "question_id")
    pairs = {v["claim_id"]: v["pairs"] for v in lines(run_dir / "verifications.jsonl")}
    cited = {
        c["claim_id"]: c["evidence"]
        for cert in lines(run_dir / "policies/render/certificates.jsonl")
        for c in cert["claims"]
    }
    claims = lines(run_dir / "policies/render/claims.jsonl")
    for claim in claims:
        decision = gate[claim["answer_id"]]
        if decision["outcome"] != "pass":
            assert (claim["native"], claim["reason"]) == ("UNVERIFIED", "gate_abstained")
            continue
        kept = {c["passage_id"] for c in decision["citations"]}
        if claim["native"] != "VERIFIED":
            continue
        spans = cited[claim["claim_id"]]
        assert spans and all(s["span_id"] for s in spans)
        assert max(s["p_entail"] for s in spans) >= float(TAU_ENTAIL)
        assert {s["chunk_id"] for s in spans} <= kept
        used = [p for p in pairs[claim["claim_id"]] if p["passage_id"] in kept]
        assert all(p["p_contradict"] < float(TAU_CONTRADICT) for p in used)
    outcomes = {d["outcome"] for d in gate.values()}
    assert outcomes == {"pass", "abstain"}
    assert any(c["native"] == "VERIFIED" for c in claims)


# ---- without the `local` extra --------------------------------------------------------

WITHOUT_LOCAL_EXTRA = """
import sys
for name in ("torch", "transformers", "sentence_transformers"):
    sys.modules[name] = None  # as if the `local` extra were not installed
sys.argv = ["assay", *sys.argv[1:]]
from assay.cli import main
main()
"""


def _run_without_extra(root: Path, verifier: str, gate: str) -> subprocess.CompletedProcess[str]:
    shutil.copy(EXAMPLES / "policies-passages.jsonl", root / "passages.jsonl")
    (root / "spec.toml").write_text(spec_text(verifier, gate), "utf-8")
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_LOCAL_EXTRA, "run", "spec.toml", "--no-progress"],
        cwd=root,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )


NLI = '{ kind = "nli-local", name = "nli", model = "hf-nli/models/nli" }'
OVERLAP = '{ kind = "overlap", name = "nli" }'


@pytest.mark.parametrize(
    ("verifier", "gate", "field"),
    [
        (NLI, "baseline:overlap", "factuality.verifiers[0]"),
        (OVERLAP, "hf-ce/models/ce", "gate.model"),
    ],
    ids=["nli-verifier", "gate-reranker"],
)
def test_without_the_local_extra_the_run_stops_with_one_line(
    tmp_path: Path, verifier: str, gate: str, field: str
) -> None:
    proc = _run_without_extra(tmp_path, verifier, gate)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("error:") and "Traceback" not in proc.stderr
    for needle in ("spec.toml", field, "local extra", "pip install 'assay[local]'"):
        assert needle in line
    assert not (tmp_path / "run").exists()


def test_without_the_local_extra_the_lexical_baselines_still_run(tmp_path: Path) -> None:
    proc = _run_without_extra(tmp_path, OVERLAP, "baseline:overlap")
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["gate"]["recorded_questions"] == manifest["gate"]["planned_questions"] == 8
    assert {r["status"] for r in lines(tmp_path / "run" / "gates.jsonl")} == {"ok"}
