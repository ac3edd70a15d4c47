"""The local NLI verifier records every window it scored.

Tiny models (tests/_tiny_models.py): random weights for the mechanics, and a model
whose classifier bias fixes every prediction, so the recorded probabilities are known.
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import math  # noqa: E402
import random  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402

pytest.importorskip("torch")
pytest.importorskip("transformers")

from _tiny_models import (  # noqa: E402
    CORPUS,
    save_nli_model,
    sentences,
    synthetic_text,
    wordpiece_tokenizer,
)
from pydantic import ValidationError  # noqa: E402
from scipy.special import softmax  # noqa: E402

from assay.core.answers import Passage  # noqa: E402
from assay.decomposers import split_sentences  # noqa: E402
from assay.errors import ModelConfigError  # noqa: E402
from assay.models import ResponseCache  # noqa: E402
from assay.models._local_nli import PairRequest  # noqa: E402
from assay.verifiers import ClaimToVerify  # noqa: E402
from assay.verifiers._nli_kind import LocalNLIParams  # noqa: E402
from assay.verifiers._nli_local import LocalNLIVerifier  # noqa: E402
from assay.verifiers._relations import claim_tokens, lexicon_limitation  # noqa: E402

CLAIM = "Reducing salt intake lowered blood pressure in adults."
BIAS = [2.0, 0.0, -1.0]  # ENTAILMENT, NEUTRAL, CONTRADICTION


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("tiny-nli")


@pytest.fixture(scope="module")
def tok() -> Any:
    return wordpiece_tokenizer(sentences())


@pytest.fixture(scope="module")
def random_dir(root: Path, tok: Any) -> Path:
    return save_nli_model(root / "random", tok)


@pytest.fixture(scope="module")
def fixed_dir(root: Path, tok: Any) -> Path:
    return save_nli_model(root / "fixed", tok, classifier_bias=BIAS)


def _item(claim: str, *texts: str, **passage: Any) -> ClaimToVerify:
    evidence = [Passage(id=f"p{i}", text=t, **passage) for i, t in enumerate(texts)]
    return ClaimToVerify(claim_id="c", claim=claim, evidence=evidence)


async def test_every_window_is_a_pair_with_its_probabilities(random_dir: Path) -> None:
    nli = LocalNLIVerifier(f"hf-nli/{random_dir}", max_length=48, chunk_stride=8)
    texts = [synthetic_text(random.Random(4), 200), CORPUS[:400]]
    item = _item(CLAIM, *texts, doc_id="doc-9", page=4)
    chunks = nli.chunks(item)
    verdict = await nli.verify(item)
    assert len(verdict.pairs) == len(chunks) > 4
    per_passage = {"p0": 0, "p1": 0}
    tokens = claim_tokens(CLAIM)
    for pair, chunk in zip(verdict.pairs, chunks, strict=True):
        assert pair.chunk_id == f"{chunk.passage_id}#c{per_passage[chunk.passage_id]}"
        per_passage[chunk.passage_id] += 1
        assert (pair.passage_id, pair.start, pair.end) == (chunk.passage_id, *chunk.span)
        assert (pair.doc_id, pair.page, pair.span_id) == ("doc-9", 4, None)
        alone = nli.pair_probabilities([(chunk.text, CLAIM)], batch_size=1)[0]
        assert pair.p_entail == pytest.approx(alone["entailment"], abs=1e-5)
        assert pair.p_contradict == pytest.approx(alone["contradiction"], abs=1e-5)
        assert pair.p_neutral == pytest.approx(alone["neutral"], abs=1e-5)
        assert (pair.s_support, pair.s_conflict) == (pair.p_entail, pair.p_contradict)
        assert pair.s_limitation == lexicon_limitation(tokens, chunk.text)
        assert (pair.relation_source, pair.score_source) == ("nli", "nli_softmax")
    # the verdict is still the best window's entailment, pointing at that window
    best = max(verdict.pairs, key=lambda p: p.p_entail or 0.0)
    assert verdict.score == best.p_entail
    (use,) = verdict.evidence
    assert (use.passage_id, use.span) == (best.passage_id, (best.start, best.end))
    assert verdict.parsed is not None and verdict.parsed["chunks"] == len(verdict.pairs)


async def test_a_known_model_records_known_probabilities(fixed_dir: Path) -> None:
    nli = LocalNLIVerifier(f"hf-nli/{fixed_dir}", max_length=64)
    item = _item(CLAIM, CORPUS[:300], "Reduce salt only if blood pressure is high.")
    verdict = await nli.verify(item)
    expected = tuple(softmax(BIAS))  # every input: softmax of the classifier bias
    assert len(verdict.pairs) >= 2
    for pair in verdict.pairs:
        assert (pair.p_entail, pair.p_neutral, pair.p_contradict) == pytest.approx(
            expected, abs=1e-6
        )
    # "only if" in the last passage: limitation = the claim's overlap with that window
    last = verdict.pairs[-1]
    assert last.s_limitation == lexicon_limitation(claim_tokens(CLAIM), nli.chunks(item)[-1].text)
    assert last.s_limitation == 3 / 7  # salt, blood, pressure of 7 content tokens
    assert verdict.label is not None and verdict.label.value == "supported"  # 0.84 > 0.8


async def test_sentence_premises_carry_span_ids_and_offsets(random_dir: Path) -> None:
    text = " ".join(sentences()[:5])
    nli = LocalNLIVerifier(f"hf-nli/{random_dir}", max_length=128, premise="sentence")
    verdict = await nli.verify(_item(CLAIM, text))
    found = split_sentences(text)
    assert [p.span_id for p in verdict.pairs] == [f"p0#s{s.id}" for s in found]
    assert [text[p.start or 0 : p.end] for p in verdict.pairs] == [s.text for s in found]
    assert verdict.score == max(p.p_entail or 0.0 for p in verdict.pairs)
    assert nli.describe()["premise"] == "sentence"


async def test_a_sentence_longer_than_the_window_is_windowed_inside_it(random_dir: Path) -> None:
    long_sentence = synthetic_text(random.Random(9), 60).replace(".", "") + "."
    text = f"Salt matters. {long_sentence} Blood pressure fell."
    nli = LocalNLIVerifier(
        f"hf-nli/{random_dir}", max_length=48, chunk_stride=8, premise="sentence"
    )
    pairs = (await nli.verify(_item(CLAIM, text))).pairs
    inside = [p for p in pairs if p.span_id == "p0#s1"]
    assert len(inside) > 1 and [p.span_id for p in pairs].count("p0#s0") == 1
    start, end = text.index(long_sentence), text.index(long_sentence) + len(long_sentence)
    assert all(start <= (p.start or 0) < (p.end or 0) <= end for p in inside)
    assert len({p.chunk_id for p in pairs}) == len(pairs)


async def test_a_model_without_contradiction_leaves_it_null(root: Path, tok: Any) -> None:
    two = save_nli_model(root / "two", tok, id2label={0: "ENTAILMENT", 1: "NOT_ENTAILMENT"})
    (pair,) = (await LocalNLIVerifier(f"hf-nli/{two}").verify(_item(CLAIM, "Salt."))).pairs
    assert pair.p_contradict is None and pair.s_conflict is None
    assert pair.p_entail is not None and pair.p_neutral is not None
    assert math.isclose(pair.p_entail + pair.p_neutral, 1.0, abs_tol=1e-5)


async def test_claims_the_model_does_not_read_have_no_pair(random_dir: Path) -> None:
    nli = LocalNLIVerifier(f"hf-nli/{random_dir}", max_length=48)
    assert (await nli.verify(_item(CLAIM))).pairs == []
    too_long = await nli.verify(_item(synthetic_text(random.Random(1), 60), "Some evidence."))
    assert too_long.status.value == "truncated" and too_long.pairs == []


async def test_pairs_come_from_cache_entries_of_plain_pair_requests(
    random_dir: Path, tmp_path: Path
) -> None:
    """The cache key of a window is still that of its (premise, hypothesis) request: a
    cache filled by scoring the windows directly serves the whole verification."""
    settings: dict[str, Any] = {"max_length": 48, "chunk_stride": 8}
    item = _item(CLAIM, CORPUS[:300], "Salt intake fell in adults.")
    cache = ResponseCache(tmp_path / "cache")
    filler = LocalNLIVerifier(f"hf-nli/{random_dir}", cache=cache, **settings)
    requests = [PairRequest(premise=c.text, hypothesis=CLAIM) for c in filler.chunks(item)]
    await filler.classifier.complete_many(requests)
    again = LocalNLIVerifier(f"hf-nli/{random_dir}", cache=cache, **settings)
    cached = await again.verify(item)
    assert cached.cache_hit and again.stats["pairs"] == 0
    fresh = await LocalNLIVerifier(f"hf-nli/{random_dir}", **settings).verify(item)
    assert [p.model_dump() for p in cached.pairs] == [p.model_dump() for p in fresh.pairs]


async def test_batched_claims_get_the_pairs_they_get_alone(random_dir: Path) -> None:
    nli = LocalNLIVerifier(f"hf-nli/{random_dir}", max_length=48, chunk_stride=8, batch_size=3)
    rng = random.Random(5)
    items = [
        _item(synthetic_text(rng, 8), synthetic_text(rng, 50), synthetic_text(rng, 20))
        for _ in range(4)
    ]
    together = await nli.verify_many(items)
    for item, verdict in zip(items, together, strict=True):
        alone = await nli.verify(item)
        assert [(p.chunk_id, p.start, p.end) for p in verdict.pairs] == [
            (p.chunk_id, p.start, p.end) for p in alone.pairs
        ]
        for a, b in zip(verdict.pairs, alone.pairs, strict=True):
            assert a.p_entail == pytest.approx(b.p_entail, abs=1e-5)


def test_premise_setting_is_validated(random_dir: Path) -> None:
    assert LocalNLIParams(model="hf-nli/x").premise == "chunk"
    with pytest.raises(ValidationError):
        LocalNLIParams(model="hf-nli/x", premise="word")
    with pytest.raises(ModelConfigError, match="premise"):
        LocalNLIVerifier(f"hf-nli/{random_dir}", premise="word")  # type: ignore[arg-type]
    info = LocalNLIVerifier(f"hf-nli/{random_dir}").describe()
    assert info["premise"] == "chunk" and "relation-cues@1" in info["pairs"]["lexicons"]
