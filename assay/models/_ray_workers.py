"""What a Ray actor builds for each kind of local model (see `assay.models._ray_pool`).

A recipe is plain picklable data: the actor rebuilds the same transport from the same
settings, loads the model there, and scores chunks with the very function the in-process
path calls, so the same rows give the same floats, given the same number of torch threads:
float32 sums are split differently across threads, which can move a score by one bit in
its last place. An actor uses as many threads as the CPUs it reserves (at least one).

The causal LM's recipe lives in `assay.models._local_causal`, beside the transport it
rebuilds (so that module need not import this one); it is re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from assay.models._config import ModelConfig
from assay.models._local_causal import CausalCall as CausalCall
from assay.models._local_causal import CausalModelRecipe as CausalModelRecipe
from assay.models._local_causal import causal_pool as causal_pool
from assay.models._local_nli import LocalNLITransport
from assay.models._ray_options import ExecutorOptions, actor_threads
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
    threads: int

    @classmethod
    def of(cls, transport: LocalNLITransport, threads: int) -> PairModelRecipe:
        return cls(
            config=transport.config,
            max_length=transport.max_length,
            batch_size=transport.batch_size,
            length_bucketing=transport.length_bucketing,
            provider=transport.provider,
            activation=transport.activation,
            threads=threads,
        )

    def __call__(self) -> Callable[[PairChunk], list[list[float]]]:
        import torch

        torch.set_num_threads(self.threads)
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
    recipe = PairModelRecipe.of(transport, threads=actor_threads(options))
    pool = RayBatchPool(options, recipe, name=transport.config.model)
    transport.batch_runner = pool
    return pool
