"""The two ways a gate scores its (question, passage) pairs, behind one interface.

`CrossEncoderPairs` runs a local `hf-ce/` cross-encoder through a `Model` (response
cache, retries, accounting) and maps its raw logits to [0, 1] with the gate's named
normalisation. `LexicalPairs` (`baseline:overlap`) needs no model and no
`local` extra: a pair's score is the share of the question's content tokens found in
the passage, from the frozen `tokens@1` lexicon. It is a pure function of the pair and
that lexicon, cheaper than a cache lookup, so it is not cached: every record says
`cache_hit: false`, and a resumed run still skips the questions already recorded.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from assay.core.records import GateReranker
from assay.errors import SpecError
from assay.judges._baseline_lexicons import lexicon_digest
from assay.models import Model, ModelConfig, ModelResult, ResponseCache
from assay.models._cache import canonical_json
from assay.models._local_ce import LocalRerankerTransport, RerankRequest, RerankScore
from assay.retrieval import normalise_scores
from assay.runs.spec._gate import BASELINE_RERANKER, GateSpec
from assay.verifiers._relations import TOKENS_LEXICON, claim_tokens, overlap_share


@dataclass(frozen=True)
class PassagePair:
    """One (question, passage text) pair to score; equal pairs are scored once."""

    query: str
    passage: str


@dataclass(frozen=True)
class Scored:
    """A pair's raw output (a logit; None for the baseline or a failure), its score in
    [0, 1] (None when it failed) and why it failed."""

    logit: float | None
    score: float | None
    error: str | None = None
    cache_hit: bool = False


class PairScorer(Protocol):
    """What the gate needs from a reranker."""

    def preflight(self) -> None: ...

    def identity(self) -> GateReranker: ...

    def describe(self) -> dict[str, Any]: ...

    async def score(self, pairs: Sequence[PassagePair]) -> list[Scored]: ...


class LexicalPairs:
    """`baseline:overlap`: the question's content tokens found in the passage, as a share."""

    version = "1"

    def preflight(self) -> None:
        """Nothing to load."""

    def fingerprint(self) -> str:
        """SHA-256 of the scorer's version and its token lexicon's digest: a changed word
        list or formula is a different reranker in the records and the manifests."""
        described = {"version": self.version, "lexicons": lexicon_digest((TOKENS_LEXICON,))}
        return hashlib.sha256(canonical_json(described).encode()).hexdigest()

    def identity(self) -> GateReranker:
        return GateReranker(
            model=BASELINE_RERANKER, model_sha256=self.fingerprint(), normalization="identity"
        )

    def describe(self) -> dict[str, Any]:
        return {
            "kind": "baseline-overlap",
            "model": BASELINE_RERANKER,
            "version": self.version,
            "fingerprint": self.fingerprint(),
            "score": "share of the question's content tokens found in the passage title and text",
            "lexicons": lexicon_digest((TOKENS_LEXICON,)),
            "activation": "identity",
            "outputs": "score",
        }

    async def score(self, pairs: Sequence[PassagePair]) -> list[Scored]:
        return [Scored(None, overlap_share(claim_tokens(p.query), p.passage)) for p in pairs]


class CrossEncoderPairs:
    """An `hf-ce/` cross-encoder: raw logits through the cached `Model`, then the gate's
    normalisation (identity on a value outside [0, 1] is a one-line error)."""

    def __init__(
        self,
        spec: GateSpec,
        *,
        spec_path: str | None,
        cache: ResponseCache | None,
        use_cache: bool,
        refresh_cache: bool,
    ) -> None:
        self.spec = spec
        self.spec_path = spec_path
        self.transport = LocalRerankerTransport(
            ModelConfig(model=spec.model), max_length=spec.max_length, batch_size=spec.batch_size
        )
        self.model: Model[RerankRequest, RerankScore] = Model(self.transport, cache)
        self.use_cache = use_cache
        self.refresh_cache = refresh_cache

    def preflight(self) -> None:
        self.transport.preflight()

    def identity(self) -> GateReranker:
        return GateReranker(
            model=self.spec.model,
            model_sha256=self.transport.fingerprint(),
            max_length=self.transport.limit(),
            normalization=self.spec.normalization,
        )

    def describe(self) -> dict[str, Any]:
        return self.transport.describe()

    async def score(self, pairs: Sequence[PassagePair]) -> list[Scored]:
        requests = [RerankRequest(query=p.query, passage=p.passage) for p in pairs]
        results = await self.model.complete_many(
            requests, use_cache=self.use_cache, refresh_cache=self.refresh_cache
        )
        return self.scored(results)

    def scored(self, results: Sequence[ModelResult[RerankScore]]) -> list[Scored]:
        """Each result's logit and normalised score; a missing or non-finite logit is
        that pair's error."""
        logits = [_finite(r.response.logit) if r.response is not None else None for r in results]
        scores = iter(self._normalised([v for v in logits if v is not None]))
        out = []
        for result, logit in zip(results, logits, strict=True):
            if result.response is None:
                out.append(Scored(None, None, result.error or "reranker failed"))
            elif logit is None:
                out.append(Scored(None, None, "the reranker returned a non-finite score"))
            else:
                out.append(Scored(logit, next(scores), cache_hit=result.cache_hit))
        return out

    def _normalised(self, logits: list[float]) -> list[float]:
        try:
            return normalise_scores(logits, self.spec.normalization)
        except ValueError as exc:
            raise SpecError(
                f'{exc} from reranker {self.spec.model!r}; use normalization = "sigmoid"',
                file=self.spec_path,
                field="gate.normalization",
            ) from None


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def pair_scorer(
    spec: GateSpec,
    *,
    spec_path: str | None = None,
    cache: ResponseCache | None = None,
    use_cache: bool = True,
    refresh_cache: bool = False,
) -> PairScorer:
    """The gate's reranker: the lexical baseline, or the cross-encoder its model names."""
    if not spec.local_model:
        return LexicalPairs()
    return CrossEncoderPairs(
        spec,
        spec_path=spec_path,
        cache=cache,
        use_cache=use_cache,
        refresh_cache=refresh_cache,
    )
