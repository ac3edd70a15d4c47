"""A whole factuality run on local models only: an hf/ decomposer and an hf-nli verifier."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

pytest.importorskip("torch")
pytest.importorskip("transformers")

from _tiny_models import (  # noqa: E402
    chat_tokenizer,
    save_causal_lm,
    save_nli_model,
    sentences,
    wordpiece_tokenizer,
)

from assay.runs import Runner, RunOptions, load_spec, read_json  # noqa: E402


def test_local_decomposer_and_nli_verifier_in_a_run(tmp_path: Path) -> None:
    nli_dir = save_nli_model(tmp_path / "nli", wordpiece_tokenizer(sentences()))
    lm_dir = save_causal_lm(
        tmp_path / "lm", chat_tokenizer(sentences()), max_position_embeddings=1024
    )
    answers = tmp_path / "answers.jsonl"
    rows = [
        {
            "id": "a1",
            "answer": "The river is long. The city is old.",
            "evidence": [{"id": "p1", "text": "The river is long and the city is very old."}],
        },
        {"id": "a2", "answer": "Birds can fly.", "evidence": [{"id": "p2", "text": "Birds fly."}]},
    ]
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    spec = tmp_path / "local.toml"
    spec.write_text(
        f"""
name = "local"
bootstrap = 100
[defaults]
max_tokens = 16
[failure]  # the random tiny LM's decompositions mostly fail; wiring is tested here
max_failed_fraction = 1.0
[factuality]
datasets = [{{ path = "answers.jsonl" }}]
decomposer = {{ kind = "llm", model = "hf/{lm_dir}", prompt = "decompose-atomic@1" }}
[[factuality.verifiers]]
kind = "nli-local"
model = "hf-nli/{nli_dir}"
batch_size = 4
[[factuality.verifiers]]
kind = "overlap"
""",
        encoding="utf-8",
    )
    out = tmp_path / "run"
    outcome = Runner(
        load_spec(spec),
        RunOptions(output_dir=str(out), progress=False, cache_dir=str(tmp_path / "cache")),
    ).run()
    assert outcome.status == "complete"
    sentences_out = [json.loads(x) for x in (out / "sentences.jsonl").read_text().splitlines()]
    assert len(sentences_out) == 3
    # A random tiny LM emits random words: each sentence ends in a recorded status
    # (usually truncated or parse_error), never silently dropped.
    assert {s["status"] for s in sentences_out} <= {"ok", "parse_error", "truncated", "refusal"}
    assert all(s["model"] == f"hf/{lm_dir}" for s in sentences_out)
    m = read_json(out / "manifest.json")
    kinds = {v["kind"] for v in m["factuality"]["verifiers"]}
    assert "nli-local" in kinds
    assert m["factuality"]["decomposer"]["client"]["model"] == f"hf/{lm_dir}"


def test_a_second_run_scores_nli_from_the_run_cache(tmp_path: Path) -> None:
    """`assay run` hands the nli-local verifier the run's cache: a second run into a new
    directory scores every claim from it, with the same verdicts."""
    nli_dir = save_nli_model(tmp_path / "nli", wordpiece_tokenizer(sentences()))
    answers = tmp_path / "answers.jsonl"
    row = {
        "id": "a1",
        "answer": "The river is long. Birds fly.",
        "evidence": [{"id": "p1", "text": "The river is long and birds fly."}],
    }
    answers.write_text(json.dumps(row) + "\n", encoding="utf-8")
    spec = tmp_path / "nli.toml"
    spec.write_text(
        f"""
name = "nli-cache"
bootstrap = 0
[factuality]
datasets = [{{ path = "answers.jsonl" }}]
[[factuality.verifiers]]
kind = "nli-local"
model = "hf-nli/{nli_dir}"
""",
        encoding="utf-8",
    )

    def verdicts(out: Path) -> list[dict[str, object]]:
        options = RunOptions(output_dir=str(out), progress=False, cache_dir=str(tmp_path / "c"))
        assert Runner(load_spec(spec), options).run().status == "complete"
        lines = (out / "verifications.jsonl").read_text().splitlines()
        return [json.loads(x) for x in lines]

    first, second = verdicts(tmp_path / "one"), verdicts(tmp_path / "two")
    assert len(first) == 2 and not any(v["cache_hit"] for v in first)
    assert all(v["cache_hit"] for v in second)
    assert [(v["label"], v["score"]) for v in second] == [(v["label"], v["score"]) for v in first]
