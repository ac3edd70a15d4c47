"""BM25 before and after the switch to bm25s, and bm25s's own tokenizer, compared.

Three retrievers over the same corpora:
  v0.1          assay 0.1's hand-written inverted index (loaded from git, commit ea43e46)
  bm25s+assay   today's BM25Retriever: bm25s (lucene, float64) with assay's analyser
  bm25s-native  bm25s with its own tokenizer (lowercase, `\\b\\w\\w+\\b`, English
                stopwords, no stemmer): the choice we did NOT make
For each pair: top-1 agreement, mean top-10 overlap, Spearman correlation of the full
score vectors, max |score difference|; per retriever: recall@10 of the query's own
evidence (ExpertQA claim → its passages, WiCE claim → its chunks, PubMedQA question →
its abstract), index build time. Corpora: the bundled demo (evidence passages; answer
sentences as queries) and ../shared/data samples when present.

    python benchmarks/bench_bm25.py [--shared ../shared/data] [--k 10]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from assay.core.answers import Passage
from assay.decomposers import split_sentences
from assay.retrieval import BM25Retriever, Corpus

ROOT = Path(__file__).resolve().parents[1]
OLD_COMMIT = "ea43e46"
# (queries, relevant passage ids per query)
Task = tuple[list[str], list[set[str]]]


def old_module() -> types.ModuleType:
    src = subprocess.run(
        ["git", "show", f"{OLD_COMMIT}:assay/retrieval/_bm25.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    mod = types.ModuleType("assay_v01_bm25")
    sys.modules[mod.__name__] = mod
    exec(compile(src, "assay_v01_bm25.py", "exec"), mod.__dict__)
    return mod


class NativeBM25:
    """bm25s end to end, with its own tokenizer and scoring (lucene variant)."""

    def __init__(self, corpus: Corpus) -> None:
        import bm25s

        self._bm25s = bm25s
        texts = [f"{p.title}\n{p.text}" if p.title else p.text for p in corpus.passages]
        self.index = bm25s.BM25(method="lucene", dtype="float64")
        self.index.index(
            bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False
        )
        self.n = len(corpus)

    def full_scores(self, query: str) -> np.ndarray:
        tokens = self._bm25s.tokenize(
            [query], stopwords="en", return_ids=False, show_progress=False
        )[0]
        ids = self.index.get_tokens_ids(tokens)
        scores = np.asarray(self.index.get_scores_from_ids(ids), dtype=np.float64)
        return scores * 2.5  # bm25s leaves out the constant (k1 + 1), k1 = 1.5


def full_scores_of(retriever: Any) -> Callable[[str], np.ndarray]:
    if isinstance(retriever, NativeBM25):
        return retriever.full_scores

    def dense(query: str) -> np.ndarray:
        out = np.zeros(len(retriever.corpus))
        ids, scores = retriever.scores(query)
        out[ids] = scores
        return out

    return dense


def ranking(scores: np.ndarray, k: int) -> list[int]:
    order = np.lexsort((np.arange(len(scores)), -scores))
    return [int(i) for i in order[:k] if scores[i] > 0]


def demo_task() -> tuple[Corpus, Task]:
    rows = [json.loads(x) for x in (ROOT / "assay/data/factuality_demo.jsonl").open()]
    passages = [
        Passage(id=e["id"], title=e.get("title"), text=e["text"])
        for r in rows
        for e in r["evidence"]
    ]
    queries, rel = [], []
    for r in rows:
        for s in split_sentences(r["answer"]):
            queries.append(s.text)
            rel.append({e["id"] for e in r["evidence"]})
    return Corpus.from_passages(passages), (queries, rel)


def expertqa_task(path: Path) -> tuple[Corpus, Task]:
    seen: dict[str, str] = {}
    queries, rel = [], []
    for line in path.open():
        row = json.loads(line)
        ids = set()
        for ev in row["evidence"]:
            pid = seen.setdefault(ev["passage"], f"p{len(seen)}")
            ids.add(pid)
        queries.append(row["claim_clean"])
        rel.append(ids)
    corpus = Corpus.from_passages(Passage(id=i, text=t) for t, i in seen.items())
    return corpus, (queries, rel)


def wice_task(rows_path: Path) -> tuple[Corpus, Task]:
    rows = [json.loads(x) for x in rows_path.open()]
    corpus = Corpus.from_passages(Passage(id=r["id"], text=r["evidence"]) for r in rows)
    claims: dict[str, tuple[str, set[str]]] = {}
    for r in rows:
        claims.setdefault(r["claim_id"], (r["claim"], set()))[1].add(r["id"])
    return corpus, ([c for c, _ in claims.values()], [ids for _, ids in claims.values()])


def pubmedqa_task(path: Path) -> tuple[Corpus, Task]:
    rows = [json.loads(x) for x in path.open()]
    corpus = Corpus.from_passages(Passage(id=r["id"], text=r["evidence"]) for r in rows)
    return corpus, ([r["question"] for r in rows], [{r["id"]} for r in rows])


def compare(name: str, corpus: Corpus, task: Task, old: types.ModuleType, k: int) -> None:
    queries, relevant = task
    built: dict[str, Any] = {}
    timings = {}
    for label, make in (
        ("v0.1", lambda: old.BM25Retriever(corpus)),
        ("bm25s+assay", lambda: BM25Retriever(corpus)),
        ("bm25s-native", lambda: NativeBM25(corpus)),
    ):
        t0 = time.perf_counter()
        built[label] = make()
        timings[label] = time.perf_counter() - t0
    scores = {lab: [full_scores_of(r)(q) for q in queries] for lab, r in built.items()}
    ids = [p.id for p in corpus.passages]
    print(f"\n{name}: {len(corpus)} passages, {len(queries)} queries")
    for lab in built:
        hits = [
            sum(ids[i] in rel for i in ranking(s, k)) / len(rel)
            for s, rel in zip(scores[lab], relevant, strict=True)
        ]
        print(f"  {lab:13s} recall@{k} {np.mean(hits):.3f}   index built in {timings[lab]:.2f} s")
    for a, b in (("v0.1", "bm25s+assay"), ("v0.1", "bm25s-native")):
        top1 = overlap = 0.0
        rhos, diff = [], 0.0
        for sa, sb in zip(scores[a], scores[b], strict=True):
            ra, rb = ranking(sa, k), ranking(sb, k)
            top1 += ra[:1] == rb[:1]
            union = set(ra) | set(rb)
            overlap += len(set(ra) & set(rb)) / len(union) if union else 1.0  # both empty
            if sa.any() and sb.any() and np.ptp(sa) and np.ptp(sb):
                rhos.append(stats.spearmanr(sa, sb).statistic)
            diff = max(diff, float(np.abs(sa - sb).max()))
        n = len(queries)
        print(
            f"  {a} vs {b}: top-1 agree {top1 / n:.3f}, top-{k} Jaccard {overlap / n:.3f}, "
            f"Spearman (all passages) {np.mean(rhos):.4f}, max |Δscore| {diff:.2e}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--k", type=int, default=10)
    args = ap.parse_args()
    old = old_module()
    compare("demo (bundled)", *demo_task(), old, args.k)
    sources = {
        "ExpertQA claims → evidence passages": (expertqa_task, "expertqa/claims.jsonl"),
        "WiCE claims → evidence chunks": (wice_task, "wice_oracle/rows.jsonl"),
        "PubMedQA questions → abstracts": (pubmedqa_task, "pubmedqa/pqal_test_sample.jsonl"),
    }
    for name, (load, rel_path) in sources.items():
        path = args.shared / rel_path
        if path.is_file():
            compare(name, *load(path), old, args.k)


if __name__ == "__main__":
    main()
