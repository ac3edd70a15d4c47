"""Certificates and policy manifests name what produced the scores: the verifier's model, its sha256
and prompt, and the hash of the retrieval configuration behind the evidence, read from the run (a
real `assay run` here; the tiny-NLI and gate run is in test_policies_e2e_local.py).

A retrieval verifier (a hosted model on the loopback server) names its retriever; a
verifier reading the dataset's evidence names none, and the manifest says why."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from _policies_cli_helpers import RUN_SPEC, assay, lines, make_run

from assay.policies.engine._provenance import NO_RETRIEVAL, portable_model, verifier_provenance
from assay.policies.fail_closed._certificate import certificate_verifies
from assay.retrieval._identity import config_sha256
from assay.testing import FakeOpenAIServer, reply

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
POLICIES = """
[[policies]]
name = "cert"
kind = "claim_selective"
verifier = "{verifier}"
[[policies]]
name = "render"
kind = "fail_closed"
verifier = "{verifier}"
tau_entail = "0.85"
tau_contradict = "0.70"
"""

RETRIEVAL_SPEC = """
name = "provenance"
bootstrap = 0
output_dir = "run"
[factuality]
datasets = [{{ name = "factuality-demo", path = "builtin:factuality-demo" }}]
decomposer = {{ kind = "sentence" }}
[[factuality.verifiers]]
kind = "retrieval"
name = "rv"
model = "openai/fake-verifier"
api_base = "{base_url}"
corpus = "passages.jsonl"
top_k = 3
"""


def _apply(run_dir: Path, verifier: str) -> None:
    policy = run_dir.parent / "policies.toml"
    policy.write_text(POLICIES.format(verifier=verifier), encoding="utf-8")
    code, _, err = assay("policies", "apply", run_dir, "--policy", policy)
    assert code == 0, err


def _manifest(run_dir: Path, name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((run_dir / "policies" / name / "manifest.json").read_text())
    return loaded


def _verifier_block(run_dir: Path) -> dict[str, Any]:
    (block,) = json.loads((run_dir / "manifest.json").read_text())["factuality"]["verifiers"]
    return dict(block)


@pytest.fixture
def retrieval_run(tmp_path: Path) -> Path:
    shutil.copy(EXAMPLES / "policies-passages.jsonl", tmp_path / "passages.jsonl")
    with FakeOpenAIServer() as server:
        server.default = reply("Answer: True")
        run_dir = make_run(tmp_path, RETRIEVAL_SPEC.format(base_url=server.base_url))
    _apply(run_dir, "rv")
    return run_dir


def test_a_retrieval_verifier_names_its_model_prompt_and_retriever(retrieval_run: Path) -> None:
    block = _verifier_block(retrieval_run)
    retriever = config_sha256(block["retriever"])
    prompt = block["prompt"]
    expected = {
        "verifier_id": "rv",
        "model": "openai/fake-verifier",
        "model_sha256": None,  # a hosted model: the manifest records no weights fingerprint
        "prompt_id": prompt["id"],
        "prompt_version": str(prompt["version"]),
        "prompt_sha256": prompt["sha256"],
    }
    assert len(prompt["sha256"]) == 64
    certificates = lines(retrieval_run / "policies/render/certificates.jsonl")
    assert len(certificates) == 8
    for certificate in certificates:
        assert certificate["verifier"] == expected
        assert certificate["retrieval_config_sha256"] == retriever
        assert certificate_verifies(certificate)
    for certificate in lines(retrieval_run / "policies/cert/certificates.jsonl"):
        assert certificate["verifier"] == expected
    inputs = _manifest(retrieval_run, "render")["inputs"]
    assert inputs["verifiers"]["rv"]["retrieval_config_sha256"] == retriever
    assert inputs["retrieval"] == {"source": "verifier", "config_sha256": [retriever], "note": None}
    assert inputs["gate"] is None


def test_the_retrieval_hash_leaves_machine_paths_out(retrieval_run: Path) -> None:
    """The same corpus and settings in another folder hash alike: `path` is left out, the
    corpus's sha256 stays in."""
    retriever = _verifier_block(retrieval_run)["retriever"]
    moved = json.loads(json.dumps(retriever).replace(str(retrieval_run.parent), "/elsewhere"))
    assert moved != retriever
    assert config_sha256(moved) == config_sha256(retriever)
    other_corpus = {**retriever, "corpus": {**retriever["corpus"], "sha256": "0" * 64}}
    assert config_sha256(other_corpus) != config_sha256(retriever)


def test_evidence_given_in_the_dataset_names_no_retrieval_and_says_why(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, RUN_SPEC)
    _apply(run_dir, "baseline:overlap")
    for certificate in lines(run_dir / "policies/render/certificates.jsonl"):
        assert certificate["retrieval_config_sha256"] is None
        assert certificate["verifier"]["verifier_id"] == "baseline:overlap"
        assert certificate["verifier"]["model_sha256"] is None  # a lexical baseline: no model
        assert certificate_verifies(certificate)
    for name in ("cert", "render"):
        inputs = _manifest(run_dir, name)["inputs"]
        assert inputs["retrieval"] == {
            "source": "dataset",
            "config_sha256": [],
            "note": NO_RETRIEVAL,
        }
        assert inputs["verifiers"]["baseline:overlap"]["kind"] == "baseline-overlap"


def test_a_changed_verifier_model_changes_the_certificate_hash(tmp_path: Path) -> None:
    """The certificate seals the model's sha256: another fingerprint in the run manifest
    gives another certificate hash (and the certificate still verifies)."""
    run_dir = make_run(tmp_path, RUN_SPEC)
    _apply(run_dir, "baseline:overlap")
    before = lines(run_dir / "policies/render/certificates.jsonl")
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest["factuality"]["verifiers"][0]["fingerprint"] = "ab" * 32
    (run_dir / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    _apply(run_dir, "baseline:overlap")
    after = lines(run_dir / "policies/render/certificates.jsonl")
    assert {c["verifier"]["model_sha256"] for c in after} == {"ab" * 32}
    for old, new in zip(before, after, strict=True):
        assert certificate_verifies(new)
        assert old["certificate_sha256"] != new["certificate_sha256"]
        assert {**old, "verifier": None, "certificate_sha256": None} == {
            **new,
            "verifier": None,
            "certificate_sha256": None,
        }


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("hf-nli//models/tiny/nli", "hf-nli/nli"),
        ("hf-nli/models/nli", "hf-nli/models/nli"),
        ("openai/gpt-4o-mini", "openai/gpt-4o-mini"),
        ("/abs/dir/ce", "ce"),
        (None, None),
    ],
)
def test_model_names_lose_machine_directories(name: str | None, expected: str | None) -> None:
    assert portable_model(name) == expected


def test_a_local_language_model_verifier_names_its_weights_fingerprint() -> None:
    block = {
        "kind": "llm-context",
        "id": "ctx",
        "client": {"kind": "hf", "model": "hf//models/qwen", "fingerprint": "cd" * 32},
        "prompt": {"id": "verify-context", "version": 1, "sha256": "ef" * 32},
    }
    found = verifier_provenance(block)
    assert found.info.model_dump() == {
        "verifier_id": "ctx",
        "model": "hf/qwen",
        "model_sha256": "cd" * 32,
        "prompt_id": "verify-context",
        "prompt_version": "1",
        "prompt_sha256": "ef" * 32,
    }
    assert found.retrieval_config_sha256 is None


def test_a_run_made_by_another_verifier_version_is_not_resumed(tmp_path: Path) -> None:
    """The overlap verifier's pairs changed in version 2: a run whose manifest says its
    records came from version 1 is refused in one line (nothing mixes), while the same
    run at the current version resumes."""
    from assay.verifiers import OverlapVerifier

    run_dir = make_run(tmp_path, RUN_SPEC)
    manifest_file = run_dir / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    assert manifest["factuality"]["verifiers"][0]["version"] == OverlapVerifier.version == "2"
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path)
        code, _, err = assay("run", "spec.toml", "--no-progress")
        assert code == 0, err
        manifest["factuality"]["verifiers"][0]["version"] = "1"
        manifest_file.write_text(json.dumps(manifest), encoding="utf-8")
        records = (run_dir / "verifications.jsonl").read_bytes()
        code, _, err = assay("run", "spec.toml", "--no-progress")
    assert code == 2
    (line,) = err.strip().splitlines()
    assert "manifest.json" in line and "'baseline:overlap' is version 2" in line
    assert "made by version 1" in line
    assert (run_dir / "verifications.jsonl").read_bytes() == records


def test_a_true_false_verifier_describes_label_confidence_and_its_pairs_follow(
    retrieval_run: Path,
) -> None:
    formulas = _verifier_block(retrieval_run)["pairs"]["formulas"]
    assert formulas["s_support"].startswith("label confidence")
    pairs = [p for r in lines(retrieval_run / "verifications.jsonl") for p in r.get("pairs") or []]  # type: ignore[attr-defined]
    assert pairs
    for pair in pairs:  # every answer was "True": supported with confidence 1
        assert (pair["s_support"], pair["s_conflict"]) == (pair["p_entail"], pair["p_contradict"])
        assert (pair["p_entail"], pair["p_contradict"]) == (1.0, 0.0)


@pytest.mark.parametrize(
    ("kind", "support"),
    [("nli", "p_entail, the entailment probability"), ("context", "label confidence")],
)
def test_each_language_model_verifier_kind_describes_its_own_formulas(
    kind: str, support: str
) -> None:
    from assay.models import ModelConfig, make_client
    from assay.prompts import PromptRegistry
    from assay.verifiers import LLMVerifier

    client = make_client(ModelConfig(model="openai/fake", api_base="http://127.0.0.1:9/v1"))
    prompt = PromptRegistry().get("nli-entailment" if kind == "nli" else "verify-context")
    formulas = LLMVerifier(client, prompt, kind=kind).describe()["pairs"]["formulas"]  # type: ignore[arg-type]
    assert formulas["s_support"].startswith(support)
    assert "`support` number" in formulas["s_support"]
    assert formulas["s_limitation"].startswith("the answer's `limitation` number")


def test_the_overlap_baseline_keeps_the_lexical_formulas() -> None:
    from assay.verifiers import OverlapVerifier

    formulas = OverlapVerifier().describe()["pairs"]["formulas"]
    assert (formulas["s_support"], formulas["s_conflict"]) == ("overlap", "overlap * cue(conflict)")
