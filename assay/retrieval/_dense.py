"""Dense retrieval: an embedder protocol, a local transformers embedder, cosine search.

torch and transformers (the optional `local` extra) are imported only inside
`TransformersEmbedder`, never when this module loads.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from assay.errors import ModelConfigError
from assay.retrieval._corpus import Corpus, Hit, check_k, make_hits, top_k


@runtime_checkable
class Embedder(Protocol):
    """Maps texts to one L2-normalised row each: shape (len(texts), dim)."""

    def embed(self, texts: list[str]) -> NDArray[np.floating[Any]]: ...

    def describe(self) -> dict[str, Any]: ...


def _normalise(matrix: NDArray[Any], expected_rows: int) -> NDArray[np.float32]:
    m = np.asarray(matrix, dtype=np.float32)
    if m.ndim != 2 or m.shape[0] != expected_rows:
        raise ValueError(f"embedder returned shape {m.shape}, expected ({expected_rows}, dim)")
    if not np.all(np.isfinite(m)):
        raise ValueError("embedder returned non-finite values")
    norms: NDArray[np.float32] = np.linalg.norm(m, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: NDArray[np.float32] = (m / norms).astype(np.float32, copy=False)
    return out


def _hash_dir(root: Path) -> str:
    """SHA-256 over the relative paths and bytes of every file under `root`."""
    digest = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if not p.is_file() or any(part.startswith(".") for part in rel.parts):
            continue
        digest.update(rel.as_posix().encode("utf-8") + b"\0")
        with p.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
        digest.update(b"\0")
    return digest.hexdigest()


class TransformersEmbedder:
    """A Hugging Face encoder loaded from a local directory (no network).

    Texts are truncated to `max_length` tokens and run in batches of `batch_size`
    (sorted by length to limit padding; output keeps input order) under
    `torch.inference_mode()`. `pooling="mean"` averages the last hidden states over
    non-padding tokens; `"cls"` takes the first token. Rows are L2-normalised.
    """

    kind = "transformers"

    def __init__(
        self,
        model_dir: str | Path,
        *,
        pooling: str = "mean",
        batch_size: int = 32,
        max_length: int = 256,
        device: str = "cpu",
    ) -> None:
        if pooling not in ("mean", "cls"):
            raise ValueError(f"pooling must be 'mean' or 'cls', got {pooling!r}")
        if batch_size < 1 or max_length < 1:
            raise ValueError("batch_size and max_length must be positive")
        path = Path(model_dir).expanduser()
        if not path.is_dir():
            raise ModelConfigError("embedding model directory not found", file=path)
        try:
            import torch
            from transformers import AutoModel, AutoTokenizer
        except ImportError as exc:
            raise ModelConfigError(
                f"TransformersEmbedder needs torch and transformers ({exc.name} is missing); "
                "install the 'local' extra: pip install 'assay[local]'"
            ) from None
        self.model_dir = path.resolve()
        self.pooling = pooling
        self.batch_size = batch_size
        self.max_length = max_length
        self.device = device
        self._torch_version = str(torch.__version__)
        self._tokenizer: Any = AutoTokenizer.from_pretrained(
            str(self.model_dir), local_files_only=True
        )
        self._model: Any = AutoModel.from_pretrained(str(self.model_dir), local_files_only=True)
        self._model.eval()
        self._model.to(device)
        self.dim = int(self._model.config.hidden_size)
        self._sha256: str | None = None

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        import torch

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                idx = order[start : start + self.batch_size]
                enc = self._tokenizer(
                    [texts[i] for i in idx],
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                ).to(self.device)
                hidden = self._model(**enc).last_hidden_state
                if self.pooling == "cls":
                    pooled = hidden[:, 0]
                else:
                    mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                    pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
                pooled = torch.nn.functional.normalize(pooled.float(), p=2.0, dim=1)
                out[idx] = pooled.cpu().numpy()
        return out

    @property
    def model_sha256(self) -> str:
        """Hash of every file in the model directory (computed once, on first use)."""
        if self._sha256 is None:
            self._sha256 = _hash_dir(self.model_dir)
        return self._sha256

    def describe(self) -> dict[str, Any]:
        import transformers

        return {
            "kind": self.kind,
            "model_dir": str(self.model_dir),
            "model_sha256": self.model_sha256,
            "model_type": getattr(self._model.config, "model_type", None),
            "dim": self.dim,
            "pooling": self.pooling,
            "normalize": "l2",
            "max_length": self.max_length,
            "batch_size": self.batch_size,
            "torch": self._torch_version,
            "transformers": str(transformers.__version__),
        }


class DenseRetriever:
    """Cosine similarity (dot product of L2-normalised rows) against every passage.

    The passage matrix is embedded once, at construction, and kept in memory. Passages
    are embedded as `passage_prefix + title + "\\n" + text` (title when present) and
    queries as `query_prefix + query`; set the prefixes for models trained with them
    (E5: "query: " / "passage: "). Every passage gets a score, so a search returns
    min(k, len(corpus)) hits; ties keep corpus order.
    """

    kind = "dense"

    def __init__(
        self,
        corpus: Corpus,
        embedder: Embedder,
        *,
        query_prefix: str = "",
        passage_prefix: str = "",
    ) -> None:
        self._corpus = corpus
        self.embedder = embedder
        self.query_prefix = query_prefix
        self.passage_prefix = passage_prefix
        texts = [
            passage_prefix + (f"{p.title}\n{p.text}" if p.title else p.text)
            for p in corpus.passages
        ]
        self._matrix = _normalise(embedder.embed(texts), len(texts))
        self._matrix.setflags(write=False)

    @property
    def corpus(self) -> Corpus:
        return self._corpus

    @property
    def matrix(self) -> NDArray[np.float32]:
        """The (read-only) passage embeddings, one L2-normalised row per passage."""
        return self._matrix

    def _rank(self, query_vec: NDArray[np.float32], k: int) -> list[Hit]:
        scores = (self._matrix @ query_vec).astype(np.float64)
        ids = np.arange(len(scores), dtype=np.int64)
        return make_hits(self._corpus, top_k(ids, scores, k))

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """The `k` passages most similar to `query`; [] for a blank query."""
        return self.search_many([query], k)[0]

    def search_many(self, queries: Sequence[str], k: int = 10) -> list[list[Hit]]:
        """One batched embedding call for all non-blank queries, then `search` each."""
        check_k(k)
        live = [i for i, q in enumerate(queries) if q.strip()]
        results: list[list[Hit]] = [[] for _ in queries]
        if not live:
            return results
        vecs = _normalise(
            self.embedder.embed([self.query_prefix + queries[i] for i in live]), len(live)
        )
        for row, i in enumerate(live):
            results[i] = self._rank(vecs[row], k)
        return results

    def describe(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "similarity": "cosine",
            "query_prefix": self.query_prefix,
            "passage_prefix": self.passage_prefix,
            "fields": ["title", "text"],
            "embedder": self.embedder.describe(),
            "corpus": self._corpus.describe(),
        }

    def __repr__(self) -> str:
        return f"DenseRetriever(embedder={type(self.embedder).__name__}, corpus={self._corpus!r})"
