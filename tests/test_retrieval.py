"""Retrieval: corpus loading, BM25 (hand-computed), dense with a fake embedder, RRF,
and the local transformers embedder on a tiny random BERT built in tmp_path."""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import re
import subprocess
import sys
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from assay.datasets import Passage
from assay.errors import DatasetError, ModelConfigError
from assay.retrieval import (
    BM25Retriever,
    Corpus,
    DenseRetriever,
    Embedder,
    Hit,
    HybridRetriever,
    Retriever,
    Tokenizer,
    TransformersEmbedder,
    load_corpus,
    reciprocal_rank_fusion,
    tokenize,
)

# Token counts after the default tokenizer (stopwords removed, title included):
#   p1 volcano volcano erupted 2019            -> 4
#   p2 aspirin reduces fever adults            -> 4
#   p3 river floods every spring               -> 4
#   p4 volcano near river                      -> 3
#   p5 ibuprofen reduces fever pain            -> 4
#   p6 tea contains caffeine coffee contains caffeine -> 6  ("more" is a stopword)
#   p7 dose 2.5 mg per day                     -> 5
#   p8 coffee contains caffeine                -> 3
# N = 8, total 33 tokens, avgdl = 33 / 8 = 4.125
ROWS: list[dict[str, Any]] = [
    {"id": "p1", "title": "Volcano", "text": "The volcano erupted in 2019.", "source": "geo"},
    {"id": "p2", "text": "Aspirin reduces fever in adults."},
    {"id": "p3", "text": "The river floods every spring."},
    {"id": "p4", "text": "A volcano near the river."},
    {"id": "p5", "text": "Ibuprofen reduces fever and pain."},
    {"id": "p6", "text": "Tea contains caffeine; coffee contains more caffeine."},
    {"id": "p7", "text": "The dose was 2.5 mg per day."},
    {"id": "p8", "text": "Coffee contains caffeine."},
]


def _write(path: Path, rows: Sequence[object], *, raw_lines: Sequence[str] = ()) -> Path:
    lines = [json.dumps(r) for r in rows] + list(raw_lines)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def corpus_path(tmp_path: Path) -> Path:
    return _write(tmp_path / "corpus.jsonl", ROWS)


@pytest.fixture
def corpus(corpus_path: Path) -> Corpus:
    return load_corpus(corpus_path)


@pytest.fixture
def bm25(corpus: Corpus) -> BM25Retriever:
    return BM25Retriever(corpus)


def _ids(hits: list[Hit]) -> list[str]:
    return [h.id for h in hits]


# --------------------------------------------------------------------------------------
# Corpus loading
# --------------------------------------------------------------------------------------


def test_load_corpus_reads_passages_and_identity(corpus_path: Path, corpus: Corpus) -> None:
    assert len(corpus) == 8
    assert [p.id for p in corpus.passages] == [f"p{i}" for i in range(1, 9)]
    assert corpus.passages[0] == Passage(
        id="p1", text="The volcano erupted in 2019.", title="Volcano", source="geo"
    )
    assert corpus.sha256 == hashlib.sha256(corpus_path.read_bytes()).hexdigest()
    assert corpus.path == str(corpus_path.resolve())
    assert corpus.get("p4").text == "A volcano near the river."
    assert corpus.index_of("p8") == 7 and "p8" in corpus and "p9" not in corpus
    assert corpus.describe() == {"path": corpus.path, "sha256": corpus.sha256, "size": 8}


def test_load_corpus_accepts_alternative_keys(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "alt.jsonl",
        [
            {"docid": "d1", "contents": "Pyserini style"},
            {"_id": 7, "title": "BEIR", "text": "", "metadata": {"x": 1}},
            {"id": "d3", "passage": "DPR style", "title": None},
        ],
        raw_lines=["", "   "],
    )
    c = load_corpus(path)
    assert [(p.id, p.text, p.title) for p in c] == [
        ("d1", "Pyserini style", None),
        ("7", "", "BEIR"),
        ("d3", "DPR style", None),
    ]


def test_load_corpus_gzip(tmp_path: Path) -> None:
    data = ("\n".join(json.dumps(r) for r in ROWS) + "\n").encode()
    path = tmp_path / "corpus.jsonl.gz"
    path.write_bytes(gzip.compress(data))
    c = load_corpus(path)
    assert len(c) == 8
    assert c.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    ("rows", "raw", "needle", "line", "field"),
    [
        ([ROWS[0]], ['{"id": "x", "text": '], "invalid JSON", 2, None),
        ([ROWS[0], {"id": "x"}], [], "missing passage text", 2, "text"),
        ([ROWS[0], ROWS[1], {"id": "p1", "text": "again"}], [], "duplicate id 'p1'", 3, "id"),
        ([{"_id": "a", "text": "t"}, {"_id": "a", "text": "u"}], [], "first on line 1", 2, "_id"),
        ([{"text": "no id"}], [], "missing passage id", 1, "id"),
        ([{"id": "", "text": "t"}], [], "non-empty", 1, "id"),
        ([{"id": "a", "contents": 3}], [], "must be a string", 1, "contents"),
        ([{"id": "a", "text": "t", "title": ["x"]}], [], "string or null", 1, "title"),
        ([["id", "text"]], [], "JSON object", 1, None),
    ],
)
def test_load_corpus_errors_name_file_line_field(
    tmp_path: Path,
    rows: list[object],
    raw: list[str],
    needle: str,
    line: int,
    field: str | None,
) -> None:
    path = _write(tmp_path / "bad.jsonl", rows, raw_lines=raw)
    with pytest.raises(DatasetError) as info:
        load_corpus(path)
    err = info.value
    assert needle in str(err)
    assert (err.file, err.line, err.field) == (str(path), line, field)
    assert str(err).startswith(f"{path}:{line}: ")
    if field:
        assert f"field '{field}'" in str(err)


def test_load_corpus_missing_or_empty_file(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="not found"):
        load_corpus(tmp_path / "nope.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n\n")
    with pytest.raises(DatasetError, match="no passages"):
        load_corpus(tmp_path / "empty.jsonl")


def test_corpus_from_passages_rejects_duplicates() -> None:
    c = Corpus.from_passages([Passage(id="a", text="x"), Passage(id="b", text="y")])
    assert len(c) == 2 and c.path is None and len(c.sha256) == 64
    with pytest.raises(ValueError, match="duplicate"):
        Corpus.from_passages([Passage(id="a", text="x"), Passage(id="a", text="y")])


# --------------------------------------------------------------------------------------
# Tokenizer
# --------------------------------------------------------------------------------------


def test_tokenize_rules() -> None:
    assert tokenize("The 2.5 mg dose in 2019.") == ["2.5", "mg", "dose", "2019"]
    assert tokenize("1,000 people; items 1,2") == ["1000", "people", "items", "1", "2"]
    assert tokenize("The patient\u2019s O'Neill don't COVID-19") == [
        "patient",
        "oneill",
        "dont",
        "covid",
        "19",
    ]
    assert tokenize("of the and to is") == []
    assert tokenize("") == []
    assert tokenize("Studies of cities and floods", stem=True) == ["study", "city", "flood"]
    assert tokenize("bus glass virus", stem=True) == ["bus", "glass", "virus"]


# --------------------------------------------------------------------------------------
# BM25
# --------------------------------------------------------------------------------------


def test_bm25_hand_computed_score(bm25: BM25Retriever) -> None:
    # query "volcano": df = 2 (p1, p4), N = 8
    #   idf = ln(1 + (8 - 2 + 0.5) / (2 + 0.5)) = ln(1 + 2.6) = ln(3.6)
    # p1: tf = 2 (title + text), |d| = 4, avgdl = 4.125 (|d|/avgdl = 32/33)
    #   norm = k1 * (1 - b + b * 32/33) = 1.5 * (0.25 + 8/11) = 1.5 * 43/44 = 129/88
    #   tf part = tf * (k1 + 1) / (tf + norm) = 2 * 2.5 / (2 + 129/88) = 5 / (305/88) = 88/61
    #   score = ln(3.6) * 88/61 ≈ 1.2809338 * 1.4426230 ≈ 1.8479
    # p4: tf = 1, |d| = 3 (|d|/avgdl = 8/11)
    #   norm = 1.5 * (0.25 + 6/11) = 1.5 * 35/44 = 105/88
    #   tf part = 2.5 / (1 + 105/88) = 2.5 * 88/193 = 220/193;  score = ln(3.6) * 220/193
    hits = bm25.search("volcano")
    assert _ids(hits) == ["p1", "p4"]  # only matching passages, even with k = 10
    assert hits[0].score == pytest.approx(math.log(3.6) * 88 / 61, abs=1e-6)
    assert hits[1].score == pytest.approx(math.log(3.6) * 220 / 193, abs=1e-6)
    assert [h.rank for h in hits] == [1, 2]
    assert bm25.idf("volcano") == pytest.approx(math.log(3.6))
    assert bm25.idf("zebra") == 0.0


def test_bm25_rankings_by_construction(bm25: BM25Retriever) -> None:
    assert _ids(bm25.search("How large was the 2.5 mg dose?")) == ["p7"]
    # same idf and tf for both terms; the shorter passage wins (length normalisation)
    assert _ids(bm25.search("coffee caffeine")) == ["p8", "p6"]
    assert _ids(bm25.search("river", k=1)) == ["p4"]  # shorter of p3/p4
    assert _ids(bm25.search("zebra")) == []


def test_bm25_repeated_query_terms_count(bm25: BM25Retriever) -> None:
    once = bm25.search("river")[0].score
    assert bm25.search("river river")[0].score == pytest.approx(2 * once)


def test_bm25_tie_break_by_corpus_order(corpus: Corpus) -> None:
    # p2 and p5 both contain "reduces" and "fever" once and have 4 tokens: equal scores
    hits = BM25Retriever(corpus).search("reduces fever")
    assert _ids(hits) == ["p2", "p5"]
    assert hits[0].score == hits[1].score
    # the same passages in the other file order come back in that order
    rev = Corpus.from_passages(reversed(corpus.passages))
    assert _ids(BM25Retriever(rev).search("reduces fever")) == ["p5", "p2"]
    # a cut inside a tie keeps the earlier passage
    assert _ids(BM25Retriever(corpus).search("reduces fever", k=1)) == ["p2"]


def test_bm25_k_larger_than_corpus(bm25: BM25Retriever) -> None:
    hits = bm25.search("volcano river fever caffeine dose", k=100)
    assert sorted(_ids(hits)) == sorted(f"p{i}" for i in range(1, 9))
    assert [h.rank for h in hits] == list(range(1, 9))
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)


def test_bm25_empty_and_stopword_queries(bm25: BM25Retriever) -> None:
    assert bm25.search("") == []
    assert bm25.search("   ") == []
    assert bm25.search("the of and") == []


def test_bm25_bad_arguments(corpus: Corpus, bm25: BM25Retriever) -> None:
    with pytest.raises(ValueError, match="k must be"):
        bm25.search("volcano", k=0)
    with pytest.raises(ValueError, match="b must be"):
        BM25Retriever(corpus, b=1.5)
    with pytest.raises(ValueError, match="k1"):
        BM25Retriever(corpus, k1=-1)


def test_bm25_search_many_equals_repeated_search(bm25: BM25Retriever) -> None:
    queries = ["volcano", "reduces fever", "", "coffee caffeine", "zebra", "river spring"]
    assert bm25.search_many(queries, k=3) == [bm25.search(q, k=3) for q in queries]


def _reference_bm25(docs: list[list[str]], query: list[str], k1: float, b: float) -> list[float]:
    """Textbook BM25, one passage and one query token at a time."""
    n, avgdl = len(docs), sum(len(d) for d in docs) / len(docs)
    out = []
    for d in docs:
        score = 0.0
        for t in query:
            df = sum(t in other for other in docs)
            tf = d.count(t)
            if tf:
                idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(d) / avgdl))
        out.append(score)
    return out


@pytest.mark.parametrize(("k1", "b"), [(1.5, 0.75), (0.9, 0.4), (1.2, 1.0), (2.0, 0.0)])
def test_bm25_matches_reference_on_generated_corpus(k1: float, b: float) -> None:
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(40)]
    p = 1 / np.arange(1, 41)
    texts = [
        " ".join(rng.choice(words, size=int(rng.integers(1, 15)), p=p / p.sum()))
        for _ in range(300)
    ]
    corpus = Corpus.from_passages(Passage(id=str(i), text=t) for i, t in enumerate(texts))
    retriever = BM25Retriever(corpus, k1=k1, b=b)
    docs = [tokenize(t) for t in texts]
    # rare terms take the sparse path (few postings), common ones the dense accumulator
    for query in ["w39 w38", "w37 w30 w37", "w0 w1 w2", "w0 w39", "w5"]:
        expected = _reference_bm25(docs, tokenize(query), k1, b)
        hits = retriever.search(query, k=300)
        assert len(hits) == sum(s > 0 for s in expected)
        for h in hits:
            assert h.score == pytest.approx(expected[int(h.id)], abs=1e-9)
        ranked = sorted(
            (i for i, s in enumerate(expected) if s > 0), key=lambda i: (-expected[i], i)
        )
        assert [int(h.id) for h in hits][:5] == ranked[:5]


def test_bm25_stemming_is_optional(corpus: Corpus) -> None:
    assert BM25Retriever(corpus).search("flood") == []
    stemmed = BM25Retriever(corpus, tokenizer=Tokenizer(stem=True))
    assert _ids(stemmed.search("flood")) == ["p3"]
    assert stemmed.describe()["tokenizer"]["stem"] == "s-stemmer"


def test_bm25_describe(corpus: Corpus, bm25: BM25Retriever) -> None:
    d = bm25.describe()
    assert d["kind"] == "bm25" and d["k1"] == 1.5 and d["b"] == 0.75
    assert d["tokenizer"]["name"] == "assay-words" and d["tokenizer"]["version"] == "1"
    assert d["tokenizer"]["stem"] is None and len(d["tokenizer"]["stopwords_sha256"]) == 64
    assert d["corpus"] == {"path": corpus.path, "sha256": corpus.sha256, "size": 8}
    json.dumps(d)  # goes into the manifest as is
    assert isinstance(bm25, Retriever)

    def words(text: str) -> list[str]:
        return text.lower().split()

    custom = BM25Retriever(corpus, tokenizer=words).describe()["tokenizer"]
    assert custom["name"].endswith("words") and custom["version"] is None


# --------------------------------------------------------------------------------------
# Dense with a fake embedder
# --------------------------------------------------------------------------------------


class HashingEmbedder:
    """Bag of words hashed into 256 buckets (crc32), *not* normalised on purpose."""

    def __init__(self) -> None:
        self.calls: list[int] = []

    def embed(self, texts: list[str]) -> NDArray[np.float64]:
        self.calls.append(len(texts))
        out = np.zeros((len(texts), 256))
        for i, text in enumerate(texts):
            for word in re.findall(r"[a-z0-9]+", text.lower()):
                out[i, zlib.crc32(word.encode()) % 256] += 1.0
        return out

    def describe(self) -> dict[str, Any]:
        return {"kind": "hashing", "dim": 256}


def test_dense_retriever_with_fake_embedder(corpus: Corpus) -> None:
    emb = HashingEmbedder()
    assert isinstance(emb, Embedder)
    dense = DenseRetriever(corpus, emb)
    assert emb.calls == [8]  # the passage matrix is computed once
    assert np.allclose(np.linalg.norm(dense.matrix, axis=1), 1.0)

    assert dense.search("tea", k=1)[0].id == "p6"
    hits = dense.search("Ibuprofen pain", k=2)
    assert hits[0].id == "p5" and hits[0].rank == 1
    # p5 has 5 words, two of them shared: cosine = 2 / (sqrt(2) * sqrt(5))
    assert hits[0].score == pytest.approx(2 / math.sqrt(10), abs=1e-6)
    assert len(dense.search("volcano", k=50)) == 8  # every passage has a score
    assert dense.search("   ") == []

    queries = ["tea", "", "volcano erupted", "aspirin fever"]
    many = dense.search_many(queries, k=3)
    assert emb.calls[-1] == 3  # one batched call, blank queries skipped
    assert many == [dense.search(q, k=3) for q in queries]
    assert emb.calls.count(8) == 1

    d = dense.describe()
    assert d["kind"] == "dense" and d["embedder"] == {"kind": "hashing", "dim": 256}
    assert d["corpus"]["sha256"] == corpus.sha256


def test_dense_rejects_bad_embedder_output(corpus: Corpus) -> None:
    class Wrong:
        def embed(self, texts: list[str]) -> NDArray[np.float64]:
            return np.ones((len(texts) + 1, 4))

        def describe(self) -> dict[str, Any]:
            return {}

    with pytest.raises(ValueError, match="shape"):
        DenseRetriever(corpus, Wrong())


# --------------------------------------------------------------------------------------
# Reciprocal rank fusion and the hybrid retriever
# --------------------------------------------------------------------------------------


def test_rrf_hand_computed() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["b", "d", "a"]], rrf_k=60)
    # a: 1/61 + 1/63   b: 1/61 + 1/62   c: 1/63   d: 1/62
    assert [i for i, _ in fused] == ["b", "a", "d", "c"]
    expected = {"a": 1 / 61 + 1 / 63, "b": 1 / 61 + 1 / 62, "c": 1 / 63, "d": 1 / 62}
    for item, score in fused:
        assert score == pytest.approx(expected[item], abs=1e-12)
    # rrf_k = 0: a = 1/1 + 1/2 = 1.5, b = 1/1 = 1
    assert reciprocal_rank_fusion([["a"], ["b", "a"]], rrf_k=0) == [("a", 1.5), ("b", 1.0)]


def test_rrf_ties_and_errors() -> None:
    # x and y both score 1/61 + 1/62 and both have best rank 1: the earlier list wins
    assert [i for i, _ in reciprocal_rank_fusion([["x", "y"], ["y", "x"]])] == ["x", "y"]
    assert [i for i, _ in reciprocal_rank_fusion([["y", "x"], ["x", "y"]])] == ["y", "x"]
    assert reciprocal_rank_fusion([]) == []
    with pytest.raises(ValueError, match="twice"):
        reciprocal_rank_fusion([["a", "a"]])
    with pytest.raises(ValueError, match="rrf_k"):
        reciprocal_rank_fusion([["a"]], rrf_k=-1)


class FixedRetriever:
    """Returns the same ranking for every non-blank query."""

    def __init__(self, corpus: Corpus, ranking: list[str], name: str) -> None:
        self._corpus = corpus
        self.ranking = ranking
        self.name = name

    @property
    def corpus(self) -> Corpus:
        return self._corpus

    def search(self, query: str, k: int = 10) -> list[Hit]:
        if not query.strip():
            return []
        return [
            Hit(passage=self._corpus.get(pid), score=1.0 / r, rank=r)
            for r, pid in enumerate(self.ranking[:k], start=1)
        ]

    def search_many(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        return [self.search(q, k) for q in queries]

    def describe(self) -> dict[str, Any]:
        return {"kind": self.name}


def test_hybrid_fuses_component_rankings(corpus: Corpus) -> None:
    lexical = FixedRetriever(corpus, ["p1", "p2", "p3", "p4"], "lex")
    semantic = FixedRetriever(corpus, ["p3", "p5", "p1"], "sem")
    hybrid = HybridRetriever(lexical, semantic, rrf_k=60)
    hits = hybrid.search("anything", k=3)
    # p1: 1/61 + 1/63   p3: 1/63 + 1/61 (tie, p1 reached rank 1 in the earlier list)
    # p2: 1/62          p5: 1/62 (tie, p2 from the earlier list)      p4: 1/64
    assert _ids(hits) == ["p1", "p3", "p2"]
    assert hits[0].score == pytest.approx(1 / 61 + 1 / 63, abs=1e-12)
    assert hits[2].score == pytest.approx(1 / 62, abs=1e-12)
    assert [h.rank for h in hits] == [1, 2, 3]
    assert _ids(hybrid.search("anything", k=10)) == ["p1", "p3", "p2", "p5", "p4"]
    # candidates limits how deep each component is read (but never below k)
    shallow = HybridRetriever(lexical, semantic, candidates=1)
    assert _ids(shallow.search("q", k=1)) == ["p1"]
    assert _ids(shallow.search("q", k=2)) == ["p1", "p3"]
    assert hybrid.search("  ") == []
    d = hybrid.describe()
    assert d["kind"] == "hybrid" and d["method"] == "rrf" and d["rrf_k"] == 60
    assert d["candidates"] == 100
    assert d["components"] == {"bm25": {"kind": "lex"}, "dense": {"kind": "sem"}}


def test_hybrid_with_real_components(corpus: Corpus, bm25: BM25Retriever) -> None:
    dense = DenseRetriever(corpus, HashingEmbedder())
    hybrid = HybridRetriever(bm25, dense, candidates=5)
    queries = ["volcano erupted", "coffee caffeine", "", "zebra"]
    results = hybrid.search_many(queries, k=4)
    assert results == [hybrid.search(q, k=4) for q in queries]
    assert results[0][0].id == "p1"  # first in both rankings
    assert results[2] == []
    assert all(len(r) == 4 for i, r in enumerate(results) if i != 2)  # zebra: dense only
    d = hybrid.describe()
    assert d["components"]["bm25"]["kind"] == "bm25"
    assert d["components"]["dense"]["kind"] == "dense"
    json.dumps(d)


def test_hybrid_rejects_bad_settings(corpus: Corpus, bm25: BM25Retriever) -> None:
    dense = DenseRetriever(corpus, HashingEmbedder())
    with pytest.raises(ValueError, match="method"):
        HybridRetriever(bm25, dense, method="linear")
    other = Corpus.from_passages([Passage(id="z", text="other")])
    with pytest.raises(ValueError, match="same corpus"):
        HybridRetriever(bm25, DenseRetriever(other, HashingEmbedder()))


# --------------------------------------------------------------------------------------
# TransformersEmbedder on a tiny random BERT (no network)
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    tk = pytest.importorskip("tokenizers")
    import torch
    from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

    out = tmp_path_factory.mktemp("tiny-bert")
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = tk.Tokenizer(tk.models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = tk.normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = tk.pre_tokenizers.BertPreTokenizer()
    trainer = tk.trainers.WordPieceTrainer(vocab_size=300, special_tokens=specials)
    tok.train_from_iterator([f"{r.get('title', '')} {r['text']}" for r in ROWS] * 3, trainer)
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = tk.processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=tok,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=64,
    ).save_pretrained(out)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=tok.get_vocab_size(),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    BertModel(config).save_pretrained(out)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield out


def test_transformers_embedder_shape_norms_and_batching(tiny_bert: Path) -> None:
    assert os.environ["HF_HUB_OFFLINE"] == "1"
    texts = [f"{r.get('title', '')}\n{r['text']}" for r in ROWS] + ["", "unseen words here"]
    one = TransformersEmbedder(tiny_bert, batch_size=1, max_length=32)
    many = TransformersEmbedder(tiny_bert, batch_size=4, max_length=32)
    a, b = one.embed(texts), many.embed(texts)
    assert a.shape == (10, 32) and a.dtype == np.float32
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    assert np.allclose(a, b, atol=1e-5)
    assert np.allclose(many.embed(texts[3:5]), b[3:5], atol=1e-5)  # order kept
    assert many.embed([]).shape == (0, 32)
    assert isinstance(many, Embedder)

    cls = TransformersEmbedder(tiny_bert, pooling="cls", batch_size=3).embed(texts[:4])
    assert np.allclose(np.linalg.norm(cls, axis=1), 1.0, atol=1e-5)

    d = many.describe()
    assert d["kind"] == "transformers" and d["model_type"] == "bert" and d["dim"] == 32
    assert d["pooling"] == "mean" and d["max_length"] == 32 and d["batch_size"] == 4
    assert d["model_dir"] == str(tiny_bert.resolve())
    assert d["model_sha256"] == one.describe()["model_sha256"]
    json.dumps(d)


def test_transformers_embedder_in_dense_retriever(tiny_bert: Path, corpus: Corpus) -> None:
    dense = DenseRetriever(corpus, TransformersEmbedder(tiny_bert, batch_size=3))
    # a query identical to an indexed passage text embeds to the same row: cosine 1
    hit = dense.search("Coffee contains caffeine.", k=1)[0]
    assert hit.id == "p8" and hit.score == pytest.approx(1.0, abs=1e-5)
    assert len(dense.search("anything", k=20)) == 8


def test_transformers_embedder_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(ModelConfigError, match="not found"):
        TransformersEmbedder(tmp_path / "missing")
    with pytest.raises(ValueError, match="pooling"):
        TransformersEmbedder(tmp_path, pooling="max")


def test_import_does_not_load_torch() -> None:
    code = (
        "import sys, assay.retrieval\n"
        "heavy = [m for m in ('torch', 'transformers', 'tokenizers', 'litellm')"
        " if m in sys.modules]\n"
        "print(heavy)\n"
        "sys.exit(1 if heavy else 0)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
