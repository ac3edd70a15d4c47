"""The hf-nli transport scores pairs with sentence-transformers' CrossEncoder; these tests
pin that it gives the probabilities of the hand-written path it replaced (tokenise with
longest-first truncation, sort by token length, pad each batch on the right, forward,
softmax), truncated pairs included, and that a verifier run gives the same verdicts.
"""

from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"

import random  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from collections.abc import Sequence  # noqa: E402
from importlib import metadata  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import pytest  # noqa: E402

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("sentence_transformers")

from _tiny_models import save_nli_model, sentences, synthetic_text, wordpiece_tokenizer  # noqa: E402

from assay.core.answers import Passage  # noqa: E402
from assay.models import LocalNLITransport  # noqa: E402
from assay.verifiers import ClaimToVerify  # noqa: E402
from assay.verifiers._nli_local import LocalNLIVerifier  # noqa: E402

TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def nli_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("crossencoder")
    return save_nli_model(root / "nli", wordpiece_tokenizer(sentences()))


def previous_probabilities(
    transport: LocalNLITransport, pairs: Sequence[tuple[str, str]], batch_size: int
) -> tuple[list[list[float]], list[int]]:
    """The transport's scoring before CrossEncoder, in plain transformers: the same
    tokenizer, limit and weights, length-bucketed batches padded on the right."""
    import torch
    from transformers import AutoModelForSequenceClassification

    tokenizer, limit = transport.tokenizer(), transport.limit()
    model = AutoModelForSequenceClassification.from_pretrained(transport.files.directory()).eval()
    enc = tokenizer(
        [p for p, _ in pairs],
        [h for _, h in pairs],
        truncation="longest_first",
        max_length=limit,
    )
    lengths = [len(ids) for ids in enc["input_ids"]]
    order = sorted(range(len(pairs)), key=lambda i: lengths[i])
    out: list[list[float]] = [[] for _ in pairs]
    with torch.inference_mode():
        for start in range(0, len(order), batch_size):
            rows = order[start : start + batch_size]
            features = [{k: enc[k][i] for k in enc} for i in rows]
            batch = tokenizer.pad(features, padding=True, return_tensors="pt")
            logits = model(**batch).logits.float()
            for r, probs in zip(rows, torch.softmax(logits, dim=-1).tolist(), strict=True):
                out[r] = probs
    return out, lengths


def _pairs(n: int, seed: int, longest: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    return [
        (synthetic_text(rng, rng.randint(3, longest)), synthetic_text(rng, rng.randint(3, 14)))
        for _ in range(n)
    ]


def _max_difference(a: list[list[float]], b: list[list[float]]) -> float:
    assert [len(x) for x in a] == [len(y) for y in b]
    return max(abs(x - y) for xs, ys in zip(a, b, strict=True) for x, y in zip(xs, ys, strict=True))


@pytest.mark.parametrize(("max_length", "longest"), [(128, 30), (48, 90)])
def test_crossencoder_probabilities_equal_the_previous_path(
    nli_dir: Path, max_length: int, longest: int
) -> None:
    """(128, 30): no pair truncated, lengths vary; (48, 90): most pairs truncated."""
    transport = LocalNLIVerifier(f"hf-nli/{nli_dir}", max_length=max_length).transport
    pairs = _pairs(37, seed=max_length, longest=longest)
    new, new_lengths = transport.score_pairs(pairs, batch_size=8)
    old, old_lengths = previous_probabilities(transport, pairs, batch_size=8)
    assert new_lengths == old_lengths
    truncated = sum(n == transport.limit() for n in new_lengths)
    assert (truncated > len(pairs) // 2) if max_length == 48 else truncated == 0
    difference = _max_difference(new, old)
    print(f"max |p_crossencoder - p_previous| = {difference:.3g} (max_length {max_length})")
    assert difference <= TOLERANCE
    assert type(transport._model).__name__ == "CrossEncoder"


async def test_a_verifier_run_gives_the_same_verdicts(
    nli_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(5)
    items = [
        ClaimToVerify(
            claim_id=f"c{i}",
            claim=synthetic_text(rng, rng.randint(5, 12)),
            evidence=[
                Passage(id=f"p{j}", text=synthetic_text(rng, rng.randint(10, 80)))
                for j in range(rng.randint(1, 3))
            ],
        )
        for i in range(8)
    ]
    settings: dict[str, Any] = {"max_length": 48, "chunk_stride": 8, "batch_size": 4}
    new = await LocalNLIVerifier(f"hf-nli/{nli_dir}", threshold=0.3, **settings).verify_many(items)
    previous = LocalNLIVerifier(f"hf-nli/{nli_dir}", threshold=0.3, **settings)
    previous.preflight()
    monkeypatch.setattr(
        previous.transport,
        "_probabilities",
        lambda pairs, batch_size: previous_probabilities(previous.transport, pairs, batch_size),
    )
    old = await previous.verify_many(items)
    assert len({v.label for v in new}) > 1  # the threshold splits them: labels are tested
    for a, b in zip(new, old, strict=True):
        assert (a.status, a.label, a.evidence, a.usage) == (b.status, b.label, b.evidence, b.usage)
        assert abs((a.score or 0.0) - (b.score or 0.0)) <= TOLERANCE


def test_describe_records_the_library_and_its_version(nli_dir: Path) -> None:
    info = LocalNLIVerifier(f"hf-nli/{nli_dir}").transport.describe()
    assert info["scorer"] == "sentence_transformers.CrossEncoder"
    assert info["versions"]["sentence-transformers"] == metadata.version("sentence-transformers")


def test_sentence_transformers_is_imported_only_when_the_model_loads(nli_dir: Path) -> None:
    code = (
        "import sys, assay, assay.verifiers\n"
        "from assay.verifiers._nli_local import LocalNLIVerifier\n"
        f"v = LocalNLIVerifier('hf-nli/{nli_dir}')\n"
        "v.transport.describe(); v.transport.limit()\n"
        "assert 'sentence_transformers' not in sys.modules\n"
        "v.preflight()\n"
        "assert 'sentence_transformers' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
