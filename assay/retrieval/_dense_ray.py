"""A `TransformersEmbedder`'s model in Ray actors (`[executor] kind = "ray"`).

Each actor builds the same embedder in its own process (same directory, pooling, batch
size, truncation, torch threads) and embeds whole lists: sentence-transformers sorts a
list by length before cutting it into batches, so a list split differently would be
padded differently and its floats could move; sent whole, it is embedded exactly as in
this process.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assay.models._ray_pool import Placement, RayBatchPool
from assay.models._ray_workers import actor_threads

if TYPE_CHECKING:
    from assay.retrieval._dense import TransformersEmbedder


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

        from assay.retrieval._dense import TransformersEmbedder

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
