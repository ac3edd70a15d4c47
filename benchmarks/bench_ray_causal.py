"""A local causal-LM judge and dense retrieval in-process vs `[executor] kind = "ray"`.

Two `assay` runs of one spec, each with its own empty cache: an hf/ judge (a Phi-shaped
model with random weights: hidden 256, 4 layers) over --pairs forcebench-demo pairs, and a
factuality stage whose given claims go to a `retrieval` verifier answered by the same
hf/ model over a dense retriever (a random BERT-shaped encoder: hidden 128, 2 layers)
plus a dense `[gate]` with the lexical reranker. First in-process at one torch thread,
then on a Ray instance this script starts (`ray.init(num_cpus=--ray-cpus)`, `--actors`
actors of one CPU per model, so one torch thread each). Reports both wall times (the Ray
run's includes starting its actors, which load the models; its two models hold
2 x --actors CPUs for the whole run, so --ray-cpus must have them) and checks the target:
judgments, verifications and gates files identical line for line apart from the timing
fields (with several actors, lines are written in the order they finish, so lines are
compared sorted), and the same cache entries. Exit status 1 when the target is missed.

Usage::

    python benchmarks/bench_ray_causal.py [--pairs 20] [--actors 1] [--ray-cpus 2] [--json]
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import argparse  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from importlib.metadata import version  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))

from _tiny_models import chat_tokenizer, sentences, wordpiece_tokenizer  # noqa: E402
from bench_nli import machine  # noqa: E402
from bench_ray_nli import cache_entries  # noqa: E402

TIMING = re.compile(r'"(latency_s|recorded_at)":("[^"]*"|[-0-9.e+]+)')
RECORDS = ("judgments.jsonl", "verifications.jsonl", "gates.jsonl")
DEMO = HERE.parent / "assay" / "data" / "forcebench_demo.jsonl"


def build_models(root: Path) -> tuple[Path, Path]:
    import torch
    from transformers import BertConfig, BertModel, PhiConfig, PhiForCausalLM

    said = sentences()
    tok = chat_tokenizer(said)
    torch.manual_seed(0)
    lm = PhiForCausalLM(
        PhiConfig(
            vocab_size=len(tok),
            hidden_size=256,
            intermediate_size=1024,
            num_hidden_layers=4,
            num_attention_heads=4,
            max_position_embeddings=4096,
            pad_token_id=tok.pad_token_id,
            eos_token_id=tok.eos_token_id,
            bos_token_id=tok.bos_token_id,
        )
    ).eval()
    lm.save_pretrained(root / "lm")
    tok.save_pretrained(root / "lm")
    enc_tok = wordpiece_tokenizer(said * 3, vocab_size=300)
    config = BertConfig(
        vocab_size=len(enc_tok),
        hidden_size=128,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=256,
        max_position_embeddings=512,
    )
    BertModel(config).save_pretrained(root / "encoder")
    enc_tok.save_pretrained(root / "encoder")
    return root / "lm", root / "encoder"


def write_inputs(root: Path, pairs: int, actors: int) -> tuple[Path, Path]:
    lm, encoder = build_models(root)
    (root / "pairs.jsonl").write_text("".join(DEMO.read_text().splitlines(True)[:pairs]))
    said = sentences()
    rows = [
        {
            "id": f"a{i}",
            "question": said[i],
            "answer": " ".join(said[i : i + 2]),
            "gold_claims": [{"id": f"c{k}", "text": said[i + k]} for k in range(2)],
        }
        for i in range(len(said) - 2)
    ]
    (root / "answers.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    corpus = [{"id": f"s{i:02d}", "text": t} for i, t in enumerate(said * 20)]
    (root / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in corpus))
    body = f"""name = "bench-ray-causal"
bootstrap = 0
[defaults]
max_tokens = 16
[[datasets]]
path = "pairs.jsonl"
[[judges]]
models = ["hf/{lm}"]
prompts = ["force-aware@1"]
[factuality]
datasets = [{{ path = "answers.jsonl" }}]
decomposer = {{ kind = "given" }}
[[factuality.verifiers]]
kind = "retrieval"
model = "hf/{lm}"
corpus = "corpus.jsonl"
dense_model = "{encoder}"
top_k = 3
[gate]
model = "baseline:overlap"
corpus = "corpus.jsonl"
retriever = "dense"
dense_model = "{encoder}"
"""
    (root / "local.toml").write_text(body)
    (root / "ray.toml").write_text(body + f'[executor]\nkind = "ray"\nactors = {actors}\n')
    return root / "local.toml", root / "ray.toml"


def run(spec: Path, out: Path, cache: Path) -> tuple[float, list[list[str]]]:
    from assay.runs import RunOptions, load_spec
    from assay.runs.runner._runner import Runner

    started = time.perf_counter()
    runner = Runner(
        load_spec(spec), RunOptions(output_dir=str(out), progress=False, cache_dir=str(cache))
    )
    assert runner.run().status == "complete"
    elapsed = time.perf_counter() - started
    files = [(out / name).read_text(encoding="utf-8") for name in RECORDS]
    return elapsed, [sorted(TIMING.sub(r'"\1":0', f).splitlines()) for f in files]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--actors", type=int, default=1)
    parser.add_argument("--ray-cpus", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    info = machine()
    root = Path(tempfile.mkdtemp(prefix="bench-ray-causal-"))
    import ray
    import torch

    try:
        local_spec, ray_spec = write_inputs(root, args.pairs, args.actors)
        torch.set_num_threads(1)
        local = run(local_spec, root / "out-local", root / "cache-local")
        started = time.perf_counter()
        ray.init(num_cpus=args.ray_cpus, include_dashboard=False, logging_level="warning")
        ray_start = time.perf_counter() - started
        remote = run(ray_spec, root / "out-ray", root / "cache-ray")
        same_cache = cache_entries(root / "cache-local") == cache_entries(root / "cache-ray")
    finally:
        ray.shutdown()
        shutil.rmtree(root, ignore_errors=True)
    same = {name: a == b for name, a, b in zip(RECORDS, local[1], remote[1], strict=True)}
    result = {
        "machine": {**info, "ray": version("ray")},
        "pairs": args.pairs,
        "lines": {name: len(lines) for name, lines in zip(RECORDS, local[1], strict=True)},
        "in_process_s (1 torch thread)": round(local[0], 2),
        "ray_init_s": round(ray_start, 2),
        "ray_run_s": round(remote[0], 2),
        "actors per model": args.actors,
        "identical lines": same,
        "same_cache_entries": same_cache,
    }
    ok = all(same.values()) and same_cache
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for key, value in result.items():
            print(f"{key:30} {value}")
        print(f"{'target':30} {'PASS' if ok else 'FAIL'} (identical records and cache)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
