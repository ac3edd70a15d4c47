"""The gate stage on a tiny random cross-encoder built here:
what `gates.jsonl` holds is checked against BM25, the model run by plain transformers,
and scipy's sigmoid; re-runs read the cache and write the same bytes; resuming,
torn lines and failures behave like every other record file."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("sentence_transformers")

from _cli import invoke  # noqa: E402
from _tiny_models import (  # noqa: E402
    save_encoder,
    save_nli_model,
    save_reranker,
    sentences,
    word_tokenizer,
    wordpiece_tokenizer,
)
from scipy.special import expit  # noqa: E402

from assay.models._local_ce import LocalRerankerTransport, RerankRequest, RerankScore  # noqa: E402
from assay.retrieval import BM25Retriever, load_corpus  # noqa: E402
from assay.runs import Runner, RunOptions, load_spec, read_json  # noqa: E402

K1_INITIAL, K1_EXPANDED = 2, 8
QUESTIONS = {
    "q1": "Did the trial or the study find lower blood pressure or a higher risk?",
    "q2": "What did the council, engineers and critics say about the bridge cost?",
    "q3": "Who signed the treaty, and did the court rule on the war or the contract?",
    "q4": "zyzzyva quux",  # no corpus word: no candidate
}
TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("gate")
    save_reranker(root / "ce", word_tokenizer())  # the same token ids in every process
    corpus = [
        {"id": f"p{i:02d}", "text": text, "doc_id": f"doc{i // 3}", "page": i % 3 + 1}
        for i, text in enumerate(sentences())
    ]
    (root / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in corpus))
    answers = [{"id": qid, "question": q, "answer": "An answer."} for qid, q in QUESTIONS.items()]
    (root / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in answers))
    write_spec(root, "gate.toml")
    return root


def write_spec(root: Path, name: str, **gate: Any) -> Path:
    keys = {"k1_initial": K1_INITIAL, "k1_expanded": K1_EXPANDED, "top_k": 3, **gate}
    extra = "".join(f"{k} = {json.dumps(v)}\n" for k, v in keys.items())
    spec = root / name
    spec.write_text(
        'name = "gate"\nbootstrap = 0\n[factuality]\n'
        'datasets = [{ path = "answers.jsonl" }]\nverifiers = [{ kind = "overlap" }]\n'
        f'[gate]\nmodel = "hf-ce/{root / "ce"}"\ncorpus = "corpus.jsonl"\n{extra}',
        encoding="utf-8",
    )
    return spec


def run(root: Path, out: str, spec: str = "gate.toml", **options: Any) -> Any:
    opts = RunOptions(
        output_dir=str(root / out), progress=False, cache_dir=str(root / "cache"), **options
    )
    return Runner(load_spec(root / spec), opts).run()


def gate_lines(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run_dir / "gates.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def first(workdir: Path) -> Path:
    outcome = run(workdir, "first")
    assert outcome.status == "complete", outcome.message
    return workdir / "first"


def test_each_record_holds_the_maxima_over_its_recorded_ranks(first: Path) -> None:
    records = gate_lines(first)
    assert [r["question_id"] for r in records] == list(QUESTIONS)
    for r in records:
        assert r["status"] == "ok" and r["error"] is None
        ranks = [c["retrieval_rank"] for c in r["candidates"]]
        assert ranks == list(range(1, len(ranks) + 1)) and len(ranks) <= K1_EXPANDED
        initial = [c["rerank_score"] for c in r["candidates"] if c["retrieval_rank"] <= 2]
        expanded = [c["rerank_score"] for c in r["candidates"] if c["retrieval_rank"] <= 8]
        assert r["s_initial"] == (max(initial) if initial else None)
        assert r["s_expanded"] == (max(expanded) if expanded else None)
        assert (r["k1_initial"], r["k1_expanded"], r["top_k"]) == (K1_INITIAL, K1_EXPANDED, 3)
    empty = records[-1]
    assert (empty["candidates"], empty["s_initial"], empty["s_expanded"]) == ([], None, None)


def test_candidates_are_the_retrievers_top_k1_expanded(workdir: Path, first: Path) -> None:
    corpus = load_corpus(workdir / "corpus.jsonl")
    bm25 = BM25Retriever(corpus)
    for r in gate_lines(first):
        hits = bm25.search(QUESTIONS[r["question_id"]], K1_EXPANDED)
        got = [
            (c["passage_id"], c["retrieval_rank"], c["retrieval_score_raw"])
            for c in r["candidates"]
        ]
        assert got == [(h.id, h.rank, h.score) for h in hits]
        for c, h in zip(r["candidates"], hits, strict=True):
            assert (c["doc_id"], c["page"]) == (h.passage.doc_id, h.passage.page)
            assert c["retrieval_score"] == pytest.approx(h.score / hits[0].score, rel=1e-12)
        assert r["retriever"]["kind"] == "bm25"
        assert r["retriever"]["score_normalization"] == "query_max"
    assert len({json.dumps(r["retriever"]) for r in gate_lines(first)}) == 1


def test_scores_are_the_models_logits_and_their_sigmoid(workdir: Path, first: Path) -> None:
    """Logits of the checkpoint run by plain transformers; score = expit(logit)."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(workdir / "ce").eval()
    tokenizer = AutoTokenizer.from_pretrained(workdir / "ce")
    corpus = load_corpus(workdir / "corpus.jsonl")
    for r in gate_lines(first):
        for c in r["candidates"]:
            passage = corpus.get(c["passage_id"]).text
            enc = tokenizer(QUESTIONS[r["question_id"]], passage, return_tensors="pt")
            with torch.no_grad():
                logit = float(model(**enc).logits[0, 0])
            # batched and padded vs alone: float32 rounding only
            assert c["rerank_logit"] == pytest.approx(logit, rel=TOLERANCE, abs=TOLERANCE)
            assert c["rerank_score"] == float(expit(c["rerank_logit"]))
        reranker = r["reranker"]
        assert reranker["model"] == f"hf-ce/{workdir / 'ce'}"
        assert (reranker["activation"], reranker["normalization"]) == ("identity", "sigmoid")
        assert reranker["max_length"] == 512 and len(reranker["model_sha256"]) == 64


def test_the_manifest_counts_the_gate(first: Path) -> None:
    manifest = read_json(first / "manifest.json")
    gate = manifest["gate"]
    assert (gate["planned_questions"], gate["recorded_questions"]) == (4, 4)
    assert gate["stats"]["by_status"]["ok"] == 4 and gate["stats"]["no_candidates"] == 1
    assert gate["stats"]["candidates"] == sum(len(r["candidates"]) for r in gate_lines(first))
    assert gate["reranker"]["kind"] == "hf-ce" and gate["retriever"]["kind"] == "bm25"
    assert manifest["outputs"]["gates"] == "gates.jsonl"
    assert "gates.jsonl" in read_json(first / "metrics.json")["records_sha256"]


# `latency_s` (wall time) and `cache_hit` (where the scores came from) differ by design


def stable_bytes(run_dir: Path) -> bytes:
    """The file with the volatile fields set alike (key order and floats as written)."""
    lines = []
    for record in gate_lines(run_dir):
        record.update(latency_s=0.0, cache_hit=False)
        lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    return "\n".join(lines).encode()


def test_a_second_run_hits_the_cache_and_writes_identical_bytes(workdir: Path, first: Path) -> None:
    assert run(workdir, "second").status == "complete"
    again = gate_lines(workdir / "second")
    assert all(r["cache_hit"] for r in again if r["candidates"])
    assert not any(r["cache_hit"] for r in gate_lines(first))
    assert stable_bytes(workdir / "second") == stable_bytes(first)


def test_resuming_a_finished_run_scores_nothing(workdir: Path, first: Path) -> None:
    before = (first / "gates.jsonl").read_bytes()
    outcome = run(workdir, "first")
    assert outcome.status == "complete" and outcome.written_this_session == 0
    assert (first / "gates.jsonl").read_bytes() == before


def test_a_torn_last_line_is_cut_and_its_question_scored_again(workdir: Path, first: Path) -> None:
    import shutil

    torn = workdir / "torn"
    shutil.copytree(first, torn)
    whole = (torn / "gates.jsonl").read_bytes()
    (torn / "gates.jsonl").write_bytes(whole[: whole.rindex(b"\n", 0, len(whole) - 1) + 40])
    outcome = run(workdir, "torn")
    assert outcome.status == "complete" and outcome.written_this_session == 1
    assert [r["question_id"] for r in gate_lines(torn)] == list(QUESTIONS)
    assert stable_bytes(torn) == stable_bytes(first)


def test_an_inference_failure_is_recorded_then_redone(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: LocalRerankerTransport, requests: Any) -> list[RerankScore]:
        raise RuntimeError("CUDA out of memory")

    with monkeypatch.context() as patch:
        patch.setattr(LocalRerankerTransport, "_score", broken)
        outcome = run(workdir, "broken", use_cache=False)
    records = gate_lines(workdir / "broken")
    assert outcome.status == "failed"  # 3 of 4 questions failed: over the failure budget
    assert [r["status"] for r in records] == ["api_error"] * 3 + ["ok"]
    for r in records[:3]:
        assert "CUDA out of memory" in r["error"]
        assert (r["s_initial"], r["s_expanded"]) == (None, None)
        assert r["candidates"] and all(c["rerank_logit"] is None for c in r["candidates"])
    gate = read_json(workdir / "broken/manifest.json")["gate"]
    assert gate["stats"]["by_status"]["api_error"] == 3
    redone = run(workdir, "broken", retry_errors=True)
    assert redone.status == "complete" and redone.written_this_session == 3
    latest = {r["question_id"]: r for r in gate_lines(workdir / "broken")}
    assert all(r["status"] == "ok" for r in latest.values())


def test_a_non_finite_logit_fails_its_question(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = LocalRerankerTransport._score

    def poisoned(self: LocalRerankerTransport, requests: Any) -> list[RerankScore]:
        scores = real(self, requests)
        first_pair: RerankRequest = requests[0]
        return [
            s.model_copy(update={"logit": math.nan}) if r == first_pair else s
            for r, s in zip(requests, scores, strict=True)
        ]

    monkeypatch.setattr(LocalRerankerTransport, "_score", poisoned)
    run(workdir, "nan", use_cache=False)
    records = gate_lines(workdir / "nan")
    assert records[0]["status"] == "api_error"
    assert "non-finite" in records[0]["error"] and records[0]["s_initial"] is None
    assert [r["status"] for r in records[1:]] == ["ok"] * 3


def test_identity_normalization_of_logits_is_one_line_error(workdir: Path) -> None:
    write_spec(workdir, "identity.toml", normalization="identity")
    code, out, err = invoke(
        [
            "run",
            str(workdir / "identity.toml"),
            "--output-dir",
            str(workdir / "identity"),
            "--cache-dir",
            str(workdir / "cache"),
            "--no-progress",
        ]
    )
    assert code == 2, out + err
    last = err.strip().splitlines()[-1]
    assert last.startswith("error:") and "Traceback" not in err
    assert "identity.toml" in last and "gate.normalization" in last
    assert "needs scores in [0, 1]" in last
    assert read_json(workdir / "identity/manifest.json")["status"] == "failed"


def test_a_classifier_with_several_outputs_is_refused_before_the_run(workdir: Path) -> None:
    save_nli_model(workdir / "nli", wordpiece_tokenizer(sentences()))
    spec = write_spec(workdir, "nli.toml")
    spec.write_text(spec.read_text().replace(f"{workdir / 'ce'}", f"{workdir / 'nli'}"))
    code, out, err = invoke(
        ["run", str(spec), "--output-dir", str(workdir / "nli-run"), "--no-progress"]
    )
    assert code == 2, out + err
    last = err.strip().splitlines()[-1]
    assert "a reranker has one output (num_labels = 1); this model has 3" in last
    assert not (workdir / "nli-run").exists()


def test_cache_keys_name_the_model_hash_the_limit_and_the_pair(workdir: Path) -> None:
    import shutil

    from assay.models import ModelConfig

    def key(model_dir: Path, max_length: int, query: str, passage: str) -> str:
        transport = LocalRerankerTransport(
            ModelConfig(model=f"hf-ce/{model_dir}"), max_length=max_length
        )
        return transport.cache_key(RerankRequest(query=query, passage=passage))

    ce = workdir / "ce"
    base = key(ce, 512, "q", "p")
    assert key(ce, 512, "q", "p") == base
    assert key(ce, 128, "q", "p") != base
    assert key(ce, 512, "q", "p2") != base
    assert key(ce, 512, "p", "q") != base  # (query, passage) order matters
    changed = workdir / "ce-changed"
    shutil.copytree(ce, changed)
    before = key(changed, 512, "q", "p")
    assert key(changed, 512, "q", "p") == before
    (changed / "tokenizer_config.json").write_text(
        (changed / "tokenizer_config.json").read_text().replace("{", '{"note": "retrained",', 1)
    )
    assert key(changed, 512, "q", "p") != before  # another model sha256: another key


def test_a_hybrid_gate_ranks_as_the_fused_retriever(workdir: Path) -> None:
    """retriever = "hybrid": BM25 and a dense encoder fused by reciprocal rank, the same
    classes the retrieval verifier uses; scores normalised by the best fused score."""
    from assay.retrieval import DenseRetriever, HybridRetriever, TransformersEmbedder

    encoder = save_encoder(workdir / "encoder")
    write_spec(workdir, "hybrid.toml", retriever="hybrid", dense_model=str(encoder))
    assert run(workdir, "hybrid", spec="hybrid.toml").status == "complete"
    corpus = load_corpus(workdir / "corpus.jsonl")
    fused = HybridRetriever(
        BM25Retriever(corpus), DenseRetriever(corpus, TransformersEmbedder(encoder))
    )
    for r in gate_lines(workdir / "hybrid"):
        hits = fused.search(QUESTIONS[r["question_id"]], K1_EXPANDED)
        assert [(c["passage_id"], c["retrieval_rank"]) for c in r["candidates"]] == [
            (h.id, h.rank) for h in hits
        ]
        assert [c["retrieval_score"] for c in r["candidates"]] == pytest.approx(
            [h.score / hits[0].score for h in hits], rel=1e-12
        )
        assert r["retriever"]["kind"] == "hybrid"
        assert r["retriever"]["score_normalization"] == "best_fused"
        scores = [c["rerank_score"] for c in r["candidates"]]
        assert r["s_expanded"] == max(scores) and r["s_initial"] == max(scores[:K1_INITIAL])


def test_the_dry_run_lists_the_gate(workdir: Path, first: Path) -> None:
    from assay.runs.preview._dryrun import plan_run

    def gate_row(out: str) -> Any:
        options = RunOptions(output_dir=str(workdir / out), cache_dir=str(workdir / "cache"))
        rows = plan_run(load_spec(workdir / "gate.toml"), options).rows
        (row,) = [r for r in rows if r.stage == "gate"]
        return row

    fresh, resumed = gate_row("not-yet"), gate_row("first")
    assert (fresh.id, fresh.items, fresh.recorded, fresh.to_send) == (
        f"hf-ce/{workdir / 'ce'}",
        4,
        0,
        0,
    )
    assert (resumed.items, resumed.recorded) == (4, 4)
    assert "local reranker" in (fresh.note or "")
    assert not (workdir / "not-yet").exists()


def test_s_initial_leaves_out_ranks_beyond_k1_initial(workdir: Path) -> None:
    """Known logits on known ranks: the best passage at rank 3 counts for s_expanded
    only; a failed pair fails the question; an empty pool has no maxima."""
    from assay.core.answers import Passage
    from assay.models import ModelResult
    from assay.retrieval import Hit
    from assay.runs.spec._gate import gate_retrieval
    from assay.runs.stages._gate_rerankers import CrossEncoderPairs
    from assay.runs.stages._gate_scorer import GateQuestion, GateScorer

    loaded = load_spec(workdir / "gate.toml")
    assert loaded.spec.gate is not None
    retrieval = gate_retrieval(loaded.spec, loaded.path)
    assert retrieval is not None
    scorer = GateScorer(loaded.spec.gate, retrieval, base_dir=workdir)
    hits = [
        Hit(passage=Passage(id=f"p{i}", text="t", doc_id="d", page=i), score=s, rank=i)
        for i, s in enumerate([8.0, 6.0, 4.0, 2.0], start=1)
    ]
    logits = [-1.0, 0.0, 3.0, -2.0]
    ok = [ModelResult(response=RerankScore(logit=v, tokens=5)) for v in logits]
    reranker = scorer.reranker
    assert isinstance(reranker, CrossEncoderPairs)
    question = GateQuestion("answers", "q", "what?")
    record = scorer.record(question, hits, reranker.scored(ok), started=0.0)
    assert [c.rerank_score for c in record.candidates] == [float(expit(v)) for v in logits]
    assert (record.s_initial, record.s_expanded) == (float(expit(0.0)), float(expit(3.0)))
    assert [c.retrieval_score for c in record.candidates] == [1.0, 0.75, 0.5, 0.25]
    assert [c.page for c in record.candidates] == [1, 2, 3, 4]
    failed = [*ok[:3], ModelResult[RerankScore](error="Boom: out of memory")]
    broken = scorer.record(question, hits, reranker.scored(failed), started=0.0)
    assert (broken.status.value, broken.error) == ("api_error", "Boom: out of memory")
    assert (broken.s_initial, broken.s_expanded) == (None, None)
    assert [c.rerank_logit for c in broken.candidates] == [*logits[:3], None]
    empty = scorer.record(question, [], [], started=0.0)
    assert (empty.status.value, empty.candidates, empty.s_initial) == ("ok", [], None)
    assert not empty.cache_hit
