"""The local reranker transport (`hf-ce/<dir or hub id>`): a cross-encoder with one
output scoring (query, passage) pairs, many per call, as raw logits.

It runs on the local pair-model engine of `hf-nli` (`LocalNLITransport`: length-bucketed
batches through sentence-transformers' `CrossEncoder`) with the identity activation, so
the recorded number is the model's logit whatever activation its config would apply by
default; mapping it to [0, 1] is the caller's named normalisation.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from assay.core.outcomes import Usage
from assay.errors import ModelConfigError
from assay.models._cache import canonical_json
from assay.models._config import ModelConfig
from assay.models._hf import SerialGate
from assay.models._local_nli import LocalNLITransport, score_in_worker

PROVIDER = "hf-ce"


class RerankRequest(BaseModel):
    """One (query, passage) pair to score, in the order rerankers are trained on."""

    model_config = ConfigDict(frozen=True)

    query: str
    passage: str


class RerankScore(BaseModel):
    """The model's raw output (a logit) for one pair and the pair's length in tokens
    after truncation."""

    logit: float
    tokens: int

    @property
    def usage(self) -> Usage:
        return Usage(prompt_tokens=self.tokens, total_tokens=self.tokens)


class LocalRerankerTransport:
    """Scores query/passage pairs with a local one-output cross-encoder.

    A model with more than one output class is refused (a reranker's score is one
    number); a model that cannot be loaded raises `ModelConfigError`; a failure during
    inference is the batch's `TransportError`.
    """

    request_type: ClassVar[type[BaseModel]] = RerankRequest
    response_type = RerankScore
    max_concurrency = 1
    not_chat = (
        "hf-ce models are rerankers, not chat models; use one as the [gate] block's "
        "model ({model!r})"
    )

    def __init__(
        self,
        config: ModelConfig,
        *,
        max_length: int = 512,
        batch_size: int = 32,
        length_bucketing: bool = True,
    ) -> None:
        self.config = config
        self.pairs = LocalNLITransport(
            config,
            max_length=max_length,
            batch_size=batch_size,
            length_bucketing=length_bucketing,
            provider=PROVIDER,
            activation="identity",
        )
        self.gate = SerialGate()

    @property
    def stats(self) -> dict[str, int]:
        """Pairs, batches, tokens and padded tokens the model has scored (not cached)."""
        return self.pairs.stats

    def fingerprint(self) -> str:
        return self.pairs.files.fingerprint()

    def limit(self) -> int:
        """Tokens a pair may have: `max_length` capped by the model's own limit."""
        return self.pairs.limit()

    def check_outputs(self) -> None:
        """Refuse a classifier with several outputs before any pair is scored."""
        labels = self.pairs.labels()
        if len(labels) != 1:
            raise ModelConfigError(
                f"model {self.config.model!r}: a reranker has one output (num_labels = 1); "
                f"this model has {len(labels)} ({', '.join(labels.values())})"
            )

    def preflight(self) -> None:
        """Load now, so a bad path or a model that is not a reranker fails early."""
        self.check_outputs()
        self.pairs.preflight()

    def describe(self) -> dict[str, Any]:
        return {**self.pairs.describe(), "activation": "identity", "outputs": "logit"}

    def cache_key(self, request: RerankRequest) -> str:
        """SHA-256 over the model's fingerprint, truncation limit, device and dtype, and
        the pair (`hf-ce` keys never meet `hf-nli` ones: the transport is in the key)."""
        pair = canonical_json([request.query, request.passage]).encode()
        return hashlib.sha256(self.pairs.key_prefix() + pair).hexdigest()

    def _score(self, requests: Sequence[RerankRequest]) -> list[RerankScore]:
        self.check_outputs()
        outputs, lengths = self.pairs.score_pairs([(r.query, r.passage) for r in requests])
        return [
            RerankScore(logit=row[0], tokens=n) for row, n in zip(outputs, lengths, strict=True)
        ]

    async def send_batch(self, requests: Sequence[RerankRequest]) -> list[RerankScore]:
        """All pairs in one worker-thread call, batched and bucketed together."""
        return await score_in_worker(self.gate, self._score, requests)

    async def send(self, request: RerankRequest) -> RerankScore:
        return (await self.send_batch([request]))[0]
