"""What a Ray actor builds for each kind of local model (see `assay.models._ray_pool`).

A recipe is plain picklable data: the actor rebuilds the same transport from the same
settings, loads the model there, and scores chunks with the very function the in-process
path calls, so the same rows give the same floats, given the same number of torch threads:
float32 sums are split differently across threads, which can move a score by one bit in
its last place. An actor uses as many threads as the CPUs it reserves (at least one).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from assay.models._config import ModelConfig
from assay.models._local_causal import LocalCausalTransport
from assay.models._local_nli import LocalNLITransport
from assay.models._ray_options import ExecutorOptions
from assay.models._ray_pool import Placement, RayBatchPool

PairChunk = Sequence[tuple[str, str]]
CausalCall = Callable[[Any], Any]  # a ChatRequest -> its RawResponse; None -> loaded_identity()


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


def actor_threads(options: ExecutorOptions) -> int:
    """Torch threads in an actor: as many as the CPUs it reserves, at least one."""
    return max(1, int(options.num_cpus))


@dataclass(frozen=True)
class CausalModelRecipe:
    """A local causal LM (hf/) as configured here; the actor generates each request with
    the in-process `generate` (same weights, same decoding settings)."""

    config: ModelConfig
    threads: int

    def __call__(self) -> CausalCall:
        import torch

        torch.set_num_threads(self.threads)
        transport = LocalCausalTransport(self.config)  # an actor builds it in-process
        transport.preflight()

        def run(request: Any) -> Any:
            return transport.loaded_identity() if request is None else transport.generate(request)

        return run


def causal_pool(config: ModelConfig, placement: Placement) -> RayBatchPool:
    """The actors that generate a causal LM's requests (started on first use)."""
    recipe = CausalModelRecipe(config, threads=actor_threads(placement.options))
    return placement.pool(recipe, config.model)
