"""A local transformers NLI model as a verifier (`hf-nli/<dir or hub id>`).

Premise = an evidence passage (split into overlapping chunks that fit the model),
hypothesis = the claim. The pairs go through a `Model` over the local NLI transport
(assay.models), so they share the response cache and call accounting with every other
model: a second identical run is served from the cache. torch/transformers are imported
only on first use.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from assay.core.answers import Passage
from assay.core.outcomes import Status, Usage
from assay.core.verification import ClaimToVerify, EvidenceUse, Verdict, VerdictLabel
from assay.errors import ModelConfigError
from assay.models import Model, ModelConfig, ModelResult, ResponseCache
from assay.models._local_nli import PROVIDER, LocalNLITransport, PairRequest, PairScores
from assay.verifiers._nli_chunks import EvidenceChunk, PassageChunker, Premise, token_windows
from assay.verifiers._nli_labels import ROLES, resolve_label_roles, role_of_label
from assay.verifiers._pairs import nli_pairs
from assay.verifiers._relations import NLI_FORMULAS, describe_relations
from assay.verifiers._relations import claim_tokens as content_token_set

__all__ = [
    "NO_EVIDENCE",
    "PROVIDER",
    "ROLES",
    "EvidenceChunk",
    "LocalNLIVerifier",
    "resolve_label_roles",
    "role_of_label",
    "token_windows",
]

NO_EVIDENCE = "no evidence provided"


@dataclass
class _Plan:
    """One claim's share of a call: its chunks and their rows in the pair list."""

    chunks: list[EvidenceChunk]
    rows: list[int]
    tokens: frozenset[str]  # the claim's content tokens (limitation scores)
    passages: dict[str, Passage]  # by id: each pair's doc_id and page
    dropped: int = 0  # premises beyond max_premises, never scored


def _check_settings(
    model: str,
    threshold: float,
    max_length: int,
    chunk_tokens: int | None,
    stride: int,
    batch: int,
    max_premises: int | None = None,
) -> None:
    if not 0.0 <= threshold < 1.0:
        raise ModelConfigError(f"model {model!r}: threshold must be in [0, 1)")
    if max_length < 16:
        raise ModelConfigError(f"model {model!r}: max_length must be at least 16")
    if chunk_tokens is not None and chunk_tokens < 8:
        raise ModelConfigError(f"model {model!r}: chunk_tokens must be at least 8")
    if stride < 0 or batch < 1:
        raise ModelConfigError(f"model {model!r}: chunk_stride must be >= 0 and batch_size >= 1")
    if max_premises is not None and max_premises < 1:
        raise ModelConfigError(f"model {model!r}: max_premises must be at least 1")


class LocalNLIVerifier:
    """Labels claims with a local NLI (sequence-classification) model.

    Verdict rules, per claim over all chunks of all its passages: `score` = the highest
    entailment probability; `supported` when that exceeds `threshold`; otherwise
    `contradicted` when some chunk's most likely class is contradiction with probability
    above `threshold`; otherwise `unsupported`. A claim with no evidence text is
    `unsupported` with score 0 and error "no evidence provided" (status ok: nothing
    failed, there is just nothing to support it).

    `cache` (with `use_cache`/`refresh_cache`, as for LLM components) stores each scored
    pair; a claim whose pairs all come from the cache is a cache hit with 0 attempts.

    Premises are token windows of each passage (`premise="chunk"`) or its sentences
    (`"sentence"`, offsets in code points). Every scored window is recorded in the
    verdict's `pairs` with its three probabilities and a lexicon limitation score.
    `max_premises` caps the premises scored per claim (the first ones, in passage and
    window order); the rest are never scored and counted in `pairs_dropped_by_cap`.
    `quantize="int8"` (opt-in, CPU only) runs the Linear layers in int8: faster, a
    different model (its own fingerprint and cache keys), scores close to but not equal.
    """

    version = "1"

    def __init__(
        self,
        model: str,
        *,
        cache: ResponseCache | None = None,
        use_cache: bool = True,
        refresh_cache: bool = False,
        label_map: Mapping[str, int] | None = None,
        threshold: float = 0.8,
        max_length: int = 512,
        chunk_tokens: int | None = None,
        chunk_stride: int = 128,
        batch_size: int = 32,
        length_bucketing: bool = True,
        device: str = "cpu",
        dtype: str | None = None,
        quantize: str | None = None,
        premise: Premise = "chunk",
        max_premises: int | None = None,
        name: str | None = None,
    ) -> None:
        path = model.split("/", 1)[1] if model.startswith(f"{PROVIDER}/") else model
        if not path:
            raise ModelConfigError(f"model {model!r}: expected hf-nli/<directory or hub id>")
        self.model = f"{PROVIDER}/{path}"
        self.path = path
        _check_settings(
            self.model, threshold, max_length, chunk_tokens, chunk_stride, batch_size, max_premises
        )
        self.max_premises = max_premises
        options = {"device": device, "dtype": dtype, "quantize": quantize}
        config = ModelConfig(
            model=f"{PROVIDER}/{path.rstrip('/') or path}",
            extra_body={k: v for k, v in options.items() if v is not None},
        )
        self.transport = LocalNLITransport(
            config, max_length=max_length, batch_size=batch_size, length_bucketing=length_bucketing
        )
        self.classifier: Model[PairRequest, PairScores] = Model(self.transport, cache)
        self.label_map = dict(label_map) if label_map is not None else None
        self.threshold = threshold
        self.max_length = max_length
        self.chunk_tokens = chunk_tokens
        self.chunk_stride = chunk_stride
        self.batch_size = batch_size
        self.length_bucketing = length_bucketing
        if premise not in ("chunk", "sentence"):
            raise ModelConfigError(f"model {model!r}: premise must be 'chunk' or 'sentence'")
        self.premise: Premise = premise
        self.device_option = device
        self.dtype = self.transport.dtype
        self.quantize = self.transport.quantize  # "int8": Linear layers in int8, CPU only
        self.use_cache = use_cache
        self.refresh_cache = refresh_cache
        self._id = name or self.model
        self._roles: dict[str, int] = {}
        self._chunker: PassageChunker | None = None

    @property
    def id(self) -> str:
        return self._id

    @property
    def stats(self) -> dict[str, int]:
        """Pairs, batches, tokens and padded tokens the model has scored (not cached)."""
        return self.transport.stats

    @stats.setter
    def stats(self, value: dict[str, int]) -> None:
        self.transport.stats = value

    # ---- loading -------------------------------------------------------------------
    def _roles_of_labels(self) -> dict[str, int]:
        if not self._roles:
            labels = self.transport.labels()
            self._roles = resolve_label_roles(labels, self.label_map, model_id=self.model)
        return self._roles

    def _passage_chunker(self) -> PassageChunker:
        if self._chunker is None:
            self._roles_of_labels()
            self._chunker = PassageChunker(
                self.transport.tokenizer(),
                self.transport.limit(),
                chunk_tokens=self.chunk_tokens,
                chunk_stride=self.chunk_stride,
            )
        return self._chunker

    def preflight(self) -> None:
        """Load now, so a bad path, model or label set fails before the first claim."""
        self._roles_of_labels()
        self.transport.preflight()

    def fingerprint(self) -> str:
        return self.transport.fingerprint()

    def describe(self) -> dict[str, Any]:
        """Everything that decides a verdict, for the run manifest. Never raises: a model
        that cannot be read shows as null fields (and fails in preflight)."""
        try:
            roles = self._roles_of_labels()
            names = self.transport.labels()
            labels: dict[str, Any] | None = {
                role: {"index": i, "name": names.get(i)} for role, i in roles.items()
            }
        except ModelConfigError:
            labels = None
        model = self.transport.describe()
        return {
            "kind": "nli-local",
            "id": self.id,
            "version": self.version,
            "model": self.model,
            "path": self.path,
            "resolved_path": model["resolved_path"],
            "fingerprint": model["fingerprint"],
            "labels": labels,
            "label_source": "label_map" if self.label_map is not None else "config",
            "threshold": self.threshold,
            "aggregation": "max entailment over chunks",
            "max_length": self.max_length,
            "effective_max_length": model["effective_max_length"],
            "premise": self.premise,
            **({"max_premises": self.max_premises} if self.max_premises is not None else {}),
            "chunk_tokens": self.chunk_tokens,
            "chunk_stride": self.chunk_stride,
            "batch_size": self.batch_size,
            "length_bucketing": self.length_bucketing,
            "device": model["device"],
            "dtype": self.dtype,
            **({"quantize": model["quantize"]} if self.quantize is not None else {}),
            "parser_version": None,
            "versions": model["versions"],
            "pairs": {"relation_source": "nli", **describe_relations(formulas=NLI_FORMULAS)},
        }

    # ---- chunking and planning -----------------------------------------------------
    def chunks(self, item: ClaimToVerify) -> list[EvidenceChunk]:
        """The premise windows this claim is checked against (for inspection)."""
        chunker = self._passage_chunker()
        (claim_tokens,) = chunker.claim_lengths([item.claim])
        encoded = chunker.encode([p.text for p in item.evidence])
        return chunker.chunks(item, chunker.size(claim_tokens), encoded, self.premise)

    def _not_judged(self, item: ClaimToVerify, claim_tokens: int) -> Verdict | None:
        """The verdict of a claim the model is not asked about (no evidence, too long)."""
        if not any(p.text.strip() for p in item.evidence):
            return Verdict(
                status=Status.OK,
                label=VerdictLabel.UNSUPPORTED,
                score=0.0,
                error=NO_EVIDENCE,
                attempts=1,
            )
        limit = self._passage_chunker().limit
        if not self._passage_chunker().claim_fits(claim_tokens):
            return Verdict(
                status=Status.TRUNCATED,
                error=f"claim has {claim_tokens} tokens; at most {limit // 2} fit "
                f"(half of max_length {limit})",
                attempts=1,
            )
        return None

    def _plan(
        self, items: Sequence[ClaimToVerify]
    ) -> tuple[list[Verdict | _Plan], list[PairRequest]]:
        """Each claim's chunks, and the distinct (chunk, claim) pairs to score."""
        chunker = self._passage_chunker()
        lengths = chunker.claim_lengths([i.claim for i in items])
        encoded = chunker.encode([p.text for i in items for p in i.evidence])
        plans: list[Verdict | _Plan] = []
        pairs: list[PairRequest] = []
        row_of: dict[tuple[str, str], int] = {}
        for item, claim_tokens in zip(items, lengths, strict=True):
            early = self._not_judged(item, claim_tokens)
            if early is not None:
                plans.append(early)
                continue
            every = chunker.chunks(item, chunker.size(claim_tokens), encoded, self.premise)
            chunks = every[: self.max_premises]  # None: no cap
            for chunk in chunks:
                if (chunk.text, item.claim) not in row_of:  # identical pairs are scored once
                    row_of[(chunk.text, item.claim)] = len(pairs)
                    pairs.append(PairRequest(premise=chunk.text, hypothesis=item.claim))
            rows = [row_of[(c.text, item.claim)] for c in chunks]
            evidence = {p.id: p for p in item.evidence}
            tokens = content_token_set(item.claim)
            plans.append(_Plan(chunks, rows, tokens, evidence, len(every) - len(chunks)))
        return plans, pairs

    # ---- scoring -------------------------------------------------------------------
    def pair_probabilities(
        self, pairs: Sequence[tuple[str, str]], *, batch_size: int | None = None
    ) -> list[dict[str, float]]:
        """Role -> probability for each (premise, hypothesis), in order (blocking; the
        model itself, never the cache). Pairs longer than the model's limit are
        truncated, longest sequence first."""
        roles = self._roles_of_labels()
        rows, _ = self.transport.score_pairs(pairs, batch_size)
        return [{role: row[i] for role, i in roles.items()} for row in rows]

    def _verdict(
        self, chunks: list[EvidenceChunk], probs: list[list[float]], tokens: int
    ) -> Verdict:
        """The verdict rule over a claim's scored windows (pairs are added by _judge)."""
        roles = self._roles_of_labels()
        e_idx, c_idx = roles["entailment"], roles.get("contradiction")
        scored = list(zip(chunks, probs, strict=True))
        best_chunk, best = max(scored, key=lambda cp: cp[1][e_idx])
        p_entail = min(1.0, max(0.0, best[e_idx]))
        p_contra = max(p[c_idx] for _, p in scored) if c_idx is not None else None
        contra = self._strongest_contradiction(scored, c_idx)
        if p_entail > self.threshold:
            label, (chunk, chunk_score) = VerdictLabel.SUPPORTED, (best_chunk, p_entail)
        elif contra is not None:
            label, (chunk, chunk_score) = VerdictLabel.CONTRADICTED, contra
        else:
            label, (chunk, chunk_score) = VerdictLabel.UNSUPPORTED, (best_chunk, p_entail)
        use = EvidenceUse(
            passage_id=chunk.passage_id, span=chunk.span, score=min(1.0, max(0.0, chunk_score))
        )
        return Verdict(
            status=Status.OK,
            label=label,
            score=p_entail,
            evidence=[use],
            parsed={
                "p_entailment": p_entail,
                "p_contradiction": p_contra,
                "chunks": len(chunks),
                "best_chunk_probs": {role: best[i] for role, i in roles.items()},
            },
            usage=Usage(prompt_tokens=tokens, total_tokens=tokens),
            attempts=1,
        )

    def _strongest_contradiction(
        self, scored: list[tuple[EvidenceChunk, list[float]]], c_idx: int | None
    ) -> tuple[EvidenceChunk, float] | None:
        """The chunk whose most likely class is contradiction above the threshold, with
        the highest contradiction probability (the first such on ties)."""
        contra: tuple[EvidenceChunk, float] | None = None
        if c_idx is None:
            return None
        for chunk, p in scored:
            top = max(range(len(p)), key=p.__getitem__)
            wins = top == c_idx and p[c_idx] > self.threshold
            if wins and (contra is None or p[c_idx] > contra[1]):
                contra = (chunk, p[c_idx])
        return contra

    def _judge(self, plan: _Plan, results: list[ModelResult[PairScores]]) -> Verdict:
        """A claim's verdict from its pairs' results, with their accounting."""
        parts = [results[row] for row in plan.rows]
        attempts = max(r.attempts for r in parts)
        scores = [r.response for r in parts if r.response is not None]
        if len(scores) < len(parts):
            error = next(r.error for r in parts if r.response is None)
            return Verdict(status=Status.API_ERROR, error=error, attempts=attempts)
        probs = [s.probabilities for s in scores]
        verdict = self._verdict(plan.chunks, probs, sum(s.tokens for s in scores))
        roles = self._roles_of_labels()
        by_role = [{role: p[i] for role, i in roles.items()} for p in probs]
        verdict.pairs = nli_pairs(plan.chunks, by_role, plan.tokens, plan.passages)
        verdict.pairs_dropped_by_cap = plan.dropped
        verdict.cache_hit = all(r.cache_hit for r in parts)
        verdict.attempts = 0 if verdict.cache_hit else max(attempts, 1)
        return verdict

    async def verify_many(self, items: list[ClaimToVerify]) -> list[Verdict]:
        """Verdicts for many claims in input order, all pairs batched together.

        Each verdict's latency_s is the whole call's wall time (they share batches).
        A failure during inference yields api_error verdicts; a model that cannot be
        loaded raises ModelConfigError.
        """
        if not items:
            return []
        started = time.perf_counter()
        try:
            plans, pairs = await self.transport.gate.run(self._plan, items)
        except ModelConfigError:
            raise
        except Exception as exc:  # a tokenizer failure: every claim's recorded api_error
            error = f"{type(exc).__name__}: {exc}"
            plans = [Verdict(status=Status.API_ERROR, error=error, attempts=1) for _ in items]
            pairs = []
        results = await self.classifier.complete_many(
            pairs, use_cache=self.use_cache, refresh_cache=self.refresh_cache
        )
        verdicts = [p if isinstance(p, Verdict) else self._judge(p, results) for p in plans]
        elapsed = time.perf_counter() - started
        for v in verdicts:
            v.latency_s = elapsed
        return verdicts

    async def verify(self, item: ClaimToVerify) -> Verdict:
        return (await self.verify_many([item]))[0]
