"""BM25 on bm25s gives the rankings and scores assay 0.1's hand-written index gave.

tests/fixtures/bm25_v0_1_demo.json holds the top 10 of the old implementation (recorded
with assay 0.1, commit ea43e46, before the switch) for every question and answer sentence
of the bundled factuality demo, over its evidence passages plus the tiny-model corpus
sentences, with and without the S-stemmer.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from assay.core.answers import Passage
from assay.retrieval import BM25Retriever, Corpus, Tokenizer

TESTS = Path(__file__).parent
ROOT = TESTS.parent
sys.path.insert(0, str(TESTS))
from _tiny_models import sentences  # noqa: E402


def _demo_corpus() -> Corpus:
    rows = [json.loads(line) for line in (ROOT / "assay/data/factuality_demo.jsonl").open()]
    passages = [
        Passage(id=e["id"], title=e.get("title"), text=e["text"])
        for row in rows
        for e in row["evidence"]
    ]
    passages += [Passage(id=f"tiny-{i}", text=s) for i, s in enumerate(sentences())]
    return Corpus.from_passages(passages)


@pytest.fixture(scope="module")
def recorded() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((TESTS / "fixtures/bm25_v0_1_demo.json").read_text())
    return data


def test_bm25s_reproduces_recorded_rankings_and_scores(recorded: dict[str, Any]) -> None:
    corpus = _demo_corpus()
    assert corpus.sha256 == recorded["corpus_sha256"]
    retrievers = {s: BM25Retriever(corpus, tokenizer=Tokenizer(stem=s)) for s in (False, True)}
    assert len(recorded["results"]) == 74
    for row in recorded["results"]:
        hits = retrievers[row["stem"]].search(row["query"], k=recorded["k"])
        assert [h.id for h in hits] == row["ids"], row["query"]
        assert [h.score for h in hits] == pytest.approx(row["scores"], rel=1e-12, abs=0)


def test_bm25_describe_names_the_library() -> None:
    from importlib.metadata import version

    lib = BM25Retriever(_demo_corpus()).describe()["library"]
    assert lib == {"name": "bm25s", "version": version("bm25s"), "method": "lucene"}


def test_bm25_corpus_without_tokens_and_odd_tokenizers() -> None:
    corpus = Corpus.from_passages([Passage(id="a", text="the of"), Passage(id="b", text="and")])
    empty = BM25Retriever(corpus)
    assert empty.search("the anything") == [] and empty.vocabulary_size == 0
    assert empty.idf("anything") == 0.0

    def with_blank(text: str) -> list[str]:
        return ["", *text.split()]  # a custom tokenizer may emit an empty token

    mixed = Corpus.from_passages([Passage(id="a", text="x y"), Passage(id="b", text="y")])
    bm = BM25Retriever(mixed, tokenizer=with_blank)
    assert [h.id for h in bm.search("x")] == ["a"]
    assert bm.vocabulary_size == 2
