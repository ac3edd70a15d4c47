"""TransformersEmbedder on sentence-transformers gives assay 0.1's embeddings.

A tiny random BERT is built in a temp dir (tokenizer trained here) and loaded offline
through the real loading code. The reference is assay 0.1's hand-written pooling on
plain transformers (below): masked mean or first token, then L2 normalisation.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).parent))
from _tiny_models import save_encoder, sentences  # noqa: E402

from assay.retrieval import TransformersEmbedder  # noqa: E402

TEXTS = [*sentences()[:6], "", "unseen zyzzyva words", "Coffee " * 80]


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    pytest.importorskip("sentence_transformers")
    out = save_encoder(tmp_path_factory.mktemp("tiny-encoder"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield out


def _reference(model_dir: Path, texts: list[str], pooling: str, max_length: int) -> NDArray[Any]:
    """assay 0.1's TransformersEmbedder.embed, one text at a time."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    model = AutoModel.from_pretrained(str(model_dir), local_files_only=True).eval()
    rows = []
    with torch.inference_mode():
        for text in texts:
            enc = tok([text], truncation=True, max_length=max_length, return_tensors="pt")
            hidden = model(**enc).last_hidden_state
            mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            pooled = hidden[:, 0] if pooling == "cls" else mean
            rows.append(torch.nn.functional.normalize(pooled, p=2.0, dim=1)[0].numpy())
    return np.stack(rows)


@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_embeddings_equal_the_previous_pooling(tiny_encoder: Path, pooling: str) -> None:
    embedder = TransformersEmbedder(tiny_encoder, pooling=pooling, batch_size=3, max_length=48)
    got = embedder.embed(TEXTS)
    assert got.shape == (len(TEXTS), 32) and got.dtype == np.float32
    expected = _reference(tiny_encoder, TEXTS, pooling, max_length=48)
    assert np.abs(got - expected).max() < 1e-5
    assert embedder.pooling == pooling


def test_saved_sentence_transformers_model_keeps_its_pooling(
    tiny_encoder: Path, tmp_path: Path
) -> None:
    cls = TransformersEmbedder(tiny_encoder, pooling="cls", max_length=48)
    saved = tmp_path / "st-model"
    cls._model.save(str(saved))
    assert (saved / "modules.json").is_file()
    loaded = TransformersEmbedder(saved, max_length=48)  # pooling="mean" is not applied
    assert loaded.pooling == "cls"
    assert np.abs(loaded.embed(TEXTS) - cls.embed(TEXTS)).max() < 1e-6


def test_describe_names_library_and_versions(tiny_encoder: Path) -> None:
    from importlib.metadata import version

    d = TransformersEmbedder(tiny_encoder, batch_size=4, max_length=32).describe()
    assert d["library"] == {
        "name": "sentence-transformers",
        "version": version("sentence-transformers"),
    }
    assert d["torch"] == version("torch") and d["transformers"] == version("transformers")
    assert d["model_type"] == "bert" and d["dim"] == 32 and d["pooling"] == "mean"
    json.dumps(d)
