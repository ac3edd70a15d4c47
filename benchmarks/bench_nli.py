"""Local NLI verifier throughput on CPU: batched + length-bucketed vs one pair at a time.

What it measures, on the same model and the same claim/evidence pairs:

* naive loop   -- for each pair: ``tokenizer(premise, claim, return_tensors="pt")`` then
                  ``model(**enc)`` under ``torch.inference_mode()``; what one writes first.
* assay        -- ``LocalNLIVerifier.verify_many(items)``: all pairs tokenized at once,
                  sorted by length, run in batches of ``--batch-size`` padded to the
                  longest member, verdicts built (chunk planning included).
* for context  -- the same verifier without length bucketing, and with batch size 1.

The model is BERT-shaped (hidden 256, 4 layers, 4 heads, intermediate 1024, WordPiece
vocab ~8k) with random weights, built like the tests (tests/_tiny_models.py) and saved to
a temp dir, so it loads through the real ``from_pretrained`` path offline. Throughput
does not depend on the weights' values. Evidence lengths vary 10-200 words (log-uniform),
claims 6-30 words (~35-480 tokens a pair); every pair fits in 512 tokens, so both paths
score exactly the same pairs, and the script checks that their entailment probabilities
agree. "forward only" rows time the model alone on pre-tokenized inputs: the gap between
the naive loop and its forward-only time is all that batching can remove.

Target: assay >= 3x the naive loop's pairs/s. Exit status 1 when missed.

``--int8`` measures the verifier's opt-in ``quantize="int8"`` against float32 instead:
speed on these pairs and label agreement on the bundled NLI data (benchmarks/
_bench_nli_int8.py says what, and why random weights bracket rather than answer it).

Usage::

    python benchmarks/bench_nli.py [--pairs 512] [--batch-size 32] [--repeat 1] [--json]
                                   [--evidence-words MIN MAX] [--threads N]
    python benchmarks/bench_nli.py --int8 [--shapes small base] [--claims N] [--model DIR]
                                   [--wice DIR] [--pairs 256] [--repeat 3] [--json]
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import random  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from importlib.metadata import version  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from _readme_blocks import Measurement, update_from_cli  # noqa: E402
from _tiny_models import WORDS, save_nli_model, synthetic_text, wordpiece_tokenizer  # noqa: E402

TARGET = 3.0
ONSETS = ["b", "c", "d", "f", "g", "l", "m", "n", "p", "r", "s", "t", "v", "br", "st", "tr"]
VOWELS = ["a", "e", "i", "o", "u", "ai", "ou"]


def pseudo_words(rng: random.Random, n: int) -> list[str]:
    """A vocabulary bigger than the test corpus, so the WordPiece vocab reaches ~8k."""
    out: set[str] = set()
    while len(out) < n:
        syllables = rng.randint(1, 4)
        out.add("".join(rng.choice(ONSETS) + rng.choice(VOWELS) for _ in range(syllables)))
    return sorted(out)


def build_model(directory: Path, seed: int) -> None:
    rng = random.Random(seed)
    vocab = WORDS + pseudo_words(rng, 9000)
    texts = [synthetic_text(rng, 200, vocab) for _ in range(600)]
    tokenizer = wordpiece_tokenizer(texts, vocab_size=8000)
    save_nli_model(
        directory,
        tokenizer,
        hidden_size=256,
        num_hidden_layers=4,
        num_attention_heads=4,
        intermediate_size=1024,
        max_position_embeddings=512,
        seed=seed,
    )


def make_pairs(
    n: int, seed: int, evidence_words: tuple[int, int] = (10, 200)
) -> list[tuple[str, str]]:
    rng = random.Random(seed + 1)
    vocab = WORDS + pseudo_words(random.Random(seed), 9000)
    low, high = (math.log(w) for w in evidence_words)
    pairs = []
    for _ in range(n):
        words = int(math.exp(rng.uniform(low, high)))
        claim = synthetic_text(rng, rng.randint(6, 30), vocab)
        pairs.append((synthetic_text(rng, words, vocab), claim))
    return pairs


def naive_loop(directory: Path, pairs: list[tuple[str, str]]) -> tuple[float, list[float]]:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(directory)
    model = AutoModelForSequenceClassification.from_pretrained(directory).eval()
    with torch.inference_mode():  # warm-up
        model(**tokenizer(pairs[0][0], pairs[0][1], return_tensors="pt"))
    started = time.perf_counter()
    p_entail = []
    with torch.inference_mode():
        for premise, claim in pairs:
            enc = tokenizer(premise, claim, truncation=True, max_length=512, return_tensors="pt")
            probs = model(**enc).logits.softmax(-1)[0]
            p_entail.append(float(probs[0]))  # index 0 is ENTAILMENT in this model
    return time.perf_counter() - started, p_entail


def forward_only(
    directory: Path, pairs: list[tuple[str, str]], batch_size: int
) -> tuple[float, float]:
    """Model time alone (inputs tokenized and padded beforehand): one pair per call,
    and length-sorted batches. Shows how much of the naive loop is overhead that
    batching can remove, and how much is arithmetic that it cannot."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(directory)
    model = AutoModelForSequenceClassification.from_pretrained(directory).eval()
    singles = [tokenizer(p, c, return_tensors="pt") for p, c in pairs]
    order = sorted(range(len(pairs)), key=lambda i: singles[i]["input_ids"].shape[1])
    batches = [
        tokenizer(
            [pairs[i][0] for i in order[k : k + batch_size]],
            [pairs[i][1] for i in order[k : k + batch_size]],
            padding=True,
            return_tensors="pt",
        )
        for k in range(0, len(order), batch_size)
    ]
    with torch.inference_mode():
        model(**singles[0])  # warm-up
        t0 = time.perf_counter()
        for enc in singles:
            model(**enc)
        one = time.perf_counter() - t0
        t0 = time.perf_counter()
        for enc in batches:
            model(**enc)
        many = time.perf_counter() - t0
    return one, many


def assay_run(
    directory: Path, pairs: list[tuple[str, str]], batch_size: int, bucketing: bool
) -> tuple[float, list[float], dict[str, int]]:
    from assay.core.answers import Passage
    from assay.verifiers import ClaimToVerify, LocalNLIVerifier

    verifier = LocalNLIVerifier(
        f"hf-nli/{directory}", batch_size=batch_size, length_bucketing=bucketing
    )
    items = [
        ClaimToVerify(claim_id=str(i), claim=claim, evidence=[Passage(id="e", text=premise)])
        for i, (premise, claim) in enumerate(pairs)
    ]
    asyncio.run(verifier.verify_many(items[:2]))  # load + warm-up
    verifier.stats = dict.fromkeys(verifier.stats, 0)
    started = time.perf_counter()
    verdicts = asyncio.run(verifier.verify_many(items))
    elapsed = time.perf_counter() - started
    assert all(v.status == "ok" for v in verdicts), "every verdict must be ok"
    assert verifier.stats["pairs"] == len(pairs), "every pair fits: no chunking expected"
    return elapsed, [float(v.score or 0.0) for v in verdicts], dict(verifier.stats)


def machine() -> dict[str, Any]:
    import torch

    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": platform.processor() or None,
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "python": platform.python_version(),
        "torch": version("torch"),
        "transformers": version("transformers"),
        "tokenizers": version("tokenizers"),
        "loadavg_before": [round(x, 2) for x in os.getloadavg()],
    }


def add_int8_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("--int8: quantize='int8' against float32")
    group.add_argument("--int8", action="store_true", help="measure int8 against float32")
    group.add_argument("--shapes", nargs="+", choices=["small", "base"], default=["small"])
    group.add_argument("--claims", type=int, default=None, help="first N WiCE claims only")
    group.add_argument("--speed-only", action="store_true", help="no agreement measurement")
    group.add_argument("--model", default=None, help="a local NLI checkpoint directory")
    group.add_argument("--wice", default=None, help="the wice_oracle folder (default: shared)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=512)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=1, help="best of N for each phase")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--evidence-words",
        type=int,
        nargs=2,
        default=(10, 200),
        metavar=("MIN", "MAX"),
        help="evidence length range in words, log-uniform (default 10 200; at most ~200 "
        "so every pair fits in 512 tokens)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch.set_num_threads(N) first (default: leave torch's default)",
    )
    parser.add_argument(
        "--update-readme",
        action="store_true",
        help="rewrite the bench:nli (with --int8: bench:nli-int8) blocks of docs/benchmarks.md and "
        "benchmarks/README.md from this run",
    )
    add_int8_options(parser)
    args = parser.parse_args()
    measured = Measurement.of_this_run("bench_nli.py")
    if args.threads is not None:
        import torch

        torch.set_num_threads(args.threads)

    info = machine()
    if args.int8:
        from _bench_nli_int8 import int8_main

        return int8_main(args, info, make_pairs, pseudo_words)
    tmp = Path(tempfile.mkdtemp(prefix="assay-bench-nli-"))
    try:
        directory = tmp / "nli"
        t0 = time.perf_counter()
        build_model(directory, args.seed)
        build_s = time.perf_counter() - t0
        pairs = make_pairs(args.pairs, args.seed, tuple(args.evidence_words))
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(directory)
        lengths = sorted(
            len(ids) for ids in tok([p for p, _ in pairs], [c for _, c in pairs])["input_ids"]
        )
        naive_s = assay_s = plain_s = one_s = fwd_one_s = fwd_batch_s = math.inf
        stats: dict[str, int] = {}
        plain_stats: dict[str, int] = {}
        naive_p: list[float] = []
        assay_p: list[float] = []
        for _ in range(args.repeat):
            s, naive_p = naive_loop(directory, pairs)
            naive_s = min(naive_s, s)
            s, assay_p, stats = assay_run(directory, pairs, args.batch_size, True)
            assay_s = min(assay_s, s)
            s, _, plain_stats = assay_run(directory, pairs, args.batch_size, False)
            plain_s = min(plain_s, s)
            s, _, _ = assay_run(directory, pairs, 1, True)
            one_s = min(one_s, s)
            f1, fb = forward_only(directory, pairs, args.batch_size)
            fwd_one_s, fwd_batch_s = min(fwd_one_s, f1), min(fwd_batch_s, fb)
        max_diff = max(abs(a - b) for a, b in zip(naive_p, assay_p, strict=True))
        n = len(pairs)
        result = {
            "pairs": n,
            "batch_size": args.batch_size,
            "evidence_words": list(args.evidence_words),
            "tokens_per_pair": {
                "min": lengths[0],
                "median": lengths[n // 2],
                "max": lengths[-1],
                "mean": round(sum(lengths) / n, 1),
            },
            "model": "BERT hidden 256, 4 layers, 4 heads, intermediate 1024, random weights",
            "vocab_size": len(tok),
            "build_s": round(build_s, 2),
            "naive_pairs_per_s": round(n / naive_s, 1),
            "assay_pairs_per_s": round(n / assay_s, 1),
            "assay_no_bucketing_pairs_per_s": round(n / plain_s, 1),
            "assay_batch1_pairs_per_s": round(n / one_s, 1),
            "forward_only_one_pair_per_s": round(n / fwd_one_s, 1),
            "forward_only_batched_per_s": round(n / fwd_batch_s, 1),
            "naive_overhead_share": round(1 - fwd_one_s / naive_s, 3),
            "ratio": round(naive_s / assay_s, 2),
            "padding_overhead": {
                "bucketed": round(stats["padded_tokens"] / stats["tokens"] - 1, 3),
                "unbucketed": round(plain_stats["padded_tokens"] / plain_stats["tokens"] - 1, 3),
            },
            "max_abs_diff_p_entailment": max_diff,
            "target": TARGET,
            "pass": naive_s / assay_s >= TARGET and max_diff < 1e-4,
            "machine": {**info, "loadavg_after": [round(x, 2) for x in os.getloadavg()]},
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    if args.json:
        print(json.dumps(result, indent=2))
    else:
        m = result["machine"]
        print(
            f"machine: {m['platform']}, {m['cpu_count']} CPUs, torch threads "
            f"{m['torch_threads']}, Python {m['python']}, torch {m['torch']}, "
            f"transformers {m['transformers']}, load avg {m['loadavg_before']} -> "
            f"{m['loadavg_after']}"
        )
        t = result["tokens_per_pair"]
        print(f"model: {result['model']}, vocab {result['vocab_size']}")
        print(
            f"pairs: {n} (evidence {args.evidence_words[0]}-{args.evidence_words[1]} words), "
            f"tokens/pair min {t['min']} median {t['median']} "
            f"mean {t['mean']} max {t['max']}; batch size {args.batch_size}; best of "
            f"{args.repeat}"
        )
        print(f"  naive one-pair loop        {result['naive_pairs_per_s']:>8} pairs/s")
        print(f"  assay batched + bucketed   {result['assay_pairs_per_s']:>8} pairs/s")
        print(f"  assay batched, no buckets  {result['assay_no_bucketing_pairs_per_s']:>8} pairs/s")
        print(f"  assay batch size 1         {result['assay_batch1_pairs_per_s']:>8} pairs/s")
        print(f"  model forward only, 1/call {result['forward_only_one_pair_per_s']:>8} pairs/s")
        print(f"  model forward only, batched{result['forward_only_batched_per_s']:>8} pairs/s")
        print(
            f"naive loop time outside the model forward: {result['naive_overhead_share']:.1%} "
            "(the most batching can remove)"
        )
        pad = result["padding_overhead"]
        print(
            f"padding overhead: bucketed {pad['bucketed']:.1%}, unbucketed {pad['unbucketed']:.1%}"
        )
        print(f"max |p_entail naive - assay| = {max_diff:.2e}")
        verdict = "PASS" if result["pass"] else "FAIL"
        print(f"assay / naive = {result['ratio']}x (target {TARGET}x): {verdict}")
    if args.update_readme:
        return update_from_cli("nli", measured, readme_figures(result)) or (
            0 if result["pass"] else 1
        )
    return 0 if result["pass"] else 1


def readme_figures(result: dict[str, Any]) -> str:
    """The run's figures in markdown: the pairs/s of each way, the ratio and its target."""
    t, pad = result["tokens_per_pair"], result["padding_overhead"]
    e_min, e_max = result["evidence_words"]
    rows = [
        ("naive one-pair-at-a-time loop", "naive_pairs_per_s"),
        ("assay, batched + length bucketing", "assay_pairs_per_s"),
        ("assay, batched, no bucketing", "assay_no_bucketing_pairs_per_s"),
        ("assay, batch size 1", "assay_batch1_pairs_per_s"),
        ("bare model forward, one pair per call", "forward_only_one_pair_per_s"),
        ("bare model forward, sorted batches (ceiling)", "forward_only_batched_per_s"),
    ]
    table = ["| way | pairs/s |", "|---|---:|"]
    table += [f"| {label} | {result[key]:.1f} |" for label, key in rows]
    verdict = "met" if result["pass"] else "**not met**"
    return "\n".join(
        [
            f"{result['pairs']} pairs (evidence {e_min}-{e_max} words, tokens per pair median "
            f"{t['median']}, max {t['max']}), batch size {result['batch_size']}; model: "
            f"{result['model']}, on the CPU.",
            "",
            *table,
            "",
            f"assay / naive loop = **{result['ratio']}×** (target {result['target']}×: "
            f"{verdict}). Share of the naive loop's time outside the model forward (the most "
            f"batching can remove): {result['naive_overhead_share']:.1%}. Padding: "
            f"{pad['bucketed']:.1%} with bucketing, {pad['unbucketed']:.1%} without.",
        ]
    )


if __name__ == "__main__":
    sys.exit(main())
