"""The local NLI transport (`hf-nli/<dir or hub id>`): a sequence-classification model
scoring (premise, hypothesis) pairs, many per call, through sentence-transformers'
`CrossEncoder` (tokenise, pad, forward, softmax).

Batches are length-bucketed here (by exact token length) and dynamically padded, which is
where CPU throughput comes from; this module also keeps what CrossEncoder does not know:
the label names, the truncation limit that goes into cache keys, and per-pair lengths.
Which class means entailment is the verifier's business (assay.verifiers); this transport
returns the model's class probabilities in its own label order.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from assay.core.outcomes import Usage
from assay.errors import ModelConfigError
from assay.models._cache import CACHE_SCHEMA_VERSION, canonical_json
from assay.models._config import ModelConfig
from assay.models._hf import (
    LocalModelFiles,
    LocalOptions,
    SerialGate,
    library_versions,
    load_cross_encoder,
)
from assay.models._quantize import describe_quantization, quantized_fingerprint
from assay.models._ray_pool import ChunkRunner
from assay.models._transport import TransportError

PROVIDER = "hf-nli"
_HUGE = 1_000_000  # transformers' "no limit" model_max_length is ~1e30


class PairRequest(BaseModel):
    """One (premise, hypothesis) pair to classify."""

    model_config = ConfigDict(frozen=True)

    premise: str
    hypothesis: str


class PairScores(BaseModel):
    """The model's class probabilities for one pair (label order of the model's config),
    and the pair's length in tokens after truncation."""

    probabilities: list[float]
    tokens: int

    @property
    def usage(self) -> Usage:
        return Usage(prompt_tokens=self.tokens, total_tokens=self.tokens)


class LocalNLITransport:
    """Scores premise/hypothesis pairs with a local NLI model, one batch call at a time.

    `max_length` caps a pair (further capped by the model's own limit); `batch_size` pairs
    go through the model at once. A model that cannot be loaded raises
    `ModelConfigError`; a failure during inference is the batch's `TransportError`.
    `provider` and `activation` let another pair model reuse this engine (the hf-ce
    reranker: raw logits instead of softmax probabilities). `extra_body.quantize =
    "int8"` (hf-nli only, CPU only) runs the Linear layers in int8: a model of its own,
    with its own fingerprint and cache keys.
    """

    request_type: ClassVar[type[BaseModel]] = PairRequest
    response_type = PairScores
    max_concurrency = 1
    not_chat = (
        "hf-nli models are verifiers, not chat models; use them as a verifier "
        "(assay.verifiers.LocalNLIVerifier({model!r}))"
    )

    def __init__(
        self,
        config: ModelConfig,
        *,
        max_length: int = 512,
        batch_size: int = 32,
        length_bucketing: bool = True,
        provider: str = PROVIDER,
        activation: Literal["softmax", "identity"] = "softmax",
    ) -> None:
        self.provider = provider
        self.activation: Literal["softmax", "identity"] = activation
        options = LocalOptions(config, provider, quantizable=provider == PROVIDER)
        self.config = config
        self.path = options.path
        self.files = LocalModelFiles(options.path, config.model)
        self.device_option = options.device or "cpu"
        self.dtype = options.dtype
        self.quantize = options.quantize
        self.max_length = max_length
        self.batch_size = batch_size
        self.length_bucketing = length_bucketing
        self.stats = {"pairs": 0, "batches": 0, "tokens": 0, "padded_tokens": 0}
        self.gate = SerialGate()
        self._load_lock = threading.Lock()
        self._key_prefix: bytes | None = None
        self._tokenizer: Any = None
        self._id2label: dict[int, str] = {}
        self._limit = max_length
        self._model: Any = None
        self._device: str | None = None
        # set (assay.models._ray_workers): model calls go to Ray actors, not this process
        self.batch_runner: ChunkRunner | None = None

    # ---- loading -------------------------------------------------------------------
    def _load_tokenizer(self) -> None:
        """Config, labels and tokenizer: cheap, and enough to describe, chunk and key."""
        with self._load_lock:
            if self._tokenizer is not None:
                return
            model_id = self.config.model
            config = self.files.config("sequence-classification")
            tokenizer = self.files.tokenizer()
            if not getattr(tokenizer, "is_fast", False):
                raise ModelConfigError(
                    f"model {model_id!r}: needs a fast (tokenizers) tokenizer for offsets"
                )
            if tokenizer.pad_token_id is None:
                raise ModelConfigError(
                    f"model {model_id!r}: the tokenizer has no pad token; batching needs one"
                )
            limit = self.max_length
            for cap in (
                getattr(tokenizer, "model_max_length", None),
                getattr(config, "max_position_embeddings", None),
            ):
                if isinstance(cap, int) and 0 < cap < _HUGE:
                    limit = min(limit, cap)
            self._id2label = {int(k): str(v) for k, v in (config.id2label or {}).items()}
            self._limit, self._tokenizer = limit, tokenizer

    def _load_model(self) -> None:
        self._load_tokenizer()
        if self.batch_runner is not None:
            self.batch_runner.start()  # the actors load the model
            return
        with self._load_lock:
            if self._model is not None:
                return
            self._model, self._device = load_cross_encoder(
                self.files,
                self.device_option,
                self.dtype,
                max_length=self._limit,
                activation=self.activation,
                quantize=self.quantize,
            )

    def preflight(self) -> None:
        """Load now, so a bad path or model fails before the first pair."""
        self._load_model()

    def tokenizer(self) -> Any:
        self._load_tokenizer()
        return self._tokenizer

    def labels(self) -> dict[int, str]:
        """The model's output index -> label name, from its config."""
        self._load_tokenizer()
        return dict(self._id2label)

    def limit(self) -> int:
        """Tokens a pair may have: `max_length` capped by the model's own limit."""
        self._load_tokenizer()
        return self._limit

    # ---- identity ------------------------------------------------------------------
    def fingerprint(self) -> str:
        """The checkpoint's fingerprint, or, for a quantised model, that of the model the
        quantisation makes of it (records and cache keys never mix the two)."""
        source = self.files.fingerprint()
        return source if self.quantize is None else quantized_fingerprint(source, self.quantize)

    def describe(self) -> dict[str, Any]:
        directory, source = self.files.identity()
        fingerprint = source
        quantize: dict[str, Any] = {}
        if self.quantize is not None:
            fingerprint = source and quantized_fingerprint(source, self.quantize)
            quantize = {"quantize": describe_quantization(self.quantize, source)}
        return {
            "kind": self.provider,
            "model": self.config.model,
            "path": self.path,
            "resolved_path": directory,
            "fingerprint": fingerprint,
            "max_length": self.max_length,
            "effective_max_length": self._limit,
            "batch_size": self.batch_size,
            "length_bucketing": self.length_bucketing,
            "device": self._device or self.device_option,
            "dtype": self.dtype,
            **quantize,
            "scorer": "sentence_transformers.CrossEncoder",
            "versions": library_versions("sentence-transformers"),
        }

    def key_prefix(self) -> bytes:
        """What every cache key of this model starts with: the transport, the model's
        fingerprint, the truncation limit, device, dtype and quantisation (absent for full
        precision, so full-precision keys are what they always were)."""
        if self._key_prefix is None:
            options: dict[str, Any] = {"device": self.device_option, "dtype": self.dtype}
            if self.quantize is not None:
                options["quantize"] = self.quantize
            identity = {
                "cache_schema": CACHE_SCHEMA_VERSION,
                "transport": self.provider,
                "model": self.config.model,
                "fingerprint": self.fingerprint(),
                "max_length": self.limit(),
                "extra_body": options,
            }
            self._key_prefix = canonical_json(identity).encode() + b"\0"
        return self._key_prefix

    def cache_key(self, request: PairRequest) -> str:
        """SHA-256 over the model's fingerprint, the truncation limit, device, dtype and
        quantisation, and the pair: a new checkpoint, a shorter window or an int8 model
        never reuses old scores."""
        pair = canonical_json([request.premise, request.hypothesis]).encode()
        return hashlib.sha256(self.key_prefix() + pair).hexdigest()

    # ---- inference -----------------------------------------------------------------
    def score_pairs(
        self, pairs: Sequence[tuple[str, str]], batch_size: int | None = None
    ) -> tuple[list[list[float]], list[int]]:
        """Class probabilities and token length of each (premise, hypothesis), in input
        order (blocking, uncached). Pairs longer than the limit are truncated, longest
        sequence first."""
        self._load_model()
        return self.gate.call(self._probabilities, pairs, batch_size or self.batch_size)

    def _probabilities(
        self, pairs: Sequence[tuple[str, str]], batch_size: int
    ) -> tuple[list[list[float]], list[int]]:
        """Pairs are sorted by token length (when bucketing) so each batch is padded only
        to its own longest member; each batch is one CrossEncoder.predict call (which
        tokenises, pads, runs the model and soft-maxes); results go back in caller order."""
        if not pairs:
            return [], []
        enc = self._tokenizer(
            [p for p, _ in pairs],
            [h for _, h in pairs],
            truncation="longest_first",
            max_length=self._limit,
        )
        lengths = [len(ids) for ids in enc["input_ids"]]
        order = list(range(len(pairs)))
        if self.length_bucketing:
            order.sort(key=lambda i: lengths[i])
        batches = [order[start : start + batch_size] for start in range(0, len(order), batch_size)]
        out: list[list[float]] = [[] for _ in pairs]
        chunks = [[pairs[i] for i in rows] for rows in batches]
        for rows, probs in zip(batches, self._predict_chunks(chunks), strict=True):
            for r, row_probs in zip(rows, probs, strict=True):
                out[r] = row_probs
            self.stats["batches"] += 1
            self.stats["padded_tokens"] += max(lengths[i] for i in rows) * len(rows)
        self.stats["pairs"] += len(pairs)
        self.stats["tokens"] += sum(lengths)
        return out, lengths

    def _predict_chunks(self, chunks: list[list[tuple[str, str]]]) -> list[list[list[float]]]:
        if self.batch_runner is not None:
            return self.batch_runner.map(chunks)
        return [self.predict_rows(chunk) for chunk in chunks]

    def predict_rows(self, pairs: Sequence[tuple[str, str]]) -> list[list[float]]:
        """One model call (CrossEncoder.predict: tokenise, pad, forward, activation) over
        one batch: the unit a Ray actor runs, so both paths give the same floats."""
        probs = self._model.predict(
            list(pairs), batch_size=len(pairs), convert_to_tensor=True, show_progress_bar=False
        )
        rows: list[list[float]] = probs.reshape(len(pairs), -1).tolist()
        return rows

    def _score(self, requests: Sequence[PairRequest]) -> list[PairScores]:
        self._load_model()
        pairs = [(r.premise, r.hypothesis) for r in requests]
        probs, lengths = self._probabilities(pairs, self.batch_size)
        return [PairScores(probabilities=p, tokens=n) for p, n in zip(probs, lengths, strict=True)]

    async def send_batch(self, requests: Sequence[PairRequest]) -> list[PairScores]:
        """All pairs in one worker-thread call, batched and bucketed together."""
        return await score_in_worker(self.gate, self._score, requests)

    async def send(self, request: PairRequest) -> PairScores:
        return (await self.send_batch([request]))[0]


_Req = TypeVar("_Req")
_Out = TypeVar("_Out")


async def score_in_worker(
    gate: SerialGate, score: Callable[[Sequence[_Req]], list[_Out]], requests: Sequence[_Req]
) -> list[_Out]:
    """Run a local model's batch scoring on the worker thread; a configuration error stays
    itself, any inference failure becomes the batch's final (recorded) transport error."""
    try:
        return await gate.run(score, requests)
    except ModelConfigError:
        raise
    except Exception as exc:
        raise TransportError.final(exc) from exc
