"""Dense retrieval: an embedder protocol, a local sentence-transformers embedder, cosine
search.

sentence-transformers, torch and transformers (the optional `local` extra) are imported
only when a `TransformersEmbedder` is built, never when this module loads. One built
inside a run with `[executor] kind = "ray"` loads its model in Ray actors instead
(`EmbedderRecipe`, `embedder_pool` below) and sends each `embed` list there whole, so the vectors
are those of this process.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from assay.errors import ModelConfigError
from assay.models._ray_options import actor_threads
from assay.models._ray_pool import Placement, RayBatchPool, ray_placement
from assay.retrieval._corpus import Corpus, Hit, check_k, make_hits, top_k
from assay.retrieval._normalise import describe_normalization


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


def _load_local(path: Path, pooling: str, max_length: int, device: str) -> Any:
    """A SentenceTransformer from a local directory, never the network.

    A saved sentence-transformers model (``modules.json``) loads with its own pooling; a
    plain Hugging Face encoder gets Transformer → Pooling(`pooling`) → Normalize.
    """
    try:
        from sentence_transformers import SentenceTransformer
        from sentence_transformers.sentence_transformer.modules import (
            Normalize,
            Pooling,
            Transformer,
        )
    except ImportError as exc:
        raise ModelConfigError(
            f"TransformersEmbedder needs sentence-transformers ({exc.name} is missing); "
            "install the 'local' extra: pip install 'assay[local]'"
        ) from None
    if (path / "modules.json").is_file():
        model = SentenceTransformer(str(path), device=device, local_files_only=True)
        model.max_seq_length = max_length
        return model
    local = {"local_files_only": True}
    encoder = Transformer(
        str(path),
        max_seq_length=max_length,
        model_kwargs=local,
        processor_kwargs=local,
        config_kwargs=local,
    )
    pool = Pooling(encoder.get_embedding_dimension(), pooling_mode=pooling)
    return SentenceTransformer(modules=[encoder, pool, Normalize()], device=device)


class TransformersEmbedder:
    """A local encoder run by sentence-transformers (no network).

    Texts are truncated to `max_length` tokens and encoded in batches of `batch_size`
    (sentence-transformers sorts by length to limit padding; output keeps input order).
    For a plain Hugging Face encoder directory `pooling="mean"` averages the last hidden
    states over non-padding tokens and `"cls"` takes the first token; a saved
    sentence-transformers model keeps its own pooling. Rows are L2-normalised. The
    embeddings equal assay 0.1's hand-written mean/CLS pooling to ~1e-8
    (tests/test_libraries_dense.py).
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
        self.model_dir = path.resolve()
        self.batch_size = batch_size
        self.max_length = max_length
        self.device = device
        self._sha256: str | None = None
        self._model: Any = None
        # set when built for a Ray run: the model lives in its actors, not here
        self.runner: RayBatchPool | None = None
        placement = ray_placement()
        if placement is None:
            self._model = _load_local(self.model_dir, pooling, max_length, device)
            self._model.eval()
            info = self.model_info(pooling)
        else:
            self.runner = embedder_pool(self, pooling, placement)
            info = self.runner.call(None)
        self.pooling, self.dim, self.model_type = info["pooling"], info["dim"], info["model_type"]

    def model_info(self, pooling: str) -> dict[str, Any]:
        """What the loaded model says of itself: its pooling (a saved sentence-transformers
        model keeps its own), dimension and model type."""
        pool = next((m for m in self._model if hasattr(m, "pooling_mode")), None)
        encoder = getattr(self._model[0], "auto_model", None)
        return {
            "pooling": str(pool.pooling_mode) if pool is not None else pooling,
            "dim": int(self._model.get_embedding_dimension()),
            "model_type": getattr(getattr(encoder, "config", None), "model_type", None),
        }

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self.runner is not None:  # the whole list in one call, sorted there as here
            return np.asarray(self.runner.call(list(texts)), dtype=np.float32)
        out = self._model.encode(
            list(texts),
            batch_size=self.batch_size,
            convert_to_numpy=True,
            show_progress_bar=False,
            normalize_embeddings=True,
        )
        return np.asarray(out, dtype=np.float32)

    @property
    def model_sha256(self) -> str:
        """Hash of every file in the model directory (computed once, on first use)."""
        if self._sha256 is None:
            self._sha256 = _hash_dir(self.model_dir)
        return self._sha256

    def describe(self) -> dict[str, Any]:
        from importlib.metadata import version

        return {
            "kind": self.kind,
            "model_dir": str(self.model_dir),
            "model_sha256": self.model_sha256,
            "model_type": self.model_type,
            "dim": self.dim,
            "pooling": self.pooling,
            "normalize": "l2",
            "max_length": self.max_length,
            "batch_size": self.batch_size,
            "library": {
                "name": "sentence-transformers",
                "version": version("sentence-transformers"),
            },
            "torch": version("torch"),
            "transformers": version("transformers"),
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
    score_normalization = "cosine"

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
            "score_normalization": describe_normalization(self.score_normalization),
        }

    def __repr__(self) -> str:
        return f"DenseRetriever(embedder={type(self.embedder).__name__}, corpus={self._corpus!r})"


@dataclass(frozen=True)
class EmbedderRecipe:
    """A `TransformersEmbedder` as configured here, rebuilt in an actor: `None` asks for
    its `model_info`, a list of texts for their embeddings."""

    model_dir: str
    pooling: str
    batch_size: int
    max_length: int
    device: str
    threads: int

    def __call__(self) -> Callable[[list[str] | None], Any]:
        import torch

        torch.set_num_threads(self.threads)
        embedder = TransformersEmbedder(
            self.model_dir,
            pooling=self.pooling,
            batch_size=self.batch_size,
            max_length=self.max_length,
            device=self.device,
        )

        def run(texts: list[str] | None) -> Any:
            return embedder.model_info(self.pooling) if texts is None else embedder.embed(texts)

        return run


def embedder_pool(
    embedder: TransformersEmbedder, pooling: str, placement: Placement
) -> RayBatchPool:
    """The actors that embed for `embedder` (started by its first call), shared with every
    embedder of the same model and settings in the run."""
    recipe = EmbedderRecipe(
        str(embedder.model_dir),
        pooling,
        embedder.batch_size,
        embedder.max_length,
        embedder.device,
        threads=actor_threads(placement.options),
    )
    return placement.pool(recipe, f"dense:{embedder.model_dir}")
