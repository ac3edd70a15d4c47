"""The four LLM verifier kinds as registered factories: internal, context, nli, retrieval.

Each kind's block keys are its params model: endpoint settings, `model`, `prompt`
(a default per kind), `parser`, `threshold`, `name`; `retrieval` adds its corpus.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from assay.core.building import BuildContext
from assay.core.registry import VERIFIERS
from assay.core.settings import EndpointOverrides
from assay.core.verification import Verifier
from assay.inputs import PathText
from assay.verifiers._llm import LLMVerifier, Retriever, VerifierKind, prompt_tasks

DEFAULT_THRESHOLD = 0.8


class LLMVerifierParams(EndpointOverrides):
    """What every LLM verifier block may set."""

    model: str = Field(description="The model id (litellm provider/model, or hf/<dir>).")
    prompt: str = Field(default="verify-context@1", description="Prompt id[@version].")
    parser: Literal["strict", "legacy", "legacy-factscore", "legacy-medscore"] = Field(
        default="strict",
        description="strict, or a published tool's True/False rule for comparability "
        "(legacy = legacy-factscore).",
    )
    threshold: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="nli: entailment probability above which a claim is supported (unset: 0.8).",
    )
    name: str | None = Field(
        default=None, description="The id its records carry instead of the default one."
    )


class InternalParams(LLMVerifierParams):
    prompt: str = Field(
        default="verify-internal@1", description="The prompt (id@version) the verifier asks."
    )


class ContextParams(LLMVerifierParams):
    prompt: str = Field(
        default="verify-context@1", description="The prompt (id@version) the verifier asks."
    )


class NLIParams(LLMVerifierParams):
    prompt: str = Field(
        default="nli-entailment@1", description="The prompt (id@version) the verifier asks."
    )


class RetrievalParams(LLMVerifierParams):
    prompt: str = Field(
        default="verify-context@1", description="The prompt (id@version) the verifier asks."
    )
    corpus: PathText = Field(description="Passages JSONL, relative to the spec.")
    top_k: int = Field(default=10, ge=1, le=1000, description="Passages retrieved per claim.")
    dense_model: PathText | None = Field(default=None, description="Local embedding model dir.")


def llm_verifier(
    kind: VerifierKind,
    params: LLMVerifierParams,
    ctx: BuildContext,
    retriever: Retriever | None = None,
    top_k: int = 10,
) -> LLMVerifier:
    """An `LLMVerifier` of `kind` from its block: the shared client, prompt and decoding."""
    prompt = ctx.prompt(params.prompt, tasks=prompt_tasks(kind), role="verifier")
    return LLMVerifier(
        ctx.client(params, params.model),
        prompt,
        kind=kind,
        decoding=ctx.decoding(params),
        parser=params.parser,
        threshold=DEFAULT_THRESHOLD if params.threshold is None else params.threshold,
        retriever=retriever,
        top_k=top_k,
        name=params.name,
        use_cache=ctx.use_cache,
        refresh_cache=ctx.refresh_cache,
    )


@VERIFIERS.register("internal", description="the model's own knowledge; no evidence passed")
def internal(params: InternalParams, ctx: BuildContext) -> Verifier:
    return llm_verifier("internal", params, ctx)


@VERIFIERS.register("context", description="a model over the evidence the dataset provides")
def context(params: ContextParams, ctx: BuildContext) -> Verifier:
    return llm_verifier("context", params, ctx)


@VERIFIERS.register("nli", description="an NLI prompt over the provided evidence")
def nli(params: NLIParams, ctx: BuildContext) -> Verifier:
    return llm_verifier("nli", params, ctx)


@VERIFIERS.register("retrieval", description="a model over BM25 (+ dense_model) hits in a corpus")
def retrieval(params: RetrievalParams, ctx: BuildContext) -> Verifier:
    return llm_verifier("retrieval", params, ctx, corpus_retriever(params, ctx), params.top_k)


def corpus_retriever(params: RetrievalParams, ctx: BuildContext) -> Retriever:
    """BM25 over the corpus, fused with dense retrieval when `dense_model` is set."""
    from assay.retrieval import (
        BM25Retriever,
        DenseRetriever,
        HybridRetriever,
        TransformersEmbedder,
        load_corpus,
    )

    corpus = load_corpus(ctx.resolve(params.corpus))
    bm25 = BM25Retriever(corpus)
    if not params.dense_model:
        return bm25
    return HybridRetriever(bm25, DenseRetriever(corpus, TransformersEmbedder(params.dense_model)))
