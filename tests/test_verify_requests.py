"""`assay verify`'s `requests` check for what it once skipped: a retrieval verifier (its
corpus searched again), a local model (its key from the recorded fingerprint, no weights
loaded) and a prompt given a Python output model (its schema kept in the run
directory). Each verifies with no skip; each tampered copy fails, named."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any, Literal

import pytest
from _cli import invoke
from pydantic import BaseModel, Field
from test_factuality_run import responder, run, write_spec
from test_run_snapshot import _own_prompt

from assay.audit import Check, verify_run
from assay.judges._llm import LLMJudge
from assay.models import ModelConfig, make_client
from assay.prompts._output import schema_sha256
from assay.prompts._prompt import load_prompt_file
from assay.runs import Runner, RunOptions, load_spec
from assay.runs.store._schemas import schema_document
from assay.testing import FakeOpenAIServer, reply

os.environ.setdefault("HF_HUB_OFFLINE", "1")

PASSAGES = [
    {"id": "c1", "text": "Aspirin thins the blood."},
    {"id": "c2", "text": "Water boils at 100 C at sea level."},
    {"id": "c3", "text": "Frozen water."},
    {"id": "c4", "text": "Colds are caused by viruses."},
    {"id": "c5", "text": "Dogs bark."},
]
RETRIEVAL = """
[[factuality.verifiers]]
kind = "retrieval"
model = "openai/fake-verifier"
api_base = "{url}"
corpus = "corpus.jsonl"
top_k = 2
{extra}
[[factuality.verifiers]]
kind = "nli"
model = "openai/fake-nli"
api_base = "{url}"
"""
NLI = json.dumps({"label": "entailment", "entailment_probability": 0.9, "rationale": "r"})
VERIFIER = "retrieval:openai/fake-verifier::verify-context@1"


def _requests(run: Path) -> Check:
    return next(c for c in verify_run(run).checks if c.name == "requests")


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _edit_line(path: Path, lineno: int, **changes: Any) -> None:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[lineno - 1] = json.dumps({**json.loads(lines[lineno - 1]), **changes}) + "\n"
    path.write_text("".join(lines), encoding="utf-8")


def _manifest(run: Path) -> dict[str, Any]:
    return json.loads((run / "manifest.json").read_text(encoding="utf-8"))


def _write_manifest(run: Path, manifest: dict[str, Any]) -> None:
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def _keyed(run: Path) -> int:
    """Records that sent a request, and LLM verifier records that had nothing to send."""
    rows = _rows(run / "sentences.jsonl") + _rows(run / "verifications.jsonl")
    return sum(
        1
        for r in rows
        if r.get("request_key")
        or (r.get("prompt_sha256") and r.get("error") == "no evidence passages")
    )


def _answer(body: dict[str, Any]) -> Any:
    """The factuality test's answers, and an NLI verdict for the NLI verifier."""
    text = "\n".join(str(m.get("content")) for m in body["messages"])
    return reply(NLI) if "Hypothesis:" in text else responder(body)


def _retrieval_run(tmp: Path, extra: str = "") -> Path:
    """Answers decomposed, then verified by a retrieval verifier over a small corpus
    (and by an NLI verifier over the dataset's evidence) on the loopback server."""
    (tmp / "corpus.jsonl").write_text("".join(json.dumps(p) + "\n" for p in PASSAGES))
    with FakeOpenAIServer(responder=_answer) as srv:
        block = RETRIEVAL.format(url=srv.base_url, extra=extra)
        outcome = run(write_spec(tmp, srv.base_url, extra=block), tmp / "run")
    assert outcome.status == "complete", outcome.message
    return tmp / "run"


@pytest.fixture(scope="module")
def retrieval(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _retrieval_run(tmp_path_factory.mktemp("retrieval"))


def _copy(run: Path, tmp: Path) -> Path:
    """A copy of the run with its own corpus (the manifest points at it, as a reader's
    machine would have the file elsewhere)."""
    copy = Path(shutil.copytree(run, tmp / "copy"))
    corpus = Path(shutil.copy(run.parent / "corpus.jsonl", tmp / "corpus.jsonl"))
    manifest = _manifest(copy)
    verifier = next(v for v in manifest["factuality"]["verifiers"] if v["id"] == VERIFIER)
    verifier["retriever"]["corpus"]["path"] = str(corpus)
    _write_manifest(copy, manifest)
    return copy


def test_retrieval_requests_are_reproduced_from_the_corpus(retrieval: Path) -> None:
    rows = [r for r in _rows(retrieval / "verifications.jsonl") if r["verifier_id"] == VERIFIER]
    assert any(r.get("request_key") for r in rows)
    assert any(r["error"] == "no evidence passages" for r in rows)  # nothing sent: checked too
    nli = [
        r for r in _rows(retrieval / "verifications.jsonl") if r["verifier_id"].startswith("nli")
    ]
    assert nli and all(r.get("request_key") for r in nli)
    requests = _requests(retrieval)
    assert (requests.result, requests.skipped, requests.problems) == ("pass", 0, [])
    assert requests.checked == _keyed(retrieval)
    assert invoke(["verify", str(retrieval)])[0] == 0


def test_edited_evidence_and_claims_of_retrieval_records_are_named(
    retrieval: Path, tmp_path: Path
) -> None:
    run = _copy(retrieval, tmp_path)
    path = run / "verifications.jsonl"
    rows = _rows(path)
    sent = next(
        i for i, r in enumerate(rows, 1) if r["verifier_id"] == VERIFIER and r.get("request_key")
    )
    empty = next(
        i
        for i, r in enumerate(rows, 1)
        if r["verifier_id"] == VERIFIER and not r.get("request_key")
    )
    evidence = rows[sent - 1]["evidence"]
    ids = [e["passage_id"] for e in evidence]
    swapped = [{**evidence[0], "passage_id": "c5"}, *evidence[1:]]
    _edit_line(path, sent, evidence=swapped)
    _edit_line(path, empty, claim="Aspirin thins the blood.")
    problems = _requests(run).problems
    key = rows[sent - 1]["request_key"][:12]
    assert sorted(problems) == sorted(
        [
            f"verifications.jsonl:{sent}: request_key {key} retrieval not reproduced: evidence "
            f"{['c5', *ids[1:]]} recorded, {ids} retrieved now",
            f"verifications.jsonl:{empty}: (no request) retrieval not reproduced: evidence [] "
            "recorded, ['c1'] retrieved now",
        ]
    )


def test_a_changed_corpus_fails_and_a_missing_one_is_a_skip(
    retrieval: Path, tmp_path: Path
) -> None:
    run = _copy(retrieval, tmp_path)
    corpus = tmp_path / "corpus.jsonl"
    recorded = hashlib.sha256(corpus.read_bytes()).hexdigest()
    corpus.write_text(corpus.read_text().replace("Dogs bark.", "Dogs bark loudly."))
    now = hashlib.sha256(corpus.read_bytes()).hexdigest()
    requests = _requests(run)
    assert requests.result == "fail"
    assert requests.problems == [
        f"{VERIFIER}: corpus {corpus} has sha256 {now[:12]}, the run searched {recorded[:12]}"
    ]
    corpus.unlink()
    requests = _requests(run)
    assert (requests.result, requests.failed) == ("skip", 0)
    assert requests.notes[0].startswith(f"5 records: corpus {corpus} is not here")


def test_a_corpus_copy_in_the_run_directory_is_used(retrieval: Path, tmp_path: Path) -> None:
    """A copy named as `bundle_data` and `assay pack --with-data` name it
    (`snapshot/data/<sha256[:16]>-<name>`) verifies with the original file gone."""
    run = _copy(retrieval, tmp_path)
    corpus = tmp_path / "corpus.jsonl"
    sha = hashlib.sha256(corpus.read_bytes()).hexdigest()
    (run / "snapshot" / "data").mkdir(parents=True, exist_ok=True)
    shutil.move(corpus, run / "snapshot" / "data" / f"{sha[:16]}-corpus.jsonl")
    requests = _requests(run)
    assert (requests.result, requests.skipped) == ("pass", 0)


def test_a_hybrid_retriever_verifies_with_its_dense_model_and_skips_without(
    tmp_path: Path,
) -> None:
    pytest.importorskip("sentence_transformers")
    from _tiny_models import save_encoder

    model = save_encoder(tmp_path / "encoder")
    out = _retrieval_run(tmp_path, extra=f'dense_model = "{model}"')
    verifier = next(v for v in _manifest(out)["factuality"]["verifiers"] if v["id"] == VERIFIER)
    assert verifier["retriever"]["kind"] == "hybrid"
    requests = _requests(out)
    assert (requests.result, requests.skipped, requests.checked) == ("pass", 0, _keyed(out))
    shutil.move(model, tmp_path / "elsewhere")
    requests = _requests(out)
    assert requests.result == "skip"
    assert requests.notes == [
        f"5 records: dense retrieval model {model} is not here: the dense half of the "
        "retrieval cannot be run again"
    ]


# ---- (b) a local model: the key from the recorded fingerprint -------------------------


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from _tiny_models import chat_tokenizer, save_causal_lm, sentences

    tmp = tmp_path_factory.mktemp("local")
    lm = save_causal_lm(tmp / "lm", chat_tokenizer(sentences()), max_position_embeddings=1024)
    answers = [{"id": "a1", "answer": "The river is long. The city is old.", "evidence": []}]
    (tmp / "answers.jsonl").write_text("".join(json.dumps(a) + "\n" for a in answers))
    (tmp / "local.toml").write_text(
        f"""
name = "local"
bootstrap = 0
[defaults]
max_tokens = 8
[failure]  # a random tiny LM's decompositions mostly fail; the keys are what is tested
max_failed_fraction = 1.0
[factuality]
datasets = [{{ path = "answers.jsonl" }}]
decomposer = {{ kind = "llm", model = "hf/{lm}", prompt = "decompose-atomic@1" }}
[[factuality.verifiers]]
kind = "overlap"
""",
        encoding="utf-8",
    )
    options = RunOptions(output_dir=str(tmp / "run"), progress=False, no_cache=True)
    assert Runner(load_spec(tmp / "local.toml"), options).run().status == "complete"
    return tmp / "run"


def test_a_local_model_s_keys_are_reproduced_without_its_weights(
    local: Path, tmp_path: Path
) -> None:
    rows = _rows(local / "sentences.jsonl")
    assert len(rows) == 2 and all(r["request_key"] for r in rows)
    requests = _requests(local)
    assert (requests.result, requests.checked, requests.skipped) == ("pass", 2, 0)
    run = Path(shutil.copytree(local, tmp_path / "copy"))
    shutil.move(local.parent / "lm", tmp_path / "lm-elsewhere")  # no model here at all
    try:
        assert (_requests(run).result, _requests(run).checked) == ("pass", 2)
        manifest = _manifest(run)
        client = manifest["factuality"]["decomposer"]["client"]
        client["fingerprint"] = "0" * 64  # another checkpoint
        _write_manifest(run, manifest)
        problems = _requests(run).problems
    finally:
        shutil.move(tmp_path / "lm-elsewhere", local.parent / "lm")
    assert len(problems) == 2
    assert problems[0] == (
        f"sentences.jsonl:1: request_key {rows[0]['request_key'][:12]} not reproduced; "
        "likeliest cause: messages (the record's variables or prompt bytes), decoding or "
        "client settings"
    )


# ---- (c) a prompt given a Python output model: its schema in the run directory -------


class Grade(BaseModel):
    label: Literal["fully_supported", "unsupported"]
    grade: int = Field(ge=0, le=10)


def test_the_schema_document_is_what_the_output_schema_hash_covers(tmp_path: Path) -> None:
    path = _own_prompt(tmp_path, "generic-support", "my-graded")
    for prompt in (
        load_prompt_file(path).with_output_model(Grade, score_field="grade"),
        load_prompt_file(path).with_output_model(Grade),
    ):
        model = prompt.output_model
        assert hashlib.sha256(schema_document(model)).hexdigest() == schema_sha256(model)
        assert json.loads(schema_document(model))["schema"] == model.model_json_schema()


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("graded")
    path = _own_prompt(tmp / "prompts", "generic-support", "my-graded")
    prompt = load_prompt_file(path).with_output_model(Grade, score_field="grade")
    (tmp / "spec.toml").write_text(
        'name = "graded"\nbootstrap = 0\n[[datasets]]\npath = "builtin:forcebench-demo"\n'
    )
    answer = json.dumps({"label": "unsupported", "grade": 3})
    with FakeOpenAIServer(responder=lambda body: reply(answer)) as srv:
        client = make_client(ModelConfig(model="openai/graded", api_base=srv.base_url))
        options = RunOptions(output_dir=str(tmp / "run"), progress=False, no_cache=True)
        loaded = load_spec(tmp / "spec.toml", given_in_python=["judges"])
        outcome = Runner(loaded, options, judges=[LLMJudge(client, prompt)]).run()
    assert outcome.status == "complete", outcome.message
    return tmp / "run"


def _schema_file(run: Path) -> tuple[str, Path, str]:
    identity = _manifest(run)["judges"][0]["prompt"]
    sha = identity["output_schema_sha256"]
    return identity["schema_snapshot"], run / identity["schema_snapshot"], sha


def test_a_python_output_model_s_schema_is_kept_and_its_requests_verify(graded: Path) -> None:
    rel, path, sha = _schema_file(graded)
    assert rel == f"snapshot/schemas/{sha[:16]}.json"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha
    requests = _requests(graded)
    assert (requests.result, requests.checked, requests.skipped) == ("pass", 120, 0)


def test_a_changed_schema_fails_and_a_missing_one_is_a_skip(graded: Path, tmp_path: Path) -> None:
    run = Path(shutil.copytree(graded, tmp_path / "copy"))
    rel, path, sha = _schema_file(run)
    path.write_bytes(path.read_bytes().replace(b'"maximum":10', b'"maximum":11'))
    now = hashlib.sha256(path.read_bytes()).hexdigest()
    judge = _manifest(run)["judges"][0]["id"]
    requests = _requests(run)
    assert requests.result == "fail"
    assert requests.problems == [
        f"{judge}: {rel}: sha256 {now[:12]} is not the output_schema_sha256 {sha[:12]} "
        "prompt my-graded@1 recorded"
    ]
    path.unlink()
    requests = _requests(run)
    assert (requests.result, requests.skipped) == ("skip", 120)
    assert requests.notes == [
        f"120 records: prompt my-graded@1 answers in a Python output model whose schema "
        f"{rel} is not here"
    ]


def test_a_packed_run_carries_its_schema(graded: Path, tmp_path: Path) -> None:
    archive = tmp_path / "run.tar.gz"
    assert invoke(["pack", str(graded), "-o", str(archive)])[0] == 0
    assert invoke(["unpack", str(archive), "-o", str(tmp_path / "unpacked")])[0] == 0
    rel, _, _ = _schema_file(graded)
    assert (tmp_path / "unpacked" / rel).is_file()
    code, out, _ = invoke(["verify", str(tmp_path / "unpacked")])
    assert code == 0, out
