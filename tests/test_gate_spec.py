"""The `[gate]` block of a run spec: defaults, where the retriever comes from, and every
bad value as one error naming `gate.<key>` (no model is loaded here)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke

from assay.errors import SpecError
from assay.runs.spec._gate import gate_retrieval
from assay.runs.spec._spec import validate_spec

FACTUALITY: dict[str, Any] = {
    "datasets": [{"path": "answers.jsonl"}],
    "verifiers": [{"kind": "overlap"}],
}


def spec_with(gate: dict[str, Any], factuality: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"factuality": factuality or FACTUALITY, "gate": gate}


def error_of(raw: dict[str, Any], **kwargs: Any) -> SpecError:
    with pytest.raises(SpecError) as info:
        validate_spec(raw, where="run.toml", **kwargs)
    return info.value


def test_defaults_are_the_papers_pools() -> None:
    spec = validate_spec(
        spec_with({"model": "hf-ce/models/ms-marco", "corpus": "c.jsonl"}), where="run.toml"
    )
    gate = spec.gate
    assert gate is not None
    assert (gate.k1_initial, gate.k1_expanded, gate.top_k) == (50, 100, 12)
    assert (gate.max_length, gate.batch_size, gate.normalization) == (512, 32, "sigmoid")
    assert gate.gate_id == "hf-ce/models/ms-marco"
    named = validate_spec(
        spec_with({"model": "hf-ce/m", "corpus": "c.jsonl", "name": "ce"}), where="x"
    ).gate
    assert named is not None and named.gate_id == "ce"
    found = gate_retrieval(spec, "run.toml")
    assert found is not None
    assert (found.corpus, found.corpus_field, found.kind, found.dense_model) == (
        "c.jsonl",
        "gate.corpus",
        "bm25",
        None,
    )


@pytest.mark.parametrize(
    ("gate", "field", "needle"),
    [
        ({"model": "hf-nli/m"}, "gate.model", "expected hf-ce/<directory or hub id>"),
        ({"model": "hf-ce/"}, "gate.model", "expected hf-ce/"),
        ({"k1_initial": 60, "k1_expanded": 50}, "gate.k1_expanded", "must be >= k1_initial (60)"),
        ({"top_k": 101}, "gate.top_k", "must be <= k1_expanded (100)"),
        ({"k1_initial": 0}, "gate.k1_initial", "greater than or equal to 1"),
        ({"max_length": 8}, "gate.max_length", "greater than or equal to 16"),
        ({"batch_size": 0}, "gate.batch_size", "greater than or equal to 1"),
        ({"normalization": "softmax"}, "gate.normalization", "'sigmoid' or 'identity'"),
        ({"retriever": "dense"}, "gate.retriever", "needs `dense_model`"),
        ({"retriever": "hybrid"}, "gate.retriever", "needs `dense_model`"),
        ({"retriever": "bm25", "dense_model": "emb"}, "gate.retriever", 'not "bm25"'),
        ({"retriever": "splade"}, "gate.retriever", "'bm25', 'dense' or 'hybrid'"),
        ({"k1": 5}, "gate.k1", "Extra inputs are not permitted"),
    ],
)
def test_bad_values_name_their_key(gate: dict[str, Any], field: str, needle: str) -> None:
    exc = error_of(spec_with({"model": "hf-ce/m", "corpus": "c.jsonl", **gate}))
    assert exc.field == field
    assert needle in exc.message


def test_a_gate_needs_a_corpus_or_a_retrieval_verifier() -> None:
    exc = error_of(spec_with({"model": "hf-ce/m"}))
    assert exc.field == "gate.corpus"
    assert "needs a passages file" in exc.message


def test_a_gate_needs_the_factuality_answers() -> None:
    raw = {"datasets": [{"path": "builtin:forcebench-demo"}], "gate": {"model": "hf-ce/m"}}
    exc = error_of(raw, given_in_python=["judges"])
    assert exc.field == "gate"
    assert "[factuality]" in exc.message


def test_the_runs_retrieval_verifier_lends_its_corpus() -> None:
    retrieval = {
        "kind": "retrieval",
        "model": "openai/gpt-4o-mini",
        "corpus": "passages.jsonl",
        "dense_model": "models/e5",
    }
    fact = {**FACTUALITY, "verifiers": [{"kind": "overlap"}, retrieval]}
    shared = gate_retrieval(validate_spec(spec_with({"model": "hf-ce/m"}, fact), where="r"), "r")
    assert shared is not None
    assert (shared.corpus, shared.corpus_field) == (
        "passages.jsonl",
        "factuality.verifiers[1].corpus",
    )
    assert (shared.kind, shared.dense_model) == ("hybrid", "models/e5")
    lexical = gate_retrieval(
        validate_spec(spec_with({"model": "hf-ce/m", "retriever": "bm25"}, fact), where="r"), "r"
    )
    assert lexical is not None and (lexical.kind, lexical.dense_model) == ("bm25", None)
    own = gate_retrieval(
        validate_spec(spec_with({"model": "hf-ce/m", "corpus": "mine.jsonl"}, fact), where="r"),
        "r",
    )
    assert own is not None and (own.corpus, own.corpus_field) == ("mine.jsonl", "gate.corpus")


def test_assay_validate_prints_one_line_naming_file_and_key(tmp_path: Path) -> None:
    spec = tmp_path / "gate.toml"
    spec.write_text(
        '[factuality]\ndatasets = [{ path = "builtin:factuality-demo" }]\n'
        'verifiers = [{ kind = "overlap" }]\n'
        '[gate]\nmodel = "hf-ce/m"\ncorpus = "c.jsonl"\nk1_initial = 80\nk1_expanded = 60\n',
        encoding="utf-8",
    )
    code, out, err = invoke(["validate", str(spec)])
    assert code == 2, out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:")
    assert "gate.toml" in lines[0] and "gate.k1_expanded" in lines[0]
    assert "must be >= k1_initial (80)" in lines[0]


WITHOUT_LOCAL_EXTRA = """
import sys
sys.modules["torch"] = None  # as if the `local` extra were not installed
sys.modules["transformers"] = None
sys.argv = ["assay", *sys.argv[1:]]
from assay.cli import main
main()
"""


def test_without_the_local_extra_the_gate_is_refused_before_the_run_dir(tmp_path: Path) -> None:
    out = tmp_path / "out"
    spec = tmp_path / "gate.toml"
    spec.write_text(
        f'output_dir = "{out}"\n'
        '[factuality]\ndatasets = [{ path = "builtin:factuality-demo" }]\n'
        'verifiers = [{ kind = "overlap" }]\n'
        '[gate]\nmodel = "hf-ce/models/reranker"\ncorpus = "passages.jsonl"\n',
        encoding="utf-8",
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run(
        [sys.executable, "-c", WITHOUT_LOCAL_EXTRA, "run", str(spec), "--no-progress"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error:") and "Traceback" not in proc.stderr
    for needle in ("gate.toml", "gate.model", "local extra", "pip install 'assay[local]'"):
        assert needle in lines[0]
    assert not out.exists()


# ---- the lexical baseline reranker (`baseline:overlap`, no model) ------------------------


def test_the_baseline_reranker_defaults_to_identity_and_refuses_sigmoid() -> None:
    spec = validate_spec(spec_with({"model": "baseline:overlap", "corpus": "c.jsonl"}), where="x")
    assert spec.gate is not None
    assert (spec.gate.normalization, spec.gate.local_model, spec.gate.gate_id) == (
        "identity",
        False,
        "baseline:overlap",
    )
    exc = error_of(
        spec_with({"model": "baseline:overlap", "corpus": "c.jsonl", "normalization": "sigmoid"})
    )
    assert exc.field == "gate.normalization" and "not logits" in exc.message
    assert "'baseline:overlap'" in error_of(spec_with({"model": "baseline:x"})).message


BASELINE_CORPUS = [
    {"id": "p1", "title": "Walking", "text": "Walking lowers blood pressure in adults."},
    {"id": "p2", "text": "The Panama Canal opened in 1914.", "doc_id": "canal", "page": 2},
    {"id": "p3", "text": "Blood tests measure pressure only indirectly."},
]
BASELINE_QUESTIONS = {
    "q1": "Does walking lower blood pressure?",
    "q2": "When did the Panama Canal open to ships?",
    "q3": "zyzzyva quux",  # no corpus word: no candidate
}


def _baseline_run(tmp_path: Path, out: str) -> Any:
    from assay.runs import Runner, RunOptions, load_spec

    rows = [{"id": k, "question": q, "answer": "An answer."} for k, q in BASELINE_QUESTIONS.items()]
    (tmp_path / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "c.jsonl").write_text("".join(json.dumps(r) + "\n" for r in BASELINE_CORPUS))
    (tmp_path / "gate.toml").write_text(
        'name = "g"\nbootstrap = 0\n[factuality]\ndatasets = [{ path = "answers.jsonl" }]\n'
        'verifiers = [{ kind = "overlap" }]\n'
        '[gate]\nmodel = "baseline:overlap"\ncorpus = "c.jsonl"\nk1_initial = 1\nk1_expanded = 3\n'
        "top_k = 2\n",
        encoding="utf-8",
    )
    options = RunOptions(output_dir=str(tmp_path / out), progress=False)
    return Runner(load_spec(tmp_path / "gate.toml"), options).run()


def test_the_baseline_gate_scores_the_questions_words_found_in_each_passage(
    tmp_path: Path,
) -> None:
    from assay.judges._baseline_text import content_tokens

    assert _baseline_run(tmp_path, "run").status == "complete"
    records = [json.loads(x) for x in (tmp_path / "run/gates.jsonl").read_text().splitlines()]
    assert [r["question_id"] for r in records] == list(BASELINE_QUESTIONS)
    texts = {p["id"]: f"{p.get('title', '')}\n{p['text']}".lstrip("\n") for p in BASELINE_CORPUS}
    for r in records:
        asked = set(content_tokens(BASELINE_QUESTIONS[r["question_id"]]))
        for c in r["candidates"]:
            found = asked & set(content_tokens(texts[c["passage_id"]]))
            assert c["rerank_score"] == len(found) / len(asked)
            assert c["rerank_logit"] is None
        scores = [c["rerank_score"] for c in r["candidates"]]
        assert r["s_expanded"] == (max(scores) if scores else None)
        assert r["s_initial"] == (scores[0] if scores else None)  # k1_initial = 1
        assert (r["status"], r["cache_hit"]) == ("ok", False)
        reranker = r["reranker"]
        assert (reranker["model"], reranker["normalization"]) == ("baseline:overlap", "identity")
        assert len(reranker["model_sha256"]) == 64 and reranker["max_length"] is None
    walking = records[0]["candidates"]
    assert walking[0]["passage_id"] == "p1" and walking[0]["rerank_score"] > 0.5
    assert records[2]["candidates"] == []
    manifest = json.loads((tmp_path / "run/manifest.json").read_text())
    described = manifest["gate"]["reranker"]
    assert (described["kind"], described["fingerprint"]) == (
        "baseline-overlap",
        records[0]["reranker"]["model_sha256"],
    )
    assert set(described["lexicons"]) == {"tokens@1"}


def test_a_resumed_baseline_gate_scores_nothing_again(tmp_path: Path) -> None:
    assert _baseline_run(tmp_path, "run").status == "complete"
    before = (tmp_path / "run/gates.jsonl").read_bytes()
    again = _baseline_run(tmp_path, "run")
    assert again.status == "complete" and again.written_this_session == 0
    assert (tmp_path / "run/gates.jsonl").read_bytes() == before


def test_a_baseline_gate_on_dense_retrieval_still_needs_the_local_extra(tmp_path: Path) -> None:
    spec = tmp_path / "gate.toml"
    spec.write_text(
        f'output_dir = "{tmp_path / "out"}"\n'
        '[factuality]\ndatasets = [{ path = "builtin:factuality-demo" }]\n'
        'verifiers = [{ kind = "overlap" }]\n'
        '[gate]\nmodel = "baseline:overlap"\ncorpus = "c.jsonl"\nretriever = "dense"\n'
        'dense_model = "models/e5"\n',
        encoding="utf-8",
    )
    proc = subprocess.run(
        [sys.executable, "-c", WITHOUT_LOCAL_EXTRA, "run", str(spec), "--no-progress"],
        cwd=tmp_path,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert "gate.dense_model" in line and "pip install 'assay[local]'" in line
    assert not (tmp_path / "out").exists()
