"""`bench_nli.py --int8`: the nli-local verifier with `quantize="int8"` beside float32.

Two measurements, both in one run and printed as markdown tables:

* speed -- the same synthetic pairs as bench_nli's main measurement, scored by
  `LocalNLIVerifier.verify_many` in float32 and in int8 (batched, length-bucketed, the
  same batch size), runs alternating, best of --repeat; load time (weights + quantising).
* agreement -- on the NLI data at hand: the bundled factuality demo (each answer sentence
  against its item's evidence) and the WiCE oracle sample in ../shared/data/wice_oracle
  (each claim against its oracle chunks; skipped when absent). Both precisions score the
  very same pairs in the very same batches; the table gives how often the pair's argmax
  label and the claim's verdict are the same, Cohen's kappa of the pair labels
  (scikit-learn), and how far the probabilities move.

No trained NLI checkpoint is available offline, so by default the models have random
weights, and what a random model "decides" is not what a trained one decides: with
transformers' initialisation (std 0.02, "narrow") every pair gets nearly the same
probabilities, so labels agree trivially; with std 0.2 and the classifier scaled x4
("wide") labels spread over all three classes but the activations are far larger than a
trained BERT's, which int8 handles worst. The two bracket the question, they do not
answer it: --model DIR measures a real local checkpoint (hf-nli directory) instead.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from _readme_blocks import Measurement, update_from_cli
from _tiny_models import WORDS, save_nli_model, synthetic_text, wordpiece_tokenizer

SHAPES = {
    "small": {"hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 4},
    "base": {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12},
}
WEIGHTS = {"narrow": {}, "wide": {"initializer_range": 0.2, "classifier_scale": 4.0}}
WICE_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "wice_oracle"
ROLES = {"p_entail": "entailment", "p_neutral": "neutral", "p_contradict": "contradiction"}


def build(directory: Path, tokenizer: Any, shape: str, weights: str, seed: int) -> Path:
    """A random BERT of `shape` (intermediate = 4 x hidden) with `weights` spread."""
    dims = SHAPES[shape]
    return Path(
        save_nli_model(
            directory,
            tokenizer,
            intermediate_size=4 * dims["hidden_size"],
            max_position_embeddings=512,
            seed=seed,
            **dims,
            **WEIGHTS[weights],
        )
    )


def bench_tokenizer(vocab: list[str], seed: int) -> Any:
    """WordPiece (8k) trained on synthetic text plus the bundled demo's English text."""
    rng = random.Random(seed)
    texts = [synthetic_text(rng, 200, WORDS + vocab) for _ in range(600)]
    texts += [t for item in demo_items() for t in (item.claim, *(p.text for p in item.evidence))]
    return wordpiece_tokenizer(texts, vocab_size=8000)


# ---- data ------------------------------------------------------------------------------
def demo_items() -> list[Any]:
    """The bundled factuality demo: every answer sentence against its item's evidence."""
    from assay.datasets import read_answers_jsonl
    from assay.datasets._load import resolve_dataset_path
    from assay.decomposers._sentences import split_sentences
    from assay.verifiers import ClaimToVerify

    path = resolve_dataset_path("builtin:factuality-demo")
    items = read_answers_jsonl(path, name="factuality-demo").items
    return [
        ClaimToVerify(claim_id=f"{item.id}-s{s.id}", claim=s.text, evidence=item.evidence)
        for item in items
        for s in split_sentences(item.answer)
    ]


def wice_items(directory: Path, claims: int | None) -> list[Any] | None:
    """WiCE oracle claims with their chunks as passages, or None when the data is absent."""
    if not (directory / "rows.jsonl").is_file():
        return None
    from assay.datasets import read_wice
    from assay.verifiers import ClaimToVerify

    items = read_wice(directory, name="wice-oracle").items[:claims]
    return [ClaimToVerify(claim_id=i.id, claim=i.answer, evidence=i.evidence) for i in items]


# ---- measurements ----------------------------------------------------------------------
def loaded(directory: Path, precision: str, batch_size: int) -> tuple[Any, float]:
    """A preflighted verifier ('fp32' or 'int8') and the seconds loading it took."""
    from assay.verifiers._nli_local import LocalNLIVerifier

    quantize = None if precision == "fp32" else precision
    started = time.perf_counter()
    verifier = LocalNLIVerifier(f"hf-nli/{directory}", batch_size=batch_size, quantize=quantize)
    verifier.preflight()
    return verifier, time.perf_counter() - started


def speed(
    directory: Path, pairs: Sequence[tuple[str, str]], batch_size: int, repeat: int
) -> dict[str, Any]:
    """Pairs/s of float32 and int8 on the same pairs, runs alternating, best of `repeat`."""
    from assay.core.answers import Passage
    from assay.verifiers import ClaimToVerify

    items = [
        ClaimToVerify(claim_id=str(i), claim=claim, evidence=[Passage(id="e", text=premise)])
        for i, (premise, claim) in enumerate(pairs)
    ]
    verifiers = {q: loaded(directory, q, batch_size) for q in ("fp32", "int8")}
    best = dict.fromkeys(verifiers, float("inf"))
    for _ in range(repeat):
        for name, (verifier, _) in verifiers.items():
            started = time.perf_counter()
            verdicts = asyncio.run(verifier.verify_many(items))
            best[name] = min(best[name], time.perf_counter() - started)
            assert all(v.status == "ok" for v in verdicts), name
    return {
        "pairs": len(pairs),
        **{f"{q}_pairs_per_s": round(len(pairs) / best[q], 1) for q in best},
        "int8_over_fp32": round(best["fp32"] / best["int8"], 2),
        **{f"{q}_load_s": round(verifiers[q][1], 2) for q in verifiers},
    }


def pair_labels(verdicts: Sequence[Any]) -> tuple[list[str], list[float]]:
    """Each scored pair's argmax label and entailment probability, in scoring order."""
    labels, p_entail = [], []
    for v in verdicts:
        for pair in v.pairs:
            probs = {role: getattr(pair, field) for field, role in ROLES.items()}
            labels.append(max(probs, key=probs.__getitem__))
            p_entail.append(pair.p_entail)
    return labels, p_entail


def agreement(directory: Path, items: Sequence[Any], batch_size: int) -> dict[str, Any]:
    """int8 against float32 on the same claims: pair labels, verdicts, probabilities."""
    from sklearn.metrics import cohen_kappa_score

    runs: dict[str, Any] = {}
    for q in ("fp32", "int8"):
        verifier, _ = loaded(directory, q, batch_size)
        started = time.perf_counter()
        verdicts = asyncio.run(verifier.verify_many(list(items)))
        runs[q] = (verdicts, time.perf_counter() - started)
        assert all(v.status == "ok" for v in verdicts), q
    (v32, t32), (v8, t8) = runs["fp32"], runs["int8"]
    l32, e32 = pair_labels(v32)
    l8, e8 = pair_labels(v8)
    diffs = [abs(a - b) for a, b in zip(e32, e8, strict=True)]
    n = len(l32)
    # kappa is undefined when both precisions give every pair the same label
    kappa = round(float(cohen_kappa_score(l32, l8)), 4) if len(set(l32) | set(l8)) > 1 else None
    verdict_same = sum(a.label == b.label for a, b in zip(v32, v8, strict=True))
    return {
        "claims": len(items),
        "pairs": n,
        "pair_label_agreement": round(sum(a == b for a, b in zip(l32, l8, strict=True)) / n, 4),
        "pair_label_kappa": kappa,
        "verdict_agreement": round(verdict_same / len(items), 4),
        "max_abs_diff_p_entail": round(max(diffs), 4),
        "mean_abs_diff_p_entail": round(sum(diffs) / n, 4),
        "fp32_pair_labels": dict(Counter(l32).most_common()),
        "fp32_verdicts": dict(Counter(str(v.label.value) for v in v32).most_common()),
        "fp32_pairs_per_s": round(n / t32, 1),
        "int8_pairs_per_s": round(n / t8, 1),
    }


# ---- tables ----------------------------------------------------------------------------
def speed_table(rows: dict[str, dict[str, Any]]) -> list[str]:
    out = [
        "| model | pairs | fp32 pairs/s | int8 pairs/s | int8 / fp32 | load s fp32 / int8 |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for model, r in rows.items():
        out.append(
            f"| {model} | {r['pairs']} | {r['fp32_pairs_per_s']} | {r['int8_pairs_per_s']} | "
            f"{r['int8_over_fp32']}x | {r['fp32_load_s']} / {r['int8_load_s']} |"
        )
    return out


def agreement_table(rows: dict[tuple[str, str], dict[str, Any]]) -> list[str]:
    out = [
        "| data | model | claims | pairs | pair label agreement | kappa | verdict agreement "
        "| max / mean abs diff p_entail | fp32 pair labels | fp32 verdicts "
        "| pairs/s fp32 / int8 |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|---|---:|",
    ]
    for (data, model), r in rows.items():
        labels = ", ".join(f"{k} {v}" for k, v in r["fp32_pair_labels"].items())
        verdicts = ", ".join(f"{k} {v}" for k, v in r["fp32_verdicts"].items())
        kappa = "n/a (one label)" if r["pair_label_kappa"] is None else r["pair_label_kappa"]
        out.append(
            f"| {data} | {model} | {r['claims']} | {r['pairs']} | "
            f"{r['pair_label_agreement']:.1%} | {kappa} | "
            f"{r['verdict_agreement']:.1%} | {r['max_abs_diff_p_entail']} / "
            f"{r['mean_abs_diff_p_entail']} | {labels} | {verdicts} | "
            f"{r['fp32_pairs_per_s']} / {r['int8_pairs_per_s']} |"
        )
    return out


# ---- the --int8 run --------------------------------------------------------------------
def run(args: Any, tmp: Path, pairs: list[tuple[str, str]], vocab: list[str]) -> dict[str, Any]:
    """Speed per model shape (narrow weights) and agreement per data set and weights
    spread (small shape); with --model, both on that checkpoint only."""
    import sentence_transformers  # noqa: F401  (imported once, outside the load times)

    data = {"factuality-demo (bundled)": demo_items()}
    wice = wice_items(Path(args.wice) if args.wice else WICE_DIR, args.claims)
    skipped = None if wice is not None else f"wice-oracle: no rows.jsonl in {args.wice or WICE_DIR}"
    if wice is not None:
        data["wice-oracle"] = wice
    if args.model:
        speed_models = agreement_models = {f"given: {args.model}": Path(args.model)}
    else:
        tokenizer = bench_tokenizer(vocab, args.seed)
        speed_models = {
            f"BERT {shape}, random narrow": build(
                tmp / shape, tokenizer, shape, "narrow", args.seed
            )
            for shape in args.shapes
        }
        small = speed_models.get("BERT small, random narrow") or build(
            tmp / "small", tokenizer, "small", "narrow", args.seed
        )
        wide = build(tmp / "small-wide", tokenizer, "small", "wide", args.seed)
        agreement_models = {"BERT small, random narrow": small, "BERT small, random wide": wide}
    speeds = {m: speed(d, pairs, args.batch_size, args.repeat) for m, d in speed_models.items()}
    agreements = {
        (name, m): agreement(d, items, args.batch_size)
        for name, items in ({} if args.speed_only else data).items()
        for m, d in agreement_models.items()
    }
    return {"speed": speeds, "agreement": agreements, "skipped": skipped}


def report(result: dict[str, Any]) -> list[str]:
    lines = ["", "speed (synthetic pairs, batched + bucketed, best of the runs):", ""]
    lines += speed_table(result["speed"])
    if result["agreement"]:
        lines += ["", "agreement of int8 with float32 (same pairs, same batches):", ""]
        lines += agreement_table(result["agreement"])
    if result["skipped"]:
        lines += ["", f"skipped {result['skipped']}"]
    return lines


def int8_main(args: Any, info: dict[str, Any], make_pairs: Any, pseudo_words: Any) -> int:
    """The --int8 run: figures only, no target (exit status 0 once it completes)."""
    started = datetime.now(UTC)
    measured = Measurement.of_this_run("bench_nli.py")
    tmp = Path(tempfile.mkdtemp(prefix="assay-bench-nli-int8-"))
    pairs = make_pairs(args.pairs, args.seed, tuple(args.evidence_words))
    try:
        result = run(args, tmp, pairs, pseudo_words(random.Random(args.seed), 9000))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    info["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    if args.json:
        agreement = [{"data": d, "model": m, **r} for (d, m), r in result["agreement"].items()]
        print(json.dumps({**result, "agreement": agreement, "machine": info}, indent=2))
        return 0
    lines = [
        f"date: {started:%Y-%m-%d %H:%M} UTC; machine: {info['platform']}, "
        f"{info['cpu_count']} CPUs, torch threads {info['torch_threads']}, torch "
        f"{info['torch']}, transformers {info['transformers']}, quantised engine "
        f"{quantized_engine()}; load avg {info['loadavg_before']} -> {info['loadavg_after']}",
        "",
        f"speed pairs: {len(pairs)} synthetic (evidence {args.evidence_words[0]}-"
        f"{args.evidence_words[1]} words), batch size {args.batch_size}, best of {args.repeat}",
        *report(result),
    ]
    print("\n".join(lines))
    if args.update_readme:
        return update_from_cli("nli-int8", measured, *readme_figures(lines))
    return 0


def readme_figures(lines: list[str]) -> tuple[str, str]:
    """The speed part (docs/benchmarks.md) and the agreement part (benchmarks/README.md only)."""
    text = "\n".join(lines)
    cut = text.find("\nagreement of int8")
    return (text, "") if cut < 0 else (text[:cut], text[cut:])


def quantized_engine() -> str:
    import torch

    return str(torch.backends.quantized.engine)
