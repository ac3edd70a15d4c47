"""Sentence splitters compared: assay's bundled rules vs pysbd (rule-based, maintained).

Reference segmentation: ExpertQA (../shared/data/expertqa/answers.jsonl) splits each answer
into claims that are its sentences, in order, covering the whole answer (Malaviya et al.
2024 used an automatic splitter, so this is a reference, not human gold). A boundary is
the start offset of every sentence but the first; precision / recall / F1 compare the
sets of boundaries, "exact" counts predicted sentences whose span equals a reference
sentence's span. Newline handling differs by design (assay splits at every line break),
so boundaries are also scored with line-break boundaries removed from both sides.

Also printed: agreement between the two splitters on the bundled demo answers
(assay/data/factuality_demo.jsonl) and on MedScore AskDocs responses (no reference),
with the first disagreements, and time per 1,000 answers.

    pip install pysbd   # not a dependency of assay: only this comparison uses it
    python benchmarks/bench_sentences.py [--shared ../shared/data] [--show 5]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay.decomposers import split_sentences

ROOT = Path(__file__).resolve().parents[1]
Spans = list[tuple[int, int]]


def assay_spans(text: str) -> Spans:
    return [s.span for s in split_sentences(text)]


def pysbd_spans(text: str) -> Spans:
    import pysbd

    seg = pysbd.Segmenter(language="en", clean=False, char_span=True)
    spans = []
    for piece in seg.segment(text):
        start, end = piece.start, piece.end
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if end > start:
            spans.append((start, end))
    return spans


SPLITTERS: dict[str, Callable[[str], Spans]] = {"assay": assay_spans, "pysbd": pysbd_spans}


def reference_spans(answer: str, claims: list[str]) -> Spans:
    spans, pos = [], 0
    for claim in claims:
        start = answer.index(claim.strip(), pos)
        pos = start + len(claim.strip())
        spans.append((start, pos))
    return spans


def boundaries(text: str, spans: Spans, *, skip_newlines: bool) -> set[int]:
    out = set()
    for (_, prev_end), (start, _) in zip(spans, spans[1:], strict=False):
        if skip_newlines and "\n" in text[prev_end:start]:
            continue
        out.add(start)
    return out


def prf(tp: int, n_pred: int, n_gold: int) -> str:
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gold if n_gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return f"P {p:.3f}  R {r:.3f}  F1 {f:.3f}"


def score_reference(rows: list[dict[str, Any]]) -> None:
    n_ref = sum(len(r["claims"]) for r in rows)
    print(f"ExpertQA: {len(rows)} answers, {n_ref} reference sentences")
    for name, split in SPLITTERS.items():
        for skip in (False, True):
            tp = n_pred = n_gold = exact = n_sent = 0
            for r in rows:
                text = str(r["answer"])
                ref = reference_spans(text, [str(c["claim"]) for c in r["claims"]])
                pred = split(text)
                gold_b = boundaries(text, ref, skip_newlines=skip)
                pred_b = boundaries(text, pred, skip_newlines=skip)
                tp += len(gold_b & pred_b)
                n_pred += len(pred_b)
                n_gold += len(gold_b)
                exact += len(set(ref) & set(pred))
                n_sent += len(pred)
            label = "without line-break boundaries" if skip else "all boundaries"
            print(
                f"  {name:6s} {label:30s} {prf(tp, n_pred, n_gold)}  "
                f"sentences {n_sent:4d}  exact {exact}/{n_ref}"
            )


def compare(name: str, texts: list[str], show: int) -> None:
    same = 0
    shown = 0
    n = {k: 0 for k in SPLITTERS}
    for text in texts:
        out = {k: split(text) for k, split in SPLITTERS.items()}
        for k, spans in out.items():
            n[k] += len(spans)
        if out["assay"] == out["pysbd"]:
            same += 1
        elif shown < show:
            shown += 1
            print(f"  -- differs: {text[:70]!r}")
            for k, spans in out.items():
                print(f"     {k:6s} " + " | ".join(repr(text[a:b][:40]) for a, b in spans[:6]))
    counts = ", ".join(f"{k} {v}" for k, v in n.items())
    print(f"{name}: {len(texts)} texts, identical split {same}/{len(texts)}; sentences: {counts}")


def timing(texts: list[str]) -> None:
    for name, split in SPLITTERS.items():
        t0 = time.perf_counter()
        for text in texts:
            split(text)
        per_k = (time.perf_counter() - t0) / len(texts) * 1000
        print(f"  {name:6s} {per_k:7.2f} s per 1,000 answers")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--show", type=int, default=5, help="disagreements to print per set")
    args = ap.parse_args()
    demo = [json.loads(x)["answer"] for x in (ROOT / "assay/data/factuality_demo.jsonl").open()]
    compare("demo answers", demo, args.show)
    expertqa = args.shared / "expertqa" / "answers.jsonl"
    medscore = args.shared / "medscore_askdocs" / "sample.jsonl"
    all_texts = list(demo)
    if expertqa.is_file():
        rows = [json.loads(x) for x in expertqa.open()]
        score_reference(rows)
        all_texts += [r["answer"] for r in rows]
    if medscore.is_file():
        responses = [json.loads(x)["response"] for x in medscore.open()]
        compare("MedScore AskDocs responses", responses, args.show)
        all_texts += responses
    print(f"timing over {len(all_texts)} texts:")
    timing(all_texts)


if __name__ == "__main__":
    main()
