"""A `TransformersEmbedder`'s model in Ray actors (`[executor] kind = "ray"`).

Each actor builds the same embedder in its own process (same directory, pooling, batch
size, truncation, torch threads) and embeds whole lists: sentence-transformers sorts a
list by length before cutting it into batches, so a list split differently would be
padded differently and its floats could move; sent whole, it is embedded exactly as in
this process.

The recipe and the pool live in `assay.retrieval._dense`, beside the embedder they
rebuild, so the two modules do not import each other; they are re-exported here.
"""

from __future__ import annotations

from assay.retrieval._dense import EmbedderRecipe as EmbedderRecipe
from assay.retrieval._dense import embedder_pool as embedder_pool
