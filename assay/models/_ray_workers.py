"""What a Ray actor builds for each kind of local model (see `assay.models._ray_pool`).

A recipe is plain picklable data: the actor rebuilds the same transport from the same
settings, loads the model there, and scores chunks with the very function the in-process
path calls, so the same rows give the same floats.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from assay.models._config import ModelConfig
from assay.models._local_nli import LocalNLITransport
from assay.models._ray_options import ExecutorOptions
from assay.models._ray_pool import RayBatchPool

PairChunk = Sequence[tuple[str, str]]


@dataclass(frozen=True)
class PairModelRecipe:
    """A local pair model (hf-nli, hf-ce) as its transport was configured here."""

    config: ModelConfig
    max_length: int
    batch_size: int
    length_bucketing: bool
    provider: str
    activation: Literal["softmax", "identity"]

    @classmethod
    def of(cls, transport: LocalNLITransport) -> PairModelRecipe:
        return cls(
            config=transport.config,
            max_length=transport.max_length,
            batch_size=transport.batch_size,
            length_bucketing=transport.length_bucketing,
            provider=transport.provider,
            activation=transport.activation,
        )

    def __call__(self) -> Callable[[PairChunk], list[list[float]]]:
        transport = LocalNLITransport(
            self.config,
            max_length=self.max_length,
            batch_size=self.batch_size,
            length_bucketing=self.length_bucketing,
            provider=self.provider,
            activation=self.activation,
        )
        transport.preflight()
        return transport.predict_rows


def run_pair_model_on_ray(transport: LocalNLITransport, options: ExecutorOptions) -> RayBatchPool:
    """Send this transport's model calls to Ray actors from now on; returns the pool."""
    pool = RayBatchPool(options, PairModelRecipe.of(transport), name=transport.config.model)
    transport.batch_runner = pool
    return pool
