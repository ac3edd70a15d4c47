"""Local transformers models: the hf/ chat client and the hf-nli/ verifier.

Tiny models with random weights are built once per module (tests/_tiny_models.py) and
loaded through the real `from_pretrained` path, offline. Assertions are about
mechanics (batching, ordering, chunking, label mapping, decoding controls, cache),
never about what a random model predicts.
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import asyncio  # noqa: E402
import math  # noqa: E402
import random  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402

pytest.importorskip("torch")
pytest.importorskip("transformers")

from _tiny_models import (  # noqa: E402
    CORPUS,
    chat_tokenizer,
    save_causal_lm,
    save_nli_model,
    sentences,
    synthetic_text,
    wordpiece_tokenizer,
)

from assay.core.answers import Passage  # noqa: E402
from assay.core.outcomes import Status  # noqa: E402
from assay.errors import ModelConfigError  # noqa: E402
from assay.models import (  # noqa: E402
    ChatRequest,
    Decoding,
    LiteLLMTransport,
    LocalCausalTransport,
    Model,
    ModelConfig,
    ResponseCache,
    make_client,
)
from assay.prompts._prompt import Message  # noqa: E402
from assay.verifiers import ClaimToVerify, VerdictLabel, Verifier  # noqa: E402
from assay.verifiers._nli_local import LocalNLIVerifier, role_of_label  # noqa: E402

CLAIM = "Reducing salt intake lowered blood pressure in adults."


# ---- fixtures: every model is built once per module ----------------------------------


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("tiny-models")


@pytest.fixture(scope="module")
def nli_tok() -> Any:
    return wordpiece_tokenizer(sentences())


@pytest.fixture(scope="module")
def nli_dir(root: Path, nli_tok: Any) -> Path:
    return save_nli_model(root / "nli", nli_tok)


@pytest.fixture(scope="module")
def nli(nli_dir: Path) -> LocalNLIVerifier:
    """Random weights, short windows (max_length 48) so passages split into many chunks."""
    return LocalNLIVerifier(f"hf-nli/{nli_dir}", max_length=48, chunk_stride=8, batch_size=4)


@pytest.fixture(scope="module")
def chat_tok() -> Any:
    return chat_tokenizer(sentences())


@pytest.fixture(scope="module")
def lm_dir(root: Path, chat_tok: Any) -> Path:
    return save_causal_lm(root / "lm", chat_tok)  # never emits EOS


@pytest.fixture(scope="module")
def lm_eos_dir(root: Path, chat_tok: Any) -> Path:
    return save_causal_lm(root / "lm-eos", chat_tok, eos_bias=1e4)  # ends at once


@pytest.fixture(scope="module")
def lm(lm_dir: Path) -> Model[ChatRequest, Any]:
    client = make_client(ModelConfig(model=f"hf/{lm_dir}"))
    assert isinstance(client.transport, LocalCausalTransport)
    return client


def _item(claim: str, *texts: str, claim_id: str = "c") -> ClaimToVerify:
    return ClaimToVerify(
        claim_id=claim_id,
        claim=claim,
        evidence=[Passage(id=f"p{i}", text=t) for i, t in enumerate(texts)],
    )


def _request(text: str = "The quick brown fox", **decoding: Any) -> ChatRequest:
    return ChatRequest(
        messages=[
            Message(role="system", content="Answer briefly."),
            Message(role="user", content=text),
        ],
        decoding=Decoding(**decoding),
    )


# ---- import hygiene ----------------------------------------------------------------------


def test_importing_assay_loads_no_torch_transformers_or_sentence_transformers() -> None:
    code = (
        "import sys, assay, assay.models, assay.verifiers; "
        "from assay.models import LocalCausalTransport, LocalNLITransport; "
        "from assay.core.registry import TRANSPORTS; "
        "TRANSPORTS.get('hf'); TRANSPORTS.get('hf-nli'); "
        "assert not {'torch', 'transformers', 'sentence_transformers'} & set(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ---- NLI: batching, bucketing, order ----------------------------------------------------


def _varied_pairs(n: int, seed: int = 1) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    return [
        (synthetic_text(rng, rng.randint(3, 30)), synthetic_text(rng, rng.randint(3, 12)))
        for _ in range(n)
    ]


def _assert_close(a: list[dict[str, float]], b: list[dict[str, float]]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert x.keys() == y.keys()
        for role in x:
            assert math.isclose(x[role], y[role], abs_tol=1e-5), (x, y)


def test_batched_probabilities_equal_one_at_a_time_in_input_order(nli_dir: Path) -> None:
    pairs = _varied_pairs(23)
    # max_length 128: no pair is truncated, so lengths (and padding) really vary
    nli = LocalNLIVerifier(f"hf-nli/{nli_dir}", max_length=128)
    one = nli.pair_probabilities(pairs, batch_size=1)
    assert nli.stats["padded_tokens"] == nli.stats["tokens"]  # batch of one: no padding
    before = dict(nli.stats)
    batched = nli.pair_probabilities(pairs, batch_size=5)
    bucketed_padding = nli.stats["padded_tokens"] - before["padded_tokens"]
    _assert_close(batched, one)
    assert nli.stats["batches"] - before["batches"] == 5  # ceil(23 / 5)
    for probs in one:
        assert set(probs) == {"entailment", "neutral", "contradiction"}
        assert math.isclose(sum(probs.values()), 1.0, abs_tol=1e-5)
    # the same without length bucketing: same numbers, more padding
    plain = LocalNLIVerifier(f"hf-nli/{nli_dir}", max_length=128, length_bucketing=False)
    _assert_close(plain.pair_probabilities(pairs, batch_size=5), one)
    assert plain.stats["padded_tokens"] > bucketed_padding
    # reversing the input reverses the output: results follow the caller's order
    _assert_close(nli.pair_probabilities(pairs[::-1], batch_size=5), one[::-1])


async def test_verify_many_equals_verify_one_by_one(nli: LocalNLIVerifier) -> None:
    rng = random.Random(2)
    items = []
    for i in range(9):
        texts = [synthetic_text(rng, rng.randint(5, 90)) for _ in range(rng.randint(1, 3))]
        items.append(_item(synthetic_text(rng, rng.randint(4, 12)), *texts, claim_id=f"c{i}"))
    items.insert(4, _item("A claim with nothing to check against.", claim_id="empty"))
    items.append(items[0].model_copy(update={"claim_id": "dup"}))  # identical pairs
    many = await nli.verify_many(items)
    single = [await nli.verify(item) for item in items]
    assert len(many) == len(items)
    for a, b in zip(many, single, strict=True):
        assert a.status is b.status and a.label == b.label
        assert math.isclose(a.score or 0.0, b.score or 0.0, abs_tol=1e-5)
        assert [(e.passage_id, e.span) for e in a.evidence] == [
            (e.passage_id, e.span) for e in b.evidence
        ]
    assert many[4].error == "no evidence provided"
    assert many[-1].score == many[0].score
    assert await nli.verify_many([]) == []


async def test_concurrent_verify_calls_are_serialised_and_correct(nli: LocalNLIVerifier) -> None:
    items = [_item(CLAIM, s, claim_id=str(i)) for i, s in enumerate(sentences()[:6])]
    together = await asyncio.gather(*(nli.verify(i) for i in items))
    apart = await nli.verify_many(items)
    for a, b in zip(together, apart, strict=True):
        assert math.isclose(a.score or 0.0, b.score or 0.0, abs_tol=1e-5)


# ---- NLI: chunking and aggregation -------------------------------------------------------


def test_chunks_cover_the_passage_with_overlap_and_fit_the_model(
    nli: LocalNLIVerifier, nli_tok: Any
) -> None:
    long_text = synthetic_text(random.Random(3), 320)
    item = _item(CLAIM, long_text)
    chunks = nli.chunks(item)
    n_tokens = len(nli_tok(long_text, add_special_tokens=False)["input_ids"])
    assert len(chunks) > 5
    assert chunks[0].tokens[0] == 0 and chunks[-1].tokens[1] == n_tokens
    for prev, nxt in zip(chunks, chunks[1:], strict=False):
        assert prev.tokens[0] < nxt.tokens[0] < prev.tokens[1]  # moves on, with overlap
    for chunk in chunks:
        assert chunk.passage_id == "p0"
        assert long_text[chunk.span[0] : chunk.span[1]] == chunk.text
        pair = nli_tok(chunk.text, CLAIM)["input_ids"]
        assert len(pair) <= 48  # premise window + claim + [CLS]/[SEP]s fit max_length


async def test_score_is_the_max_over_chunks_and_evidence_points_at_it(
    nli: LocalNLIVerifier,
) -> None:
    texts = [synthetic_text(random.Random(4), 260), CORPUS[:180]]
    item = _item(CLAIM, *texts)
    chunks = nli.chunks(item)
    assert {c.passage_id for c in chunks} == {"p0", "p1"}
    # each chunk scored on its own, no batching at all
    per_chunk = [
        nli.pair_probabilities([(c.text, CLAIM)], batch_size=1)[0]["entailment"] for c in chunks
    ]
    verdict = await nli.verify(item)
    best = max(range(len(chunks)), key=per_chunk.__getitem__)
    assert verdict.status is Status.OK
    assert verdict.score is not None and math.isclose(verdict.score, per_chunk[best], abs_tol=1e-5)
    assert verdict.parsed is not None and verdict.parsed["chunks"] == len(chunks)
    assert verdict.label is VerdictLabel.UNSUPPORTED  # random weights: p ~ 1/3 < 0.8
    (use,) = verdict.evidence
    assert use.passage_id == chunks[best].passage_id and use.span == chunks[best].span
    passage = texts[int(use.passage_id[1:])]
    assert use.span is not None and 0 <= use.span[0] < use.span[1] <= len(passage)
    assert verdict.usage.prompt_tokens > 0


async def test_no_evidence_is_unsupported_with_a_reason(nli: LocalNLIVerifier) -> None:
    for item in (_item(CLAIM), _item(CLAIM, "", "   ")):
        v = await nli.verify(item)
        assert v.status is Status.OK and v.label is VerdictLabel.UNSUPPORTED
        assert v.score == 0.0 and v.error == "no evidence provided" and v.evidence == []


async def test_a_claim_too_long_for_the_window_is_truncated_not_judged(
    nli: LocalNLIVerifier,
) -> None:
    v = await nli.verify(_item(synthetic_text(random.Random(5), 40), "Some evidence."))
    assert v.status is Status.TRUNCATED and v.label is None and "tokens" in (v.error or "")


# ---- NLI: label mapping ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "role"),
    [
        ("ENTAILMENT", "entailment"),
        ("entailment", "entailment"),
        ("Entails", "entailment"),
        ("entail", "entailment"),
        ("CONTRADICTION", "contradiction"),
        ("contradicts", "contradiction"),
        ("Neutral", "neutral"),
        ("not_entailment", "neutral"),
        ("LABEL_0", None),
        ("yes", None),
    ],
)
def test_label_names_map_to_roles(name: str, role: str | None) -> None:
    assert role_of_label(name) == role


BIAS_HIGH = 6.0
P_HIGH = math.exp(BIAS_HIGH) / (math.exp(BIAS_HIGH) + 2)  # softmax([6, 0, 0])[0] ~ 0.995


def _fixed(index: int) -> list[float]:
    bias = [0.0, 0.0, 0.0]
    bias[index] = BIAS_HIGH
    return bias


async def test_permuted_lower_case_labels_are_read_from_the_config(
    root: Path, nli_tok: Any
) -> None:
    labels = {0: "contradiction", 1: "entailment", 2: "neutral"}
    entails = save_nli_model(root / "perm-e", nli_tok, id2label=labels, classifier_bias=_fixed(1))
    contradicts = save_nli_model(
        root / "perm-c", nli_tok, id2label=labels, classifier_bias=_fixed(0)
    )
    item = _item(CLAIM, "Salt intake fell and blood pressure fell.")
    v = await LocalNLIVerifier(f"hf-nli/{entails}").verify(item)
    assert v.label is VerdictLabel.SUPPORTED and math.isclose(v.score or 0, P_HIGH, abs_tol=1e-5)
    verifier = LocalNLIVerifier(f"hf-nli/{contradicts}")
    v = await verifier.verify(item)
    assert v.label is VerdictLabel.CONTRADICTED
    assert math.isclose(v.evidence[0].score or 0, P_HIGH, abs_tol=1e-5)
    assert v.score is not None and v.score < 0.01  # score stays the entailment probability
    info = verifier.describe()
    assert info["labels"]["entailment"] == {"index": 1, "name": "entailment"}
    assert info["labels"]["contradiction"]["index"] == 0 and info["label_source"] == "config"


async def test_generic_labels_need_an_explicit_label_map(root: Path, nli_tok: Any) -> None:
    generic = {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}
    path = save_nli_model(root / "generic", nli_tok, id2label=generic, classifier_bias=_fixed(2))
    with pytest.raises(ModelConfigError, match=r"LABEL_0.*LABEL_1.*LABEL_2.*label_map"):
        LocalNLIVerifier(f"hf-nli/{path}").preflight()
    mapped = LocalNLIVerifier(
        f"hf-nli/{path}", label_map={"contradiction": 0, "neutral": 1, "entailment": 2}
    )
    v = await mapped.verify(_item(CLAIM, "Some evidence."))
    assert v.label is VerdictLabel.SUPPORTED
    assert mapped.describe()["label_source"] == "label_map"
    for bad in ({"neutral": 1}, {"entailment": 7}, {"entails": 0}):
        with pytest.raises(ModelConfigError):
            LocalNLIVerifier(f"hf-nli/{path}", label_map=bad).preflight()


async def test_threshold_decides_between_supported_and_unsupported(
    root: Path, nli_tok: Any
) -> None:
    flat = save_nli_model(root / "flat", nli_tok, classifier_bias=[0.0, 0.0, 0.0])  # p = 1/3
    item = _item(CLAIM, "Some evidence.")
    low = await LocalNLIVerifier(f"hf-nli/{flat}", threshold=0.3).verify(item)
    high = await LocalNLIVerifier(f"hf-nli/{flat}").verify(item)
    assert low.label is VerdictLabel.SUPPORTED and high.label is VerdictLabel.UNSUPPORTED
    assert math.isclose(high.score or 0, 1 / 3, abs_tol=1e-5)


def test_nli_errors_and_description(nli: LocalNLIVerifier, lm_dir: Path, root: Path) -> None:
    missing = root / "does-not-exist"
    with pytest.raises(ModelConfigError, match="does-not-exist"):
        LocalNLIVerifier(f"hf-nli/{missing}").preflight()
    with pytest.raises(ModelConfigError, match="not a sequence-classification"):
        LocalNLIVerifier(f"hf-nli/{lm_dir}").preflight()
    assert isinstance(nli, Verifier)
    info = nli.describe()
    assert info["kind"] == "nli-local" and info["threshold"] == 0.8
    assert info["max_length"] == 48 and info["chunk_stride"] == 8 and info["batch_size"] == 4
    assert info["versions"]["torch"] and len(info["fingerprint"]) == 64


# ---- hf/ chat client ---------------------------------------------------------------------


def test_make_client_dispatches_by_provider(lm_dir: Path) -> None:
    client = make_client(ModelConfig(model=f"hf/{lm_dir}"))
    assert isinstance(client.transport, LocalCausalTransport)
    assert client.transport._model is None  # lazy
    with pytest.raises(ModelConfigError, match="hf-nli models are verifiers, not chat models"):
        make_client(ModelConfig(model=f"hf-nli/{lm_dir}"))
    with pytest.raises(ModelConfigError, match="extra_body"):
        make_client(ModelConfig(model=f"hf/{lm_dir}", extra_body={"top_k": 5}))
    with pytest.raises(ModelConfigError, match="api_base"):
        make_client(ModelConfig(model=f"hf/{lm_dir}", api_base="http://localhost:1/v1"))
    litellm = ModelConfig(model="openai/x", transport="litellm")  # "auto": the lean client
    assert isinstance(make_client(litellm).transport, LiteLLMTransport)


async def test_chat_template_is_applied(lm: Model[ChatRequest, Any], chat_tok: Any) -> None:
    request = _request("The quick brown fox", max_tokens=3)
    text = lm.transport.render(request)  # type: ignore[attr-defined]
    assert text == (
        "<|system|>Answer briefly.<|end|><|user|>The quick brown fox<|end|><|assistant|>"
    )
    result = await lm.complete(request)
    assert result.response is not None
    n_prompt = len(chat_tok(text, add_special_tokens=False)["input_ids"])
    assert result.response.usage.prompt_tokens == n_prompt
    assert result.response.usage.total_tokens == n_prompt + 3
    assert result.response.model_returned == str(lm.transport.path)  # type: ignore[attr-defined]


async def test_greedy_is_deterministic_and_max_tokens_means_length(
    lm: Model[ChatRequest, Any],
) -> None:
    first = await lm.complete(_request(max_tokens=8))
    second = await lm.complete(_request(max_tokens=8))
    assert first.response is not None and second.response is not None
    assert first.response.content == second.response.content
    assert first.response.content  # plain words: special tokens are never generated
    assert first.response.finish_reason == "length"
    assert first.response.usage.completion_tokens == 8


async def test_seeded_sampling_repeats(lm: Model[ChatRequest, Any]) -> None:
    a = await lm.complete(_request(max_tokens=8, temperature=1.0, seed=7))
    b = await lm.complete(_request(max_tokens=8, temperature=1.0, seed=7))
    assert a.response is not None and b.response is not None
    assert a.response.content == b.response.content


async def test_stop_strings_cut_the_output_and_end_generation(lm: Model[ChatRequest, Any]) -> None:
    full = await lm.complete(_request(max_tokens=12))
    assert full.response is not None and full.response.content
    text = full.response.content
    stop = " " + text.split()[3]
    stopped = await lm.complete(_request(max_tokens=12, stop=[stop, "never-there"]))
    assert stopped.response is not None
    assert stopped.response.content == text[: text.find(stop)]
    assert stopped.response.finish_reason == "stop"
    assert stopped.response.usage.completion_tokens < 12  # generation ended early


async def test_eos_means_stop(lm_eos_dir: Path) -> None:
    client = make_client(ModelConfig(model=f"hf/{lm_eos_dir}"))
    result = await client.complete(_request(max_tokens=5))
    assert result.response is not None
    assert result.response.content == "" and result.response.finish_reason == "stop"
    assert result.response.usage.completion_tokens == 1


async def test_cache_hits_and_uncacheable_truncations(lm_dir: Path, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache")
    client = make_client(ModelConfig(model=f"hf/{lm_dir}"), cache)
    probe = await client.complete(_request(max_tokens=6), use_cache=False)
    assert probe.response is not None and probe.response.content
    stop = [probe.response.content.split()[2]]
    first = await client.complete(_request(max_tokens=6, stop=stop))
    second = await client.complete(_request(max_tokens=6, stop=stop))
    assert first.response is not None and first.response.finish_reason == "stop"
    assert not first.cache_hit and second.cache_hit and second.attempts == 0
    assert second.response == first.response
    refreshed = await client.complete(_request(max_tokens=6, stop=stop), refresh_cache=True)
    assert not refreshed.cache_hit
    # finish_reason "length" is never cached, like the hosted client
    await client.complete(_request(max_tokens=6))
    again = await client.complete(_request(max_tokens=6))
    assert not again.cache_hit and again.response is not None
    assert again.response.finish_reason == "length"


async def test_context_window_is_enforced(lm: Model[ChatRequest, Any]) -> None:
    words = " ".join(["salt"] * 150)  # the tiny model has 128 positions
    too_long = await lm.complete(_request(words, max_tokens=4))
    assert too_long.response is None and too_long.error_type == "ContextWindowExceededError"
    near = await lm.complete(_request(" ".join(["salt"] * 110), max_tokens=50))
    assert near.response is not None and near.response.finish_reason == "length"
    assert near.response.usage.total_tokens == 128


async def test_load_errors_name_the_path(root: Path, chat_tok: Any, nli_dir: Path) -> None:
    missing = root / "no-such-model"
    client = make_client(ModelConfig(model=f"hf/{missing}"))
    with pytest.raises(ModelConfigError, match="no-such-model"):
        client.preflight()
    with pytest.raises(ModelConfigError, match="no-such-model"):
        await client.complete(_request())
    assert client.describe()["fingerprint"] is None  # describing never raises
    hub = make_client(ModelConfig(model="hf/assay-tests/not-downloaded"))
    with pytest.raises(ModelConfigError, match="never downloads"):
        hub.preflight()
    # a model directory whose tokenizer has no chat template
    plain = root / "lm-no-template"
    shutil.copytree(root / "lm", plain, dirs_exist_ok=True)
    chat_tokenizer(sentences(), chat_template=None).save_pretrained(plain)
    (plain / "chat_template.jinja").unlink(missing_ok=True)
    with pytest.raises(ModelConfigError, match="no chat template"):
        make_client(ModelConfig(model=f"hf/{plain}")).preflight()
    with pytest.raises(ModelConfigError, match="not a causal language model"):
        make_client(ModelConfig(model=f"hf/{nli_dir}")).preflight()


def test_describe_and_fingerprint(
    lm: Model[ChatRequest, Any], lm_dir: Path, lm_eos_dir: Path
) -> None:
    lm.preflight()
    info = lm.describe()
    assert info["kind"] == "local-causal" and info["model"] == f"hf/{lm_dir}"
    assert info["resolved_path"] == str(lm_dir.resolve()) and info["device"] == "cpu"
    assert len(info["fingerprint"]) == 64 and len(info["chat_template_sha256"]) == 64
    assert info["versions"]["transformers"]
    other = make_client(ModelConfig(model=f"hf/{lm_eos_dir}"))
    # a different checkpoint is a different cache identity, whatever its path
    assert other.describe()["fingerprint"] != info["fingerprint"]
    assert other.cache_key(_request()) != lm.cache_key(_request())


# ---- NLI through the Model layers: cache and accounting ---------------------------------


async def test_nli_second_identical_run_is_all_cache_hits(nli_dir: Path, tmp_path: Path) -> None:
    rng = random.Random(6)
    items = [
        _item(
            synthetic_text(rng, 6),
            synthetic_text(rng, 40),
            synthetic_text(rng, 15),
            claim_id=f"c{i}",
        )
        for i in range(5)
    ]
    settings: dict[str, Any] = {"max_length": 48, "chunk_stride": 8, "batch_size": 4}
    plain = await LocalNLIVerifier(f"hf-nli/{nli_dir}", **settings).verify_many(items)
    cache = ResponseCache(tmp_path / "cache")
    first_verifier = LocalNLIVerifier(f"hf-nli/{nli_dir}", cache=cache, **settings)
    first = await first_verifier.verify_many(items)
    assert not any(v.cache_hit for v in first) and all(v.attempts == 1 for v in first)
    scored = first_verifier.stats["pairs"]
    assert scored > len(items)  # every claim has several chunks
    # a new verifier (as in a second run) on the same cache: nothing reaches the model
    again = LocalNLIVerifier(f"hf-nli/{nli_dir}", cache=cache, **settings)
    second = await again.verify_many(items)
    assert all(v.cache_hit and v.attempts == 0 for v in second)
    assert again.stats["pairs"] == 0 and again.transport._model is None  # never loaded
    assert again.classifier.accounting.cache_hits == scored
    for a, b, c in zip(plain, first, second, strict=True):  # the cache changes no result
        assert a.label == b.label == c.label and a.evidence == b.evidence == c.evidence
        assert math.isclose(a.score or 0, c.score or 0, abs_tol=1e-6)
        assert a.usage == b.usage == c.usage and a.parsed == c.parsed
    # refresh re-scores and overwrites; no-cache neither reads nor writes
    fresh = LocalNLIVerifier(f"hf-nli/{nli_dir}", cache=cache, refresh_cache=True, **settings)
    assert not any(v.cache_hit for v in await fresh.verify_many(items))
    assert fresh.stats["pairs"] == scored
    off = LocalNLIVerifier(f"hf-nli/{nli_dir}", cache=cache, use_cache=False, **settings)
    assert not any(v.cache_hit for v in await off.verify_many(items))


async def test_nli_cache_key_changes_with_the_window(nli_dir: Path, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache")
    item = _item(CLAIM, CORPUS[:200])
    await LocalNLIVerifier(f"hf-nli/{nli_dir}", max_length=64, cache=cache).verify(item)
    other = LocalNLIVerifier(f"hf-nli/{nli_dir}", max_length=96, cache=cache)
    verdict = await other.verify(item)
    assert not verdict.cache_hit and other.stats["pairs"] > 0  # truncation differs: new keys


async def test_nli_inference_failure_is_an_api_error_per_claim(
    nli: LocalNLIVerifier, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = LocalNLIVerifier(f"hf-nli/{nli.transport.files.path}", max_length=48)
    fresh.preflight()

    def broken(*args: Any) -> Any:
        raise RuntimeError("device lost")

    monkeypatch.setattr(fresh.transport, "_probabilities", broken)
    verdicts = await fresh.verify_many([_item(CLAIM, "Some evidence."), _item(CLAIM)])
    assert verdicts[0].status is Status.API_ERROR
    assert verdicts[0].error == "RuntimeError: device lost" and verdicts[0].label is None
    assert verdicts[1].status is Status.OK and verdicts[1].error == "no evidence provided"
    assert fresh.classifier.accounting.errors == 1
